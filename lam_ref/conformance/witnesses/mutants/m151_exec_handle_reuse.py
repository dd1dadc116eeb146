"""Mutant (exec server): a new session's handle is the number of open sessions, so after a close the
next session takes the handle of one still open and replaces it (docs/conformance.md §6: a handle
names one live session)."""

from __future__ import annotations

import sys

from ._exec import ServerState, exec_command, serve

BUG = "session handle = number of open sessions (reused while another session is open)"
VIOLATES = "ONLINE"
CLASS = "protocol state"
IDIOM = "JavaScript: const id = sessions.size; sessions.set(id, s)"
NEEDS = "open, open, close the first, open (exec)"
CAUGHT_BY: tuple[str, ...] = ("online.session_handles",)
EXEC = exec_command(__name__)


class ReusedHandles(ServerState):
    def new_handle(self):
        return len(self.sessions)


if __name__ == "__main__":
    sys.exit(serve(ReusedHandles))

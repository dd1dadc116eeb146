"""Control (must pass, exec server): every field docs/conformance.md §6 leaves open, read the other way
than the reference server reads it. Session handles are strings ("s1", "s2", ...) instead of
integers; ``hello``'s ``parts`` is an object of booleans instead of a list, its ``version`` a number,
without ``target`` or ``expected_failures``; the requested ``protocol`` is not checked (the suite
always sends 1); ``session_close`` answers ``{"closed": true}`` instead of ``{}``."""

from __future__ import annotations

import sys

from ..mutants._exec import ServerState, exec_command, serve

CONTROL = True
ALLOWED = "exec server taking the other reading of every open protocol field (string handles, parts as an object, ...)"
EXEC = exec_command(__name__)


class OtherReadings(ServerState):
    def new_handle(self):
        self.next_session += 1
        return f"s{self.next_session}"

    def hello(self, info, msg):
        out = {k: v for k, v in info.items() if k not in ("target", "expected_failures")}
        out["parts"] = {p: p in info["parts"] for p in ("substitute", "online", "lines", "codec")}
        out["version"] = 3
        return out

    def close_result(self, handle):
        return {"closed": True}


if __name__ == "__main__":
    sys.exit(serve(OtherReadings))

"""Exec-server variants: the reference server (:mod:`lam_ref.conformance.server`) serving lam_ref's
adapter, with one of the choices docs/conformance.md §6 leaves to a server made differently.

A variant module sets ``EXEC`` (the command that starts it; :func:`lam_ref.conformance.impl.load_implementation`
checks such a module through that process) and serves when run with ``python -m``. A control takes
another allowed reading of the protocol; a mutant a wrong one (issue 38: float32 request ids,
handles reused while a session is open).
"""

from __future__ import annotations

import shlex
import sys

from ...server import ServerState, main

__all__ = ["SERVED", "ServerState", "exec_command", "serve"]

#: The implementation every variant serves (fast, all profiles the protocol carries).
SERVED = "lam_ref.conformance.adapter"


def exec_command(module: str) -> str:
    """The command that runs the variant ``module`` as an exec server."""
    return f"{shlex.quote(sys.executable)} -m {module}"


def serve(state_class: type[ServerState]) -> int:
    """Serve :data:`SERVED` on stdin/stdout with ``state_class``'s hooks."""
    return main(["--impl", SERVED], state_class)

"""Reference exec server: any Python SPEC §15 module behind the line protocol (default: lam_ref).

Run ``python -m lam_ref.conformance.server [--impl pkg.module]`` and the suite can check it with
``--lam-impl="exec:python -m lam_ref.conformance.server"``. It is the worked example of
:mod:`lam_ref.conformance.protocol` for authors of servers in other languages: read a line,
decode the arrays, call, encode the answer, flush; errors of bad input are ``ValueError``.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import Any, TextIO

import numpy as np

from . import protocol as P
from ._implementation import EXEC_PARTS
from .impl import DEFAULT_IMPL, Implementation, load_implementation
from .profiles import PROFILES

__all__ = ["ServerState", "handle", "main", "serve"]


class ServerState:
    """What one server process holds: the implementation and its open sessions by handle.

    The hooks (:meth:`new_handle`, :meth:`reply_id`, :meth:`hello`, :meth:`close_result`) are the
    choices docs/conformance.md §6 leaves to a server; the variants of
    :mod:`lam_ref.conformance.witnesses.mutants` override them (a control takes the other allowed reading,
    a mutant a wrong one)."""

    def __init__(self, impl: Implementation) -> None:
        self.impl = impl
        self.sessions: dict[Any, Any] = {}
        self.next_session = 0

    def new_handle(self) -> Any:
        """A handle no live session holds (here: 0, 1, 2, ..., never reused)."""
        sid = self.next_session
        self.next_session += 1
        return sid

    def reply_id(self, rid: Any) -> Any:
        """The ``id`` of the reply: the request's, unchanged."""
        return rid

    def hello(self, info: dict[str, Any], msg: dict[str, Any]) -> dict[str, Any]:
        """The ``hello`` result; this server refuses any protocol but 1 (a server MAY)."""
        if msg.get("protocol") != P.PROTOCOL_VERSION:
            raise P.ProtocolError(f"protocol {msg.get('protocol')!r} requested; this server speaks {P.PROTOCOL_VERSION}")
        return info

    def close_result(self, handle: Any) -> dict[str, Any]:
        """The ``session_close`` result (the suite reads none of it)."""
        return {}


def _hello(state: ServerState, msg: dict[str, Any]) -> dict[str, Any]:
    impl = state.impl
    return state.hello({
        "protocol": P.PROTOCOL_VERSION,
        "name": impl.name,
        "version": impl.version,
        "parts": [p for p, ok in impl.parts.items() if ok and p in EXEC_PARTS],
        # the profiles the exec protocol can check (session files are in-process only)
        "profiles": sorted(p for p in impl.profiles if all(part in EXEC_PARTS for part in PROFILES[p].parts)),
        "complete": impl.complete,
        "stub_prefix": impl.stub_prefix,
        "target": impl.target or "python in-process behind the exec server",
        "expected_failures": impl.expected_failures,
        **({"budget": impl.budget} if impl.budget else {}),
    }, msg)


def _pi(value: Any) -> dict[str, Any]:
    arr = np.asarray(value)
    # send what the implementation returned; the suite judges dtype and values
    return {"pi": P.encode_array(arr, "int64" if arr.dtype.kind in "iub" else "float32")}


def handle(state: ServerState, msg: dict[str, Any]) -> dict[str, Any]:
    """The result object for one request (raises on bad input or a failing implementation)."""
    op = msg.get("op")
    impl = state.impl
    if op == "hello":
        return _hello(state, msg)
    if op == "substitute":
        return _pi(impl.substitute(P.decode_array(msg.get("embeddings"), "embeddings"), P.decode_scalar(msg.get("t"))))
    if op == "session_open":
        session = impl.online_session(P.decode_scalar(msg.get("t")))
        sid = state.new_handle()
        state.sessions[sid] = session
        return {"session": sid}
    if op == "session_admit":
        session = state.sessions.get(msg.get("session"))
        if session is None:
            raise P.ProtocolError(f"unknown session {msg.get('session')!r}")
        return _pi(session.admit(P.decode_array(msg.get("embeddings"), "embeddings")))
    if op == "session_close":
        state.sessions.pop(msg.get("session"), None)
        return state.close_result(msg.get("session"))
    if op == "dedup_lines":
        records = msg.get("records")
        if not isinstance(records, list):
            raise P.ProtocolError(f"records must be a list, got {type(records).__name__}")
        return {"records": list(impl.dedup_lines(records))}
    if op == "codec_encode":
        return {"data": P.encode_bytes(impl.codec_encode(P.decode_array(msg.get("x"), "x"), P.decode_scalar(msg.get("eb"))))}
    if op == "codec_decode":
        return {"x": P.encode_array(impl.codec_decode(P.decode_bytes(msg.get("data"))), "float32")}
    raise P.ProtocolError(f"unknown op {op!r}")


def serve(impl: Implementation, stdin: TextIO, stdout: TextIO, state: ServerState | None = None) -> int:
    """Answer requests until ``shutdown`` or end of input. Returns the exit code."""
    state = state if state is not None else ServerState(impl)
    for line in stdin:
        if not line.strip():
            continue
        rid: Any = None
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise P.ProtocolError("a request must be a JSON object")
            rid = msg.get("id")
            if msg.get("op") == "shutdown":
                stdout.write(P.dumps({"id": state.reply_id(rid), "ok": True, "result": {}}))
                stdout.flush()
                return 0
            reply = {"id": state.reply_id(rid), "ok": True, "result": handle(state, msg)}
        except ValueError as exc:  # bad input (LamValueError, ProtocolError, JSON errors): a rejection
            reply = {"id": state.reply_id(rid), "ok": False, "error": {"type": "ValueError", "message": str(exc)}}
        except Exception as exc:  # the implementation failed: report, keep serving
            traceback.print_exc(file=sys.stderr)
            reply = {"id": state.reply_id(rid), "ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}
        stdout.write(P.dumps(reply))
        stdout.flush()
    return 0


def main(argv: list[str] | None = None, state_class: type[ServerState] = ServerState) -> int:
    """``python -m lam_ref.conformance.server [--impl MODULE]``; ``state_class`` picks a variant's hooks."""
    parser = argparse.ArgumentParser(prog="python -m lam_ref.conformance.server", description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default=DEFAULT_IMPL, help=f"Python module implementing SPEC §15 (default {DEFAULT_IMPL})")
    args = parser.parse_args(argv)
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # a stray print() in the implementation must not corrupt the protocol
    impl = load_implementation(args.impl)
    return serve(impl, sys.stdin, protocol_out, state_class(impl))


if __name__ == "__main__":
    sys.exit(main())

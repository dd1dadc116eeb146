"""The exec line protocol (SPEC §15; docs/conformance.md §6): the reference server passes, broken servers fail clearly and fast.

Broken servers are tiny Python scripts written here; each must produce a clear error (naming
the command, the operation and what went wrong) within a bounded time — never a hang.
"""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
import time

import numpy as np
import pytest

from lam_ref.conformance import protocol as P
from lam_ref.conformance import run_checks
from lam_ref.conformance.exec_client import (
    ExecCrashed,
    ExecImplementation,
    ExecProtocolError,
    ExecRemoteError,
    ExecTimeout,
    RemoteValueError,
)
from lam_ref.geometry import LamValueError
from lam_ref.substitution import oracle

PY = shlex.quote(sys.executable)
SERVER = f"{PY} -m lam_ref.conformance.server"

_PRELUDE = """
import json, sys, time
def reply(msg, result=None, ok=True, error=None):
    out = {"id": msg["id"], "ok": ok}
    if ok: out["result"] = result or {}
    else: out["error"] = error
    sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
HELLO = {"protocol": 1, "name": "broken", "version": "0", "parts": ["substitute", "online"], "complete": True}
"""


def _server(tmp_path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(_PRELUDE + textwrap.dedent(body), encoding="utf-8")
    return f"{PY} {shlex.quote(str(path))}"


def _e() -> np.ndarray:
    return np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32)


# ---------------------------------------------------------------------------------- protocol
def test_array_encoding_round_trips_and_is_little_endian():
    """Arrays travel as base64 of little-endian bytes with their shape (docs/conformance.md §6)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    msg = P.encode_array(a, "float32")
    assert msg["shape"] == [2, 3] and msg["dtype"] == "float32", f"bad header {msg}"
    assert np.array_equal(P.decode_array(json.loads(json.dumps(msg))), a), "float32 round trip changed values"
    raw = P.decode_bytes(msg["data"])
    assert raw[:4] == np.float32(0).tobytes() and raw[4:8] == (np.float32(1) / np.float32(7)).astype("<f4").tobytes(), (
        "array data must be little-endian float32 in C order"
    )
    pi = np.array([0, 0, 2, -1], dtype=np.int64)
    assert np.array_equal(P.decode_array(P.encode_array(pi, "int64")), pi), "int64 round trip changed values"


@pytest.mark.parametrize(
    "bad, needle",
    [
        ({"dtype": "float16", "shape": [1], "data": ""}, "dtype"),
        ({"dtype": "int64", "shape": [2], "data": "AAAA"}, "bytes"),
        ({"dtype": "int64", "shape": [-1], "data": ""}, "shape"),
        ({"dtype": "int64", "shape": [1], "data": "***"}, "base64"),
        ([1, 2], "object"),
    ],
)
def test_bad_array_messages_are_rejected(bad, needle):
    """A malformed array header is a ProtocolError naming what is wrong."""
    with pytest.raises(P.ProtocolError, match=needle):
        P.decode_array(bad)


def test_non_finite_scalars_travel_as_strings():
    """JSON has no NaN: t = nan/inf is sent as a string so a server can reject it (SPEC §2)."""
    for x in (float("nan"), float("inf"), float("-inf")):
        enc = P.encode_scalar(x)
        assert isinstance(enc, str), f"{x!r} must be encoded as a string, got {enc!r}"
        back = P.decode_scalar(json.loads(P.dumps({"t": enc}))["t"])
        assert (np.isnan(back) and np.isnan(x)) or back == x, f"{x!r} came back as {back!r}"
    assert P.encode_scalar(np.float32(0.5)) == 0.5 and P.decode_scalar(0.25) == 0.25, "finite scalars pass unchanged"


# ----------------------------------------------------------------------------- reference server
def test_reference_server_answers_like_the_oracle():
    """The reference server (lam_ref behind the protocol) returns the oracle's π and rejects bad input
    with a ValueError that carries lam_ref's message."""
    impl = ExecImplementation(SERVER, timeout=20)
    try:
        assert impl.parts == {"substitute": True, "online": True, "lines": True, "codec": True, "session": False, "kept": False}, (
            f"parts {impl.parts} (session files are in-process only)"
        )
        assert impl.profiles == {"core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2"}, (
            f"the server passes on the adapter's profiles the protocol can check (SPEC §15.4), got {sorted(impl.profiles)}"
        )
        rng = np.random.default_rng(5)
        e = rng.standard_normal((50, 6))
        e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
        got = impl.substitute(e, 0.5)
        assert got.dtype == np.int64 and np.array_equal(got, oracle(e, 0.5).pi), "exec substitute differs from the oracle"
        s = impl.online_session(0.5)
        online = np.concatenate([s.admit(e[:20]), s.admit(e[20:])])
        assert np.array_equal(online, got), "exec online session differs from batch"
        with pytest.raises(RemoteValueError, match="row 1"):
            impl.substitute(np.array([[1, 0], [2, 0]], dtype=np.float32), 0.5)
        with pytest.raises(ValueError, match="nan"):
            impl.substitute(_e(), float("nan"))
        blob = impl.codec_encode(np.linspace(0, 1, 40, dtype=np.float32), 1e-3)
        assert impl.codec_decode(blob).shape == (40,), "codec round trip through the server lost values"
    finally:
        impl.close()


def test_part_of_the_suite_runs_through_the_reference_server():
    """docs/conformance.md §6: the suite (every area, at a fifth of the default example counts) passes through
    ``exec:python -m lam_ref.conformance.server``."""
    results = run_checks(f"exec:{SERVER}", scale=0.2, exec_timeout=30)
    from lam_ref.conformance.verdicts import EXEC_UNREACHABLE

    unreachable = [r.id for r in results if r.outcome == "not_applicable"]
    assert sorted(unreachable) == sorted(i for i in EXEC_UNREACHABLE if i in {r.id for r in results}), (
        f"layout, byte-order and fresh-result checks are not applicable over exec (issue 38 §5): {unreachable}"
    )
    undeclared = [r.id for r in results if r.outcome == "skipped" and ("not declared" in (r.reason or "") or "'kept' not provided" in (r.reason or ""))]
    assert all(i.startswith(("kept", "substitute_f32", "vectors.session-")) for i in undeclared), f"unexpected profile skips: {undeclared}"
    bad = [(r.id, r.message) for r in results if r.outcome not in ("passed", "not_applicable") and r.id not in undeclared
           and not r.id.startswith(("session.", "vectors.session-"))]
    assert not bad, f"checks not passing through the exec server: {bad}"
    session = [(r.outcome, r.reason) for r in results if r.id.startswith("session.")]
    assert all(o == "skipped" and "session" in (why or "") for o, why in session), (
        f"session-v1 checks must skip through the exec protocol, naming the missing part: {session}"
    )
    assert len(results) >= 16, f"expected the whole suite, ran {len(results)}"


# ------------------------------------------------------------------------------ broken servers
def _expect(exc_type, call, needles, limit_s):
    """Run call, expect exc_type with every needle in its message, within limit_s (generous: CI
    machines are slow; the point is that nothing hangs)."""
    start = time.monotonic()
    with pytest.raises(exc_type) as info:
        call()
    elapsed = time.monotonic() - start
    message = str(info.value)
    for needle in needles:
        assert needle in message, f"error message lacks {needle!r}: {message}"
    assert elapsed < limit_s, f"took {elapsed:.1f} s, the limit is {limit_s} s"
    return message


def test_crashing_server_gives_a_clear_failure(tmp_path):
    """A server that dies mid-request: ExecCrashed with the exit code, the op and its stderr."""
    cmd = _server(tmp_path, "crash", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                sys.stderr.write("segmentation fault (simulated)\\n"); sys.stderr.flush()
                sys.exit(3)
    """)
    impl = ExecImplementation(cmd, timeout=5)
    try:
        _expect(ExecCrashed, lambda: impl.substitute(_e(), 0.5), ["exited with code 3", "'substitute'", "segmentation fault"], 20)
        # the next call starts a fresh process (and crashes again): no stale state, no hang
        _expect(ExecCrashed, lambda: impl.substitute(_e(), 0.5), ["exited with code 3"], 20)
        assert impl.restarts == 1, f"expected one restart, saw {impl.restarts}"
    finally:
        impl.close()


def test_garbage_printing_server_gives_a_protocol_error(tmp_path):
    """A server that prints a non-JSON line (e.g. a log line on stdout): ExecProtocolError quoting it."""
    cmd = _server(tmp_path, "garbage", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                print("computing distances on GPU 0 ...", flush=True)
    """)
    impl = ExecImplementation(cmd, timeout=5)
    try:
        _expect(ExecProtocolError, lambda: impl.substitute(_e(), 0.5), ["not JSON", "computing distances on GPU 0", "stderr"], 20)
    finally:
        impl.close()


def test_hanging_server_times_out(tmp_path):
    """A server that never answers: ExecTimeout after the configured deadline; the process is killed."""
    cmd = _server(tmp_path, "hang", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                time.sleep(3600)
    """)
    impl = ExecImplementation(cmd, timeout=1.0)
    try:
        server = impl._server
        _expect(ExecTimeout, lambda: impl.substitute(_e(), 0.5), ["did not answer", "within 1 s", "killed"], 15)
        assert server is not None and server.proc.poll() is not None, "the hung process must be killed"
    finally:
        impl.close()


def test_server_that_hangs_before_hello_times_out(tmp_path):
    """Startup is bounded too (``startup_timeout``)."""
    cmd = _server(tmp_path, "mute", "time.sleep(3600)\n")
    _expect(ExecTimeout, lambda: ExecImplementation(cmd, timeout=1.0, startup_timeout=1.0), ["'hello'", "within 1 s"], 15)


def test_server_that_reads_nothing_cannot_block_a_large_request(tmp_path):
    """A server that never reads stdin while the suite sends a multi-megabyte request: the blocked
    write happens in a helper thread, the deadline still fires."""
    cmd = _server(tmp_path, "deaf", """
        msg = json.loads(sys.stdin.readline())
        reply(msg, HELLO)
        time.sleep(3600)
    """)
    impl = ExecImplementation(cmd, timeout=1.0)
    try:
        big = np.zeros((40_000, 32), dtype=np.float32)
        big[:, 0] = 1
        _expect(ExecTimeout, lambda: impl.substitute(big, 0.5), ["did not answer"], 20)
    finally:
        impl.close()


def test_stderr_flood_does_not_deadlock(tmp_path):
    """A server writing megabytes to stderr still gets through (stderr is drained continuously)."""
    cmd = _server(tmp_path, "chatty", """
        for line in sys.stdin:
            msg = json.loads(line)
            sys.stderr.write("x" * 2_000_000 + "\\n"); sys.stderr.flush()
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                reply(msg, {"pi": {"dtype": "int64", "shape": [3], "data": "AAAAAAAAAAAAAAAAAAAAAAIAAAAAAAAA"}})
    """)
    impl = ExecImplementation(cmd, timeout=10)
    try:
        assert impl.substitute(_e(), 0.5).tolist() == [0, 0, 2], "reply after a stderr flood was not read"
    finally:
        impl.close()


def test_wrong_reply_id_and_remote_errors(tmp_path):
    """A reply with the wrong id is a protocol error; an error reply of another type than ValueError is
    ExecRemoteError (a failure, not a correct rejection)."""
    cmd = _server(tmp_path, "confused", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            elif msg["op"] == "substitute":
                msg["id"] += 100; reply(msg, {})
            else:
                reply(msg, ok=False, error={"type": "RuntimeError", "message": "CUDA out of memory"})
    """)
    impl = ExecImplementation(cmd, timeout=5)
    try:
        _expect(ExecProtocolError, lambda: impl.substitute(_e(), 0.5), ["same id"], 20)
        msg = _expect(ExecRemoteError, lambda: impl.online_session(0.5), ["RuntimeError", "CUDA out of memory"], 20)
        assert not isinstance(ExecRemoteError(msg), ValueError), "a remote crash must never look like a ValueError"
    finally:
        impl.close()


def test_bad_commands_are_reported():
    """An empty command or a program that does not exist: a clear error, not a traceback deep inside."""
    with pytest.raises(LamValueError, match="needs a command"):
        ExecImplementation("   ")
    with pytest.raises(ExecCrashed, match="could not be started"):
        ExecImplementation("/nonexistent/lam-server --flag", timeout=2)


def test_a_crash_fails_the_check_and_the_run_goes_on(tmp_path):
    """Through run_checks, a server crashing on substitute makes the checks fail (ExecCrashed, with the
    stderr tail) in bounded time; the run completes and reports every check."""
    cmd = _server(tmp_path, "crash2", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                sys.stderr.write("fatal: unsupported dimension\\n"); sys.stderr.flush(); sys.exit(9)
    """)
    start = time.monotonic()
    results = run_checks(f"exec:{cmd}", select=["substitute.exact_ties", "substitute.contract", "online."], exec_timeout=5)
    elapsed = time.monotonic() - start
    outcomes = {r.id: (r.outcome, r.exception) for r in results}
    assert outcomes["substitute.exact_ties"] == ("failed", "ExecCrashed"), f"got {outcomes}"
    assert all(o == "failed" for o, _ in outcomes.values() if o != "not_applicable"), f"every check should fail: {outcomes}"
    assert "unsupported dimension" in results[0].message, f"stderr tail missing: {results[0].message}"
    assert elapsed < 60, f"a crashing server took {elapsed:.0f} s to get through 4 checks"


def test_server_writing_without_newlines_fails_the_request_with_bounded_memory(tmp_path, monkeypatch):
    """Issue 39 §4: a server that answers with bytes and never a newline (it drove the client to
    5.6 GB in 3 s) fails the request with ExecProtocolError once the line passes
    ``MAX_LINE_BYTES``; the client reads no further and kills the process."""
    import lam_ref.conformance.exec_client as ec

    monkeypatch.setattr(ec, "MAX_LINE_BYTES", 1 << 20)
    cmd = _server(tmp_path, "flood", """
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["op"] == "hello":
                reply(msg, HELLO)
            else:
                for _ in range(64):  # 16 MiB, no newline, then silence
                    sys.stdout.write("x" * (1 << 18)); sys.stdout.flush()
                time.sleep(60)
    """)
    impl = ExecImplementation(cmd, timeout=20)
    try:
        _expect(ExecProtocolError, lambda: impl.substitute(_e(), 0.5), ["without a newline", "'substitute'"], 15)
    finally:
        impl.close()

"""The suite's side of the exec protocol: an implementation running as a separate process (SPEC §15).

``--lam-impl=exec:COMMAND`` makes :class:`ExecImplementation` start ``COMMAND`` (split like a shell
would, no shell), say ``hello`` and forward every SPEC §15 call as one JSON line
(:mod:`lam_ref.conformance.protocol`). Nothing here can hang: every request has a deadline
(default 10 s, ``timeout=``, ``--lam-exec-timeout`` or ``$LAM_EXEC_TIMEOUT``), reading and
writing happen in helper threads, and stderr is drained continuously (its tail goes into errors).

Failures are :class:`ExecError` subclasses (never ``ValueError``, so a crash is never mistaken
for a correct rejection of bad input): :class:`ExecTimeout`, :class:`ExecCrashed`,
:class:`ExecProtocolError`, :class:`ExecRemoteError`. A server's ``ValueError`` reply becomes
:class:`RemoteValueError` (a ``ValueError``). After a failure the process is killed and the next
call starts a fresh one, so one bad test does not poison the rest of the run.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from typing import Any

import numpy as np

from ..geometry import LamValueError
from . import protocol as P
from ._implementation import EXEC_PARTS, PART_ATTRIBUTES, Implementation, read_budget

__all__ = [
    "DEFAULT_TIMEOUT",
    "ExecCrashed",
    "ExecError",
    "ExecImplementation",
    "ExecProtocolError",
    "ExecRemoteError",
    "ExecTimeout",
    "RemoteValueError",
]

DEFAULT_TIMEOUT = 10.0
#: The longest reply line read from a server (bytes): a server that writes without newlines cannot
#: drive the client's memory up; a longer line fails the request (issue 39 §4). Replies are one JSON
#: object per line; the largest the suite asks for (65,537-row maps) is a few MiB.
MAX_LINE_BYTES = 64 << 20
#: Reply lines held unread at most (a server printing lines faster than they are read waits).
_MAX_QUEUED_LINES = 1024
_EOF = object()
_TOO_LONG = object()


class ExecError(RuntimeError):
    """The exec server failed (did not answer, died, broke the protocol or raised a non-ValueError)."""


class ExecTimeout(ExecError):
    """No answer within the deadline; the process was killed."""


class ExecCrashed(ExecError):
    """The process exited (or could not start) while a request was pending."""


class ExecProtocolError(ExecError):
    """The process wrote something that is not a valid reply."""


class ExecRemoteError(ExecError):
    """The server replied ``ok: false`` with an error type other than ``ValueError``."""


class RemoteValueError(LamValueError):
    """The server rejected the input with a ``ValueError`` (the correct answer to bad input)."""


def _timeout_from_env() -> float:
    raw = os.environ.get("LAM_EXEC_TIMEOUT")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError as exc:
        raise LamValueError(f"LAM_EXEC_TIMEOUT must be a number of seconds, got {raw!r}") from exc
    if not value > 0:
        raise LamValueError(f"LAM_EXEC_TIMEOUT must be positive, got {raw!r}")
    return value


class _Server:
    """One running process with reader threads for stdout (lines) and stderr (tail)."""

    def __init__(self, argv: list[str], command: str) -> None:
        self.command = command
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ExecCrashed(f"exec server {command!r} could not be started: {exc}") from exc
        self.lines: queue.Queue[Any] = queue.Queue(maxsize=_MAX_QUEUED_LINES)
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self.next_id = 0
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        limit = MAX_LINE_BYTES
        try:
            for line in iter(lambda: self.proc.stdout.readline(limit + 1), b""):
                if len(line) > limit and not line.endswith(b"\n"):  # no newline within the limit: stop reading
                    self.lines.put(_TOO_LONG)
                    return
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(_EOF)

    def _read_stderr(self) -> None:
        try:
            for line in iter(self.proc.stderr.readline, b""):
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass

    def tail(self) -> str:
        time.sleep(0.05)  # let the stderr thread catch up with a process that just died
        lines = list(self.stderr_tail)[-12:]
        return ("; stderr tail:\n    " + "\n    ".join(lines)) if lines else "; no stderr output"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def request(self, op: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        line = P.dumps({"id": rid, "op": op, **args}).encode("utf-8")
        write_error: list[BaseException] = []

        def write() -> None:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (OSError, ValueError) as exc:
                write_error.append(exc)

        threading.Thread(target=write, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                raw = self.lines.get(timeout=max(remaining, 0.0)) if remaining > 0 else self.lines.get_nowait()
            except queue.Empty:
                self.kill()
                raise ExecTimeout(
                    f"exec server {self.command!r} did not answer op {op!r} within {timeout:g} s; the process was killed"
                    + self.tail()
                ) from None
            if raw is _TOO_LONG:
                self.kill()
                raise ExecProtocolError(
                    f"exec server {self.command!r} wrote more than {MAX_LINE_BYTES} bytes without a newline while "
                    f"handling op {op!r}; the process was killed (protocol replies are JSON objects, one per line)"
                )
            if raw is _EOF:
                try:
                    code = self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
                self.kill()
                how = f"exited with code {code}" if code is not None else "closed its stdout"
                raise ExecCrashed(f"exec server {self.command!r} {how} while handling op {op!r}" + self.tail())
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue  # tolerate blank lines
            try:
                msg = json.loads(text)
            except json.JSONDecodeError:
                self.kill()
                raise ExecProtocolError(
                    f"exec server {self.command!r} printed a line that is not JSON while handling op {op!r}: "
                    f"{text[:200]!r} (protocol replies are JSON objects, one per line; logs belong on stderr)"
                ) from None
            if not isinstance(msg, dict) or msg.get("id") != rid or not isinstance(msg.get("ok"), bool):
                self.kill()
                raise ExecProtocolError(
                    f"exec server {self.command!r} sent {text[:200]!r} in reply to op {op!r} id {rid}; "
                    "expected an object with the same id and a boolean ok"
                )
            if msg["ok"]:
                result = msg.get("result", {})
                if not isinstance(result, dict):
                    self.kill()
                    raise ExecProtocolError(f"exec server {self.command!r}: result of op {op!r} is not an object: {text[:200]!r}")
                return result
            err = msg.get("error") or {}
            etype = str(err.get("type", "Error")) if isinstance(err, dict) else "Error"
            emsg = str(err.get("message", "")) if isinstance(err, dict) else str(err)
            if etype == "ValueError":
                raise RemoteValueError(emsg or f"exec server rejected op {op!r} with ValueError")
            raise ExecRemoteError(f"exec server {self.command!r} failed op {op!r} with {etype}: {emsg}")


class ExecSession:
    """An Algorithm 1 session living in the server (``session_open`` / ``session_admit`` /
    ``session_close``); its handle is the server's, an integer or a string, sent back unchanged."""

    def __init__(self, owner: ExecImplementation, handle: int | str, generation: int) -> None:
        self._owner, self._handle, self._generation = owner, handle, generation

    @property
    def handle(self) -> int | str:
        """The server's handle of this session (docs/conformance.md §6)."""
        return self._handle

    def _live(self) -> None:
        if self._generation != self._owner._generation:
            raise ExecError("this online session was lost: the exec server was restarted after an earlier failure")

    def admit(self, embeddings: Any) -> np.ndarray:
        self._live()
        res = self._owner._call("session_admit", {"session": self._handle, "embeddings": P.encode_array(embeddings, "float32")})
        return self._owner._array(res, "pi", "session_admit")

    def close(self) -> None:
        """``session_close``: the server may forget the session (its reply object is not read)."""
        self._live()
        self._owner._call("session_close", {"session": self._handle})


class ExecImplementation(Implementation):
    """An implementation behind ``exec:COMMAND`` (see :mod:`lam_ref.conformance.protocol`)."""

    kind = "exec"

    def __init__(self, command: str, *, timeout: float | None = None, startup_timeout: float | None = None) -> None:
        command = command.strip()
        if not command:
            raise LamValueError("lam_impl 'exec:' needs a command after the colon, got an empty command")
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise LamValueError(f"lam_impl exec command {command!r} cannot be split into arguments: {exc}") from exc
        self.command = command
        self.spec = f"exec:{command}"
        self.timeout = float(timeout) if timeout is not None else _timeout_from_env()
        if not self.timeout > 0:
            raise LamValueError(f"exec timeout must be positive, got {timeout!r}")
        self.startup_timeout = float(startup_timeout) if startup_timeout is not None else max(self.timeout, 30.0)
        self._server: _Server | None = None
        self._generation = 0
        self._lock = threading.Lock()
        self.expected_failures = {}
        self.restarts = 0
        self._hello(self._ensure())

    # process management ------------------------------------------------------------------
    def _ensure(self) -> dict[str, Any]:
        if self._server is not None and self._server.alive():
            return {}
        if self._server is not None:
            self._server.kill()
            self.restarts += 1
        self._generation += 1
        self._server = _Server(self.argv, self.command)
        try:
            return self._server.request("hello", {"protocol": P.PROTOCOL_VERSION}, self.startup_timeout)
        except ExecError:
            self._server.kill()
            self._server = None
            raise

    def _hello(self, info: dict[str, Any]) -> None:
        if info.get("protocol") != P.PROTOCOL_VERSION:
            raise ExecProtocolError(
                f"exec server {self.command!r} speaks protocol {info.get('protocol')!r}; this suite speaks {P.PROTOCOL_VERSION}"
            )
        parts = info.get("parts")
        if isinstance(parts, dict) and all(isinstance(v, bool) for v in parts.values()):  # {"lines": true, ...}
            parts = [str(p) for p, provided in parts.items() if provided]
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            raise ExecProtocolError(f"exec server {self.command!r}: hello must list its parts, got {parts!r}")
        unknown = sorted(set(parts) - set(EXEC_PARTS))
        if unknown:
            raise ExecProtocolError(f"exec server {self.command!r} lists unknown parts {unknown}; known: {list(EXEC_PARTS)}")
        self.name = str(info.get("name", self.command))
        self.version = str(info.get("version", "unknown"))
        complete = info.get("complete", True)
        if not isinstance(complete, bool):
            raise ExecProtocolError(f"exec server {self.command!r}: complete must be true or false, got {complete!r}")
        self.complete = complete
        self.target = None if info.get("target") is None else str(info["target"])
        xf = info.get("expected_failures") or {}
        if not isinstance(xf, dict):
            raise ExecProtocolError(f"exec server {self.command!r}: expected_failures must be an object, got {xf!r}")
        self.expected_failures = {str(k): str(v) for k, v in xf.items()}

        try:
            self.budget = read_budget(info.get("budget"), self.command)  # optional {"rows", "seconds"}: scale checks beyond it are not run
        except ValueError as exc:
            raise ExecProtocolError(f"exec server {self.command!r}: {exc}") from exc
        self.parts = {p: p in parts for p in PART_ATTRIBUTES}
        self.missing_reasons = {p: f"exec server does not list {p!r} in its parts" for p in PART_ATTRIBUTES if p not in parts}
        prefix = info.get("stub_prefix")
        if self.parts["lines"] and (not isinstance(prefix, str) or not prefix or "\n" in prefix):
            raise ExecProtocolError(f"exec server {self.command!r} provides lines but its stub_prefix is {prefix!r}")
        self.stub_prefix = prefix if self.parts["lines"] else None
        from .profiles import default_profiles, validate_profiles  # noqa: PLC0415 - avoids an import cycle

        declared = info.get("profiles")
        self.profiles_declared = declared is not None
        try:
            self.profiles = default_profiles(self.parts) if declared is None else validate_profiles(declared, self.parts, self.command)
        except ValueError as exc:
            raise ExecProtocolError(f"exec server {self.command!r}: {exc}") from exc

    def next_request_id(self, rid: int) -> None:
        """Number the following requests from ``rid`` (the checks send ids past 2²⁴ and 2³²)."""
        with self._lock:
            self._ensure()
            assert self._server is not None
            self._server.next_id = int(rid) - 1

    def _call(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._ensure()
            assert self._server is not None
            return self._server.request(op, args, self.timeout)

    def _array(self, res: dict[str, Any], key: str, op: str) -> np.ndarray:
        try:
            return P.decode_array(res.get(key), f"{op} result {key!r}")
        except P.ProtocolError as exc:
            raise ExecProtocolError(f"exec server {self.command!r}: {exc}") from None

    # SPEC §15 ------------------------------------------------------------------------------
    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        res = self._call("substitute", {"embeddings": P.encode_array(embeddings, "float32"), "t": P.encode_scalar(t)})
        return self._array(res, "pi", "substitute")

    def online_session(self, t: float) -> ExecSession:
        res = self._call("session_open", {"t": P.encode_scalar(t)})
        handle = res.get("session")
        if not isinstance(handle, (int, str)) or isinstance(handle, bool):  # either reading (docs/conformance.md §6)
            raise ExecProtocolError(
                f"exec server {self.command!r}: session_open must return a session handle (an integer or a string), got {handle!r}")
        return ExecSession(self, handle, self._generation)

    def dedup_lines(self, records: list[str]) -> list[str]:
        res = self._call("dedup_lines", {"records": list(records)})
        out = res.get("records")
        if not isinstance(out, list):
            raise ExecProtocolError(f"exec server {self.command!r}: dedup_lines must return a list of records, got {out!r}"[:300])
        return out

    def codec_encode(self, x: Any, eb: float) -> bytes:
        res = self._call("codec_encode", {"x": P.encode_array(x, "float32"), "eb": P.encode_scalar(eb)})
        try:
            return P.decode_bytes(res.get("data"), "codec_encode result data")
        except P.ProtocolError as exc:
            raise ExecProtocolError(f"exec server {self.command!r}: {exc}") from None

    def codec_decode(self, data: bytes) -> np.ndarray:
        res = self._call("codec_decode", {"data": P.encode_bytes(data)})
        return self._array(res, "x", "codec_decode")

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is None:
            return
        if server.alive():
            try:
                server.request("shutdown", {}, min(self.timeout, 5.0))
            except ExecError:
                pass
            try:
                server.proc.stdin.close()  # a server that ignores shutdown still sees end of input
                server.proc.wait(timeout=2)
            except (subprocess.TimeoutExpired, OSError, ValueError):
                pass
        server.kill()

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["command"] = self.command
        out["timeout_s"] = self.timeout
        out["restarts"] = self.restarts
        return out

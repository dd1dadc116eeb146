"""The correct skeleton the mutants share: SPEC §15 written as plainly as possible, with hooks.

Each mutant module subclasses :class:`Base`, overrides one hook with one realistic bug and calls
:func:`export` to expose the SPEC §15 names at module level. ``Base`` itself conforms (the
meta-tests check that, so a kill is never caused by the skeleton). It reuses lam_ref's merge
rule and validation (:mod:`lam_ref.geometry`); its L0 and codec are minimal stand-ins of SPEC §7
and §9 (the codec stores int64 quantization codes, not cuSZp's bit-planes: only the bound,
determinism and validation are part of SPEC §15).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ....geometry import LamValueError, delta_sq, sq_dist_rows, validate_embeddings, validate_threshold

__all__ = ["Base", "BaseSession", "export"]


class BaseSession:
    """Algorithm 1 over a :class:`Base`: retained rows, their ids, the next id (SPEC §6)."""

    def __init__(self, owner: Base, t: float) -> None:
        self.owner = owner
        self.t = owner.check_t(t)
        self.rows: list[np.ndarray] = []  # every arrival so far (row i = id i)
        self.pi: list[int] = []
        self.dim: int | None = None

    def admit(self, embeddings: Any) -> np.ndarray:
        e = self.owner.check_rows(embeddings, "embeddings", dim=self.dim)
        self.dim = e.shape[1]
        return self.owner.admit_turn(self, e)


class Base:
    """A correct SPEC §15 implementation with one method per decision a mutant may get wrong."""

    COMPLETE = True
    STUB_PREFIX = "[STUB "
    Session = BaseSession

    # -- validation (SPEC §2) -------------------------------------------------------------
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        return validate_embeddings(embeddings, name=name, dim=dim)

    def check_t(self, t: Any) -> float:
        return validate_threshold(t)

    # -- the merge rule (SPEC §2) ------------------------------------------------------------
    def threshold(self, t: float) -> float:
        """The right-hand side ``δ²`` of the merge test."""
        return delta_sq(t)

    def distances(self, e: np.ndarray, i: int, candidates: list[int]) -> np.ndarray:
        """Squared distances from row ``i`` to each candidate row (exact float64 rule)."""
        idx = np.asarray(candidates, dtype=np.int64)
        return sq_dist_rows(e, idx, np.broadcast_to(e[i], (idx.size, e.shape[1])))

    def within(self, sq: np.ndarray, d2: float) -> np.ndarray:
        return sq <= d2

    # -- Algorithm 1 / 2 (SPEC §5, §6) ------------------------------------------------------------
    def candidates(self, state: BaseSession, e: np.ndarray, i: int) -> list[int]:
        """Who an arrival is compared with: the retained chunks (ascending ids), i.e.
        ``[y for y in range(i) if state.pi[y] == y]``, kept incrementally so that sessions of
        tens of thousands of arrivals stay linear (a hook that rewrites ``state.pi`` in place or
        replaces it is seen: cached ids are re-checked, a new list is re-scanned)."""
        cache = getattr(state, "_kept_cache", None)
        ids, upto = ([], 0) if cache is None or cache[0] is not state.pi or cache[1] > i else (cache[2], cache[1])
        ids = [y for y in ids if state.pi[y] == y] + [y for y in range(upto, i) if state.pi[y] == y]
        state._kept_cache = (state.pi, i, ids)  # type: ignore[attr-defined]
        return list(ids)

    def choose(self, candidates: list[int], sq: np.ndarray, ok: np.ndarray) -> int:
        """The witness among candidates within δ: the lowest id."""
        return candidates[int(np.flatnonzero(ok)[0])]

    def decide(self, state: BaseSession, e: np.ndarray, i: int, d2: float) -> None:
        """Append ``π[i]`` for arrival ``i`` (all earlier arrivals are in ``e[:i]``)."""
        cands = self.candidates(state, e, i)
        if cands:
            sq = self.distances(e, i, cands)
            ok = self.within(sq, d2)
            if ok.any():
                state.pi.append(self.choose(cands, sq, ok))
                return
        state.pi.append(i)

    def admit_turn(self, state: BaseSession, turn: np.ndarray) -> np.ndarray:
        first = len(state.rows)
        state.rows.extend(np.array(turn, copy=True))  # own copy: the caller may reuse its buffer (SPEC §6.1)
        e = np.asarray(state.rows, dtype=np.float32).reshape(len(state.rows), turn.shape[1])
        d2 = self.threshold(state.t)
        for i in range(first, e.shape[0]):
            self.decide(state, e, i, d2)
        return np.asarray(state.pi[first:], dtype=np.int64)

    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        session = self.Session(self, t)
        return session.admit(embeddings)

    def online_session(self, t: float) -> BaseSession:
        return self.Session(self, t)

    # -- L0 (SPEC §7) ---------------------------------------------------------------------------
    def protected(self, line: str) -> bool:
        """Blank/whitespace-only lines and stub lines are never dropped or registered."""
        return not line.strip() or line.startswith(self.STUB_PREFIX)

    def stub(self, count: int) -> str:
        return f"{self.STUB_PREFIX}L0 {count} repeated lines]"

    def line_key(self, line: str) -> Any:
        """What two lines are compared by: the line itself (SPEC §7: the exact bytes)."""
        return line

    def dedup_record(self, record: str, seen: set[Any]) -> str:
        out: list[str] = []
        run = 0
        for line in record.split("\n"):
            if not self.protected(line) and self.line_key(line) in seen:
                run += 1
                continue
            if run:
                out.append(self.stub(run))
                run = 0
            if not self.protected(line):
                seen.add(self.line_key(line))
            out.append(line)
        if run:
            out.append(self.stub(run))
        return "\n".join(out)

    def dedup_lines(self, records: list[str]) -> list[str]:
        seen: set[str] = set()
        return [self.dedup_record(r, seen) for r in records]

    # -- L2 codec (SPEC §9) ------------------------------------------------------------------
    _HEADER = struct.Struct("<4sQd")

    def quantize(self, x: np.ndarray, eb: float) -> np.ndarray:
        return np.rint(x.astype(np.float64) / (2.0 * eb)).astype(np.int64)

    def codec_encode(self, x: Any, eb: float) -> bytes:
        arr = np.asarray(x)
        if arr.ndim != 1 or arr.dtype != np.float32:
            raise LamValueError(f"x must be a float32[n] vector, got {arr.dtype} of shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise LamValueError(f"x[{bad[0]}] is {arr[bad[0]]!r}; the codec needs finite values")
        if isinstance(eb, bool) or not isinstance(eb, (int, float)) or not np.isfinite(2.0 * eb) or eb <= 0:
            raise LamValueError(f"eb must be a positive number with 2*eb finite, got {eb!r}")
        top = float(np.max(np.abs(arr.astype(np.float64)))) / (2.0 * float(eb)) if arr.size else 0.0
        if top >= 2.0**62 or np.rint(top) * 2.0 * float(eb) > float(np.finfo(np.float32).max):
            raise LamValueError(f"eb = {eb!r}: codes or reconstructions out of range for these values (SPEC §9.3)")
        q = self.quantize(arr, float(eb))
        body = self._HEADER.pack(b"BASE", arr.size, float(eb)) + q.astype("<i8").tobytes()
        return body + struct.pack("<I", zlib.crc32(body))

    def codec_decode(self, data: bytes) -> np.ndarray:
        data = bytes(data)
        if len(data) < self._HEADER.size + 4:
            raise LamValueError(f"data has {len(data)} bytes, too short for a codec stream")
        body, (crc,) = data[:-4], struct.unpack("<I", data[-4:])
        magic, n, eb = self._HEADER.unpack(body[: self._HEADER.size])
        if magic != b"BASE" or zlib.crc32(body) != crc or len(body) != self._HEADER.size + 8 * n:
            raise LamValueError("data is not a complete codec stream (bad magic, length or CRC)")
        q = np.frombuffer(body[self._HEADER.size :], dtype="<i8")
        return (q.astype(np.float64) * (2.0 * eb)).astype(np.float32)


def export(impl: Base, namespace: dict[str, Any], *, parts: tuple[str, ...] = ("substitute", "online", "lines", "codec")) -> None:
    """Put the SPEC §15 names of ``impl`` into a module's ``namespace``."""
    namespace["COMPLETE"] = impl.COMPLETE
    if "substitute" in parts:
        namespace["substitute"] = impl.substitute
    if "online" in parts:
        namespace["OnlineSession"] = impl.online_session
    if "lines" in parts:
        namespace["dedup_lines"] = impl.dedup_lines
        namespace["STUB_PREFIX"] = impl.STUB_PREFIX
    if "codec" in parts:
        namespace["codec_encode"] = impl.codec_encode
        namespace["codec_decode"] = impl.codec_decode

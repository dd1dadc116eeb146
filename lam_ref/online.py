"""Algorithm 1: the online ε error-bounded test, one turn at a time (paper §2.3; SPEC §6).

Each arrival is tested before prefill against the retained set only; decisions are never revised
and embeddings are never recomputed. For one turn, in arrival order (:func:`admit_arrival`, the
paper's lines 4–12)::

    B  ← BandHash(Q_ε(e_j))                          Matcher.keys
    C  ← ∪_{b∈B} I[b]                                Matcher.candidates (all of R when exhaustive)
    y* ← min{y ∈ C : ‖e_j − e_y‖₂ ≤ δ}               Matcher.sq_to, the exact rule; lowest id
    if y* exists: π(j) = y*, δ̂ ← max(δ̂, ‖e_j − e_y*‖)
    else:         R ← R ∪ {x_j}, I[b] ← I[b] ∪ {j}   Matcher.retain

:meth:`OnlineSession.admit` runs exactly that for a turn of one arrival (the common online case);
a turn of several arrivals goes through :meth:`~lam_ref.substitution.Matcher.admit`, the same
test vectorised over blocks of the turn (Algorithm 2's engine), where an arrival may match an
earlier arrival of the same turn. Concatenating the ``π`` of :meth:`OnlineSession.admit` over any
split into turns equals Algorithm 2's ``π`` (online ≡ batch, SPEC §6.2): both paths choose the
lowest retained id within δ in arrival order, on one :class:`~lam_ref.substitution.Matcher`
state, and the property tests check it for random splits.

Sessions can be saved and restored (:meth:`OnlineSession.save` writes atomically; :meth:`load`
refuses corrupt, truncated or mismatched files with :class:`SessionFileError`).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._io import atomic_write
from .bands import BandSettings
from .geometry import (
    LamValueError,
    kept_mask,
    validate_embeddings,
    validate_map,
    validate_threshold,
)
from .substitution import Matcher, ThresholdMapView

__all__ = ["OnlineSession", "SessionFileError", "TurnResult", "admit_arrival"]

FORMAT = "lam_ref.online_session"
FORMAT_VERSION = 1


def admit_arrival(m: Matcher, row: np.ndarray) -> tuple[int, float, int]:
    """Algorithm 1 (lines 5–12) for one validated float32 arrival ``row`` (shape ``(1, D)``).

    Returns ``(π(j), ‖e_j − e_π(j)‖₂, pairs verified)``; the arrival gets the next global id ``j``
    and is retained (``π(j) = j``) when no candidate lies within δ. Pairs verified (SPEC §5.3):
    every retained chunk in exhaustive mode, the band candidates ``|C|`` in banded mode.
    """
    j = int(m.new_ids(1)[0])
    keys = m.keys(row)  # B ← BandHash(Q_ε(e_j))
    cand = m.candidates(row, keys)  # C ← ∪_{b∈B} I[b]  (positions in R)
    verified = m.n_retained if m.exhaustive else int(cand.size)
    m.count_verified(verified)
    sq = m.sq_to(cand, row)  # exact ‖e_j − e_y‖², SPEC §2
    within = np.flatnonzero(sq <= m.d2)
    if within.size:  # y* ← min{y ∈ C : ‖e_j − e_y‖₂ ≤ δ}: the lowest id wins
        best = within[np.argmin(m.retained_ids[cand[within]])]
        return int(m.retained_ids[cand[best]]), math.sqrt(sq[best]), verified
    m.retain(row, np.array([j], dtype=np.int64), keys)  # R ← R ∪ {x_j}; I[b] ← I[b] ∪ {j}
    return j, 0.0, verified


class SessionFileError(LamValueError):
    """A session file that is corrupt, truncated, of another format, or made with other settings."""


@dataclass(frozen=True)
class TurnResult:
    """One turn's decisions: ``pi`` (global ids), ``distances``, the turn's ``delta_hat``."""

    first_id: int
    pi: np.ndarray
    distances: np.ndarray
    pairs_verified: int

    @property
    def delta_hat(self) -> float:
        """Max merge distance of this turn (0.0 if nothing merged)."""
        merged = ~self.kept
        return float(self.distances[merged].max()) if merged.any() else 0.0

    @property
    def kept(self) -> np.ndarray:
        """Boolean mask of the turn's retained chunks (``π[i] == i``, global ids)."""
        return kept_mask(self.pi, self.first_id)

    def __len__(self) -> int:
        return int(self.pi.shape[0])


class OnlineSession(ThresholdMapView):
    """Algorithm 1 state ``(t, band settings, R, index, next id)`` (SPEC §6).

    ``OnlineSession(t)`` with the default band settings ``r = 4``, ``rel = 0.2``; pass
    ``exhaustive=True`` for the exhaustive candidate generator (equal to the oracle). Claim
    ``ONLINE``: the concatenated turns' maps equal Algorithm 2's on all arrivals.

    Examples:
        >>> s = OnlineSession(0.9, exhaustive=True)
        >>> s.admit(np.array([[1, 0], [0, 1]], dtype=np.float32)).pi.tolist()
        [0, 1]
        >>> s.admit(np.array([[1, 0]], dtype=np.float32)).pi.tolist()
        [0]
        >>> s.pi.tolist(), s.kept_count
        ([0, 1, 0], 2)
    """

    def __init__(
        self,
        t: float = 0.95,
        *,
        r: int = 4,
        rel: float = 0.2,
        exhaustive: bool = False,
        dim: int | None = None,
        normalize: bool = False,
    ) -> None:
        self.t = validate_threshold(t)
        self.settings = BandSettings(r=r, rel=rel)
        self.exhaustive = bool(exhaustive)
        self.normalize = bool(normalize)
        self._matcher: Matcher | None = None
        self._pi: list[np.ndarray] = []
        self._dist: list[np.ndarray] = []
        self.turns = 0
        if dim is not None:
            self._matcher = Matcher(self.t, dim, exhaustive=self.exhaustive, settings=self.settings)

    # -- properties ----------------------------------------------------------------------
    @property
    def dim(self) -> int | None:
        return None if self._matcher is None else self._matcher.dim

    @property
    def n_seen(self) -> int:
        """Arrivals admitted so far (= the next global id)."""
        return 0 if self._matcher is None else self._matcher.next_id

    @property
    def kept_count(self) -> int:
        return 0 if self._matcher is None else self._matcher.n_retained

    @property
    def retained_ids(self) -> np.ndarray:
        return np.zeros(0, np.int64) if self._matcher is None else self._matcher.retained_ids.copy()

    @property
    def pi(self) -> np.ndarray:
        """The map over every arrival so far, in arrival order."""
        return np.concatenate(self._pi) if self._pi else np.zeros(0, dtype=np.int64)

    @property
    def distances(self) -> np.ndarray:
        return np.concatenate(self._dist) if self._dist else np.zeros(0, dtype=np.float64)

    @property
    def pairs_verified(self) -> int:
        return 0 if self._matcher is None else self._matcher.pairs_verified

    # -- Algorithm 1 ---------------------------------------------------------------------
    def admit(self, turn_embeddings: Any) -> TurnResult:
        """Test one turn's arrivals in order; returns their π entries and the turn's δ̂ (Alg. 1).

        One arrival: :func:`admit_arrival`. Several: the matcher's blocks (the same decisions).
        """
        e = validate_embeddings(
            turn_embeddings, name="turn_embeddings", normalize=self.normalize, dim=self.dim
        )
        if self._matcher is None:
            self._matcher = Matcher(self.t, e.shape[1], exhaustive=self.exhaustive, settings=self.settings)
        first = self._matcher.next_id
        if e.shape[0] == 1:
            rep, d, verified = admit_arrival(self._matcher, e)
            pi, dist = np.array([rep], dtype=np.int64), np.array([d], dtype=np.float64)
        else:
            pi, dist, verified = self._matcher.admit(e)
        self._pi.append(pi)
        self._dist.append(dist)
        self.turns += 1
        return TurnResult(first_id=first, pi=pi, distances=dist, pairs_verified=verified)

    # -- persistence ---------------------------------------------------------------------
    def _settings_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "r": self.settings.r,
            "rel": self.settings.rel,
            "exhaustive": self.exhaustive,
            "normalize": self.normalize,
            "dim": self.dim,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the session atomically (temp file in the same folder, fsync, rename).

        The file is a zip of ``.npy`` arrays (no pickle) and a JSON header carrying the format,
        the settings and a SHA-256 over the arrays.
        """
        path = Path(path)
        m = self._matcher
        arrays = {
            "retained_embeddings": m.retained_embeddings.copy() if m else np.zeros((0, 0), np.float32),
            "retained_ids": m.retained_ids.copy() if m else np.zeros(0, np.int64),
            "pi": self.pi,
            "distances": self.distances,
            "turn_lengths": np.array([a.shape[0] for a in self._pi], dtype=np.int64),
        }
        blobs = {}
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            blobs[name] = buf.getvalue()
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "settings": self._settings_json(),
            "next_id": self.n_seen,
            "turns": self.turns,
            "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()},
        }
        def write(fh) -> None:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
                zf.writestr("header.json", json.dumps(header, sort_keys=True))
                for name, blob in blobs.items():
                    zf.writestr(name + ".npy", blob)

        atomic_write(path, write)
        return path

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        t: float | None = None,
        r: int | None = None,
        rel: float | None = None,
        exhaustive: bool | None = None,
    ) -> OnlineSession:
        """Restore a saved session; the restored session decides exactly as one that never stopped.

        Settings given here must match the file's, else :class:`SessionFileError`.
        """
        path = Path(path)
        try:
            with zipfile.ZipFile(path) as zf:
                header = json.loads(zf.read("header.json"))
                if header.get("format") != FORMAT:
                    raise SessionFileError(f"path {str(path)!r} is not a lam_ref online session (format {header.get('format')!r})")
                if header.get("version") != FORMAT_VERSION:
                    raise SessionFileError(
                        f"path {str(path)!r} has session format version {header.get('version')!r}, this lam_ref reads {FORMAT_VERSION}"
                    )
                arrays = {}
                for name, digest in header["sha256"].items():
                    blob = zf.read(name + ".npy")
                    if hashlib.sha256(blob).hexdigest() != digest:
                        raise SessionFileError(f"path {str(path)!r} is corrupt: checksum mismatch in {name!r}")
                    arrays[name] = np.load(io.BytesIO(blob), allow_pickle=False)
        except SessionFileError:
            raise
        except FileNotFoundError:
            raise
        except (zipfile.BadZipFile, KeyError, ValueError, OSError, json.JSONDecodeError, TypeError) as exc:
            raise SessionFileError(f"path {str(path)!r} is not a readable lam_ref session file: {exc}") from exc
        s = header["settings"]
        wanted = {"t": t, "r": r, "rel": rel, "exhaustive": exhaustive}
        for key, value in wanted.items():
            if value is not None and value != s[key]:
                raise SessionFileError(f"path {str(path)!r} was saved with {key}={s[key]!r}, but {key}={value!r} was requested")
        session = cls(s["t"], r=s["r"], rel=s["rel"], exhaustive=s["exhaustive"], normalize=s["normalize"], dim=s["dim"])
        pi, dist, lengths = arrays["pi"], arrays["distances"], arrays["turn_lengths"]
        ids, emb = arrays["retained_ids"], arrays["retained_embeddings"]
        try:
            validate_map(pi, int(header["next_id"]))
            valid_map = True
        except LamValueError:
            valid_map = False
        consistent = (
            valid_map
            and int(header["next_id"]) == int(lengths.sum())
            and dist.shape == pi.shape
            and ids.shape[0] == emb.shape[0]
            and np.array_equal(np.flatnonzero(kept_mask(pi)), ids)
            and emb.ndim == 2
            # a file without a dimension is an unused session: no rows (and so no ids, no arrivals)
            and (emb.shape[0] == 0 if s["dim"] is None else emb.shape[1] == s["dim"])
        )
        if not consistent:
            raise SessionFileError(f"path {str(path)!r} is inconsistent: the map, retained ids and counts disagree")
        if session._matcher is not None:
            session._matcher.restore(emb.astype(np.float32), ids.astype(np.int64), int(header["next_id"]))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        session._pi = [pi[a:b].astype(np.int64) for a, b in zip(offsets[:-1], offsets[1:])]
        session._dist = [dist[a:b].astype(np.float64) for a, b in zip(offsets[:-1], offsets[1:])]
        session.turns = int(header["turns"])
        if not math.isfinite(session.delta_hat):
            raise SessionFileError(f"path {str(path)!r} holds non-finite distances")
        return session

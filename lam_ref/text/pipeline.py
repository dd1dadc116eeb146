"""Compaction of one trajectory: chunks → encoder → L1 turn by turn → L0 → residual + audit
(paper §2.2–2.3, Algorithm 1, App. B, F.1; SPEC §3, 6, 7, 8).

Default layer order **L1 then L0** (Table 12; ``layers=("l0", "l1")`` runs the ablation order):

1. **Chunks** (SPEC §3): each observation record is cut into cl100k windows of at most 512
   tokens, each ending where the encoder stops reading (SPEC §3.4, ``fit_window``; the paper's
   fixed 512-token windows with ``fit_window=False``), ids in arrival order.
2. **Encoding**: the whole trajectory's windows in one batched pass (the decisions depend only on
   the embeddings and their order, so encoding ahead is equivalent to encoding each arrival);
   the truncation count and the tokens beyond the encoder's horizon are taken at the same time.
3. **L1**: the windows are fed to :class:`~lam_ref.online.OnlineSession` turn by turn (each
   turn's observation windows are its arrivals; Algorithm 1), or to
   :func:`~lam_ref.substitution.substitute` with ``driver="batch"`` (Algorithm 2) — online ≡ batch
   (SPEC §6), so both give byte-identical residuals (tested). A dropped window becomes one L1
   stub line naming its representative and the distance (``THM1``: at most δ).
4. **L0** (SPEC §7) over the L1 residual of the observation records, in order.
5. **Residual and audit** (SPEC §8): the records with observations replaced by their residual
   text, and an :class:`~lam_ref.text.audit.AuditStore` that restores every original byte.

Window boundaries fall on token boundaries, which may split a multi-byte character: the residual
keeps or drops whole characters, each belonging to the window that holds its first byte.

Removal is counted over whole texts (App. B "Accounting"): ``tok(original)`` and ``tok(residual)``
per observation record, gross without stub lines and net with them (§2.3). Alongside the chosen
order the result reports removal of L1 alone and L0 alone over the same denominator (Table 12).
With ``both_orders=True`` the other order is run too (L0 → L1 needs a second encoding: the
windows of the L0 residual), so one report holds all four rows of Table 12. All metric
arithmetic comes from :mod:`lam_ref.metrics` (see :func:`summarize`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import codec as _codec
from .. import digest as _digest
from .. import evidence as _evidence
from .. import metrics as _metrics
from ..geometry import LamValueError, delta_from_t, validate_threshold
from ..online import OnlineSession
from ..substitution import MapView, substitute
from .audit import AuditStore
from .chunking import DEFAULT_TOKENIZER, DEFAULT_WINDOW, Chunk, Tokenizer, chunk_records, get_tokenizer
from .encoders import DEFAULT_BATCH_SIZE, Encoder
from .lines import dedup_records
from .loaders import LoadFailure, iter_trajectories
from .records import OBSERVATION, Record, Trajectory
from .reuse import EncodingCache
from .stubs import STUB_PREFIX, L1Stub, try_parse_stub

__all__ = [
    "CompactionConfig",
    "CompactionResult",
    "Encoded",
    "L1Pass",
    "MappedResidual",
    "compact_paths",
    "compact_trajectory",
    "encode_chunks",
    "gold_evidence_json",
    "l1_pass",
    "l1_residual",
    "residual_from_map",
    "result_summary",
    "strip_stub_lines",
    "summarize",
]

LAYERS = ("l1", "l0")


@dataclass(frozen=True)
class CompactionConfig:
    """Settings of one compaction run (defaults are the paper's: ``t = 0.95``, L1 then L0,
    512-token cl100k windows, bands ``r = 4``, ``rel = 0.2``, batch 64), except that windows end at
    the encoder's horizon (``fit_window``, SPEC §3.4)."""

    threshold: float = 0.95
    layers: tuple[str, ...] = ("l1", "l0")
    window: int = DEFAULT_WINDOW
    tokenizer: str = DEFAULT_TOKENIZER
    r: int = 4
    rel: float = 0.2
    exhaustive: bool = False
    batch_size: int = DEFAULT_BATCH_SIZE
    driver: str = "online"
    per_layer: bool = True
    both_orders: bool = False
    #: L2 (SPEC §9): relative error bound for the storage report of the retained embeddings;
    #: ``None`` skips it (``lam-ref compact`` passes 0.001, Table 20's setting).
    l2_rel_eb: float | None = None
    #: Net-positive stubs (SPEC §7.3 for L0, §8.1 for L1): an L0 run, or an L1-dropped window,
    #: stays verbatim when its stub is not shorter in bytes or has not fewer tokens (of
    #: ``tokenizer``, the report's unit); L1's decisions (π, the digests) are unchanged. ``False``
    #: is the paper's rule; ``lam-ref compact`` and the demo turn it on (``--l0-stubs``).
    l0_net_positive: bool = False
    #: SPEC §3.4: each window ends at the longest token prefix the encoder reads whole, so L1
    #: never deletes text its encoder did not see. ``False``: the paper's fixed ``window``-token
    #: windows (their tokens beyond the horizon are reported as ``unseen_tokens``).
    fit_window: bool = True
    #: SPEC §4.4: each distinct window text is encoded once per run (the run's
    #: :class:`~lam_ref.text.reuse.EncodingCache`); ``False`` (``--no-reuse``) encodes every window.
    reuse: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", validate_threshold(self.threshold, "threshold"))
        layers = tuple(self.layers)
        if not layers or any(x not in LAYERS for x in layers) or len(set(layers)) != len(layers):
            raise LamValueError(f"layers must be a non-empty ordering of {LAYERS} without repeats, got {self.layers!r}")
        object.__setattr__(self, "layers", layers)
        if self.driver not in ("online", "batch"):
            raise LamValueError(f"driver must be 'online' or 'batch', got {self.driver!r}")
        if self.l2_rel_eb is not None:
            object.__setattr__(self, "l2_rel_eb", _codec.validate_eb(self.l2_rel_eb, "l2_rel_eb"))

    @property
    def delta(self) -> float:
        return delta_from_t(self.threshold)

    @property
    def uses_encoder(self) -> bool:
        return "l1" in self.layers

    def to_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "delta": self.delta,
            "layers": list(self.layers),
            "window": self.window,
            "window_fit": "encoder" if self.fit_window else "none",
            "tokenizer": self.tokenizer,
            "r": self.r,
            "rel": self.rel,
            "exhaustive": self.exhaustive,
            "batch_size": self.batch_size,
            "driver": self.driver,
            "both_orders": self.both_orders,
            "l2_rel_eb": self.l2_rel_eb,
            "l0_stubs": "net-positive" if self.l0_net_positive else "paper",
            "l1_stubs": "net-positive" if self.l0_net_positive else "paper",
            "reuse": "distinct-texts" if self.reuse else "none",
        }


# ----------------------------------------------------------------------------------------------
# stages


@dataclass(frozen=True)
class Encoded:
    """The windows of some observation texts and their embeddings (one batched encoder pass)."""

    chunks: list[Chunk]
    embeddings: np.ndarray
    truncated: int
    encode_s: float
    chunk_s: float
    #: of ``chunk_s``: time in the encoder's tokenizer fitting the windows to its horizon (SPEC §3.4)
    fit_s: float = 0.0
    #: windows that went through the encoder, and windows whose text was already encoded (SPEC §4.4)
    encoded: int = 0
    reused: int = 0

    @property
    def unseen_tokens(self) -> int:
        """cl100k tokens of the windows beyond the encoder's horizon (SPEC §3.4)."""
        return sum(c.unseen for c in self.chunks)


def encode_chunks(
    items: Sequence[tuple[int, int, str]],
    encoder: Encoder,
    tokenizer: Tokenizer,
    *,
    window: int = DEFAULT_WINDOW,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: bool = False,
    fit: bool = True,
    reuse: EncodingCache | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> Encoded:
    """Chunk ``(record, turn, text)`` items and encode all windows in one pass (SPEC §3, §4);
    ``fit``: windows end at ``encoder``'s horizon (SPEC §3.4), else ``window`` tokens each.
    ``reuse``: the run's :class:`~lam_ref.text.reuse.EncodingCache` (SPEC §4.4: each distinct window
    text encoded once per run); ``None``: each distinct text encoded once in this call. ``on_batch``:
    called with each encoder batch's size (progress during a long encoding)."""
    t0 = time.perf_counter()
    horizon = _TimedHorizon(encoder)
    chunks = chunk_records(items, tokenizer, window, horizon=horizon, fit=fit)
    t1 = time.perf_counter()
    texts = [c.text for c in chunks]
    reuse = EncodingCache() if reuse is None else reuse
    emb, n_enc, n_reused = reuse.encode(encoder, texts, batch_size=batch_size, progress=progress, on_batch=on_batch)
    # every window's own text was measured by the encoder's tokenizer while cutting (SPEC §3.4)
    truncated = sum(1 for c in chunks if c.unseen) if encoder.max_tokens is not None else 0
    t2 = time.perf_counter()
    return Encoded(chunks, emb, truncated, t2 - t1, t1 - t0 - horizon.seconds, horizon.seconds, n_enc, n_reused)


class _TimedHorizon:
    """The encoder as the window cutter's horizon, timing its tokenizer calls (``fit`` stage)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.max_tokens = encoder.max_tokens
        self.seconds = 0.0

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        t0 = time.perf_counter()
        try:
            return self.encoder.token_lengths(texts)
        finally:
            self.seconds += time.perf_counter() - t0

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None:
        t0 = time.perf_counter()
        try:
            return self.encoder.piece_spans(text)
        finally:
            self.seconds += time.perf_counter() - t0


@dataclass(frozen=True)
class L1Pass(MapView):
    """L1's decisions over one trajectory's windows: ``π`` (SPEC §1), distances, counts."""

    pi: np.ndarray
    distances: np.ndarray
    pairs_verified: int
    turns: int


def l1_pass(enc: Encoded, config: CompactionConfig) -> L1Pass:
    """Algorithm 1 turn by turn (``driver="online"``) or Algorithm 2 (``"batch"``) on the windows."""
    e = enc.embeddings
    n = e.shape[0]
    if n == 0:
        return L1Pass(np.zeros(0, np.int64), np.zeros(0), 0, 0)
    if config.driver == "batch":
        res = substitute(e, config.threshold, r=config.r, rel=config.rel, exhaustive=config.exhaustive)
        return L1Pass(res.pi, res.distances, res.pairs_verified, 1)
    session = OnlineSession(config.threshold, r=config.r, rel=config.rel, exhaustive=config.exhaustive)
    turns = np.fromiter((c.turn for c in enc.chunks), dtype=np.int64, count=n)
    bounds = np.flatnonzero(np.diff(turns)) + 1
    for a, b in zip(np.r_[0, bounds], np.r_[bounds, n]):
        session.admit(e[a:b])
    return L1Pass(session.pi, session.distances, session.pairs_verified, session.turns)


def _snap(b: bytes, off: int) -> int:
    """The first character boundary at or after byte ``off`` (UTF-8 continuation bytes skipped)."""
    n = len(b)
    while off < n and (b[off] & 0xC0) == 0x80:
        off += 1
    return off


def l1_residual(
    text: str, chunks: Sequence[Chunk], pi: np.ndarray, distances: np.ndarray,
    count_tokens: Callable[[str], int] | None = None,
) -> tuple[str, list[tuple[int, int, bytes]], int]:
    """One record's residual after L1: kept windows in place, each dropped window replaced by its
    stub on a line of its own (a ``\\n`` is inserted before it unless it starts a line, and after
    it unless it ends the record). Returns ``(residual, patches, stubs)``; patches feed the audit.

    With ``count_tokens`` (net-positive stubs, SPEC §8.1) a dropped window is replaced only when
    what replaces it (the stub and the line breaks inserted around it) has fewer UTF-8 bytes and
    fewer tokens than the window's text; otherwise the window stays verbatim (no patch: nothing is
    moved). The decision ``pi`` is not changed.
    """
    if all(int(pi[c.id]) == c.id for c in chunks):
        return text, [], 0
    b = text.encode("utf-8", errors="surrogatepass")
    out = bytearray()
    patches: list[tuple[int, int, bytes]] = []
    last = len(chunks) - 1
    nstubs = 0
    for k, c in enumerate(chunks):
        s0, s1 = _snap(b, c.byte_start), _snap(b, c.byte_end)
        rep = int(pi[c.id])
        if rep == c.id:
            out += b[s0:s1]
            continue
        start = len(out)
        stub = (b"\n" if out and out[-1] != 0x0A else b"") + L1Stub(c.id, rep, float(distances[c.id])).render().encode(
            "ascii") + (b"\n" if k < last else b"")
        if count_tokens is not None and not (len(stub) < s1 - s0 and count_tokens(stub.decode("ascii"))
                                             < count_tokens(b[s0:s1].decode("utf-8", errors="surrogatepass"))):
            out += b[s0:s1]  # the stub would cost more than the window: kept verbatim (SPEC §8.1)
            continue
        out += stub
        patches.append((start, len(out), b[s0:s1]))
        nstubs += 1
    return out.decode("utf-8", errors="surrogatepass"), patches, nstubs


def strip_stub_lines(text: str) -> str:
    """The residual without its stub lines (gross accounting, §2.3): every line that parses as a
    stub (:func:`~lam_ref.text.stubs.try_parse_stub`) is removed with its line break."""
    if STUB_PREFIX not in text:
        return text
    return "\n".join(ln for ln in text.split("\n") if not (ln.startswith(STUB_PREFIX) and try_parse_stub(ln)))


@dataclass
class _Stage:
    """Residual observation texts after some layers, with their audit patches per layer."""

    texts: list[str]
    patches: list[list[tuple[str, list[tuple[int, int, bytes]]]]]
    l1_stubs: int = 0
    l0_stubs: int = 0
    l0_dropped_lines: int = 0


def _run_l1(stage: _Stage, obs_idx: list[int], enc: Encoded, l1: L1Pass,
            count_tokens: Callable[[str], int] | None = None) -> _Stage:
    by_rec: dict[int, list[Chunk]] = {}
    for c in enc.chunks:
        by_rec.setdefault(c.record, []).append(c)
    texts, patches = list(stage.texts), [list(p) for p in stage.patches]
    n1 = 0
    for k, rec in enumerate(obs_idx):
        cs = by_rec.get(rec)
        if not cs:
            continue
        new, pt, ns = l1_residual(texts[k], cs, l1.pi, l1.distances, count_tokens)
        if pt:
            texts[k] = new
            patches[k].append(("L1", pt))
            n1 += ns
    return _Stage(texts, patches, stage.l1_stubs + n1, stage.l0_stubs, stage.l0_dropped_lines)


def _run_l0(stage: _Stage, obs_idx: list[int], net_positive: bool = False, tok: Tokenizer | None = None) -> _Stage:
    # net-positive stubs count tokens in the report's unit: the run's tokenizer (SPEC §7.3)
    res = dedup_records(stage.texts, record_ids=obs_idx, net_positive=net_positive,
                        count_tokens=tok if net_positive else None)
    texts, patches = list(stage.texts), [list(p) for p in stage.patches]
    n0 = dropped = 0
    for k, r in enumerate(res):
        if r.changed:
            texts[k] = r.text
            patches[k].append(("L0", list(r.patches)))
            n0 += len(r.stub_fields)
            dropped += r.dropped_lines
    return _Stage(texts, patches, stage.l1_stubs, stage.l0_stubs + n0, stage.l0_dropped_lines + dropped)


def _count(tokenizer: Tokenizer, stage: _Stage, originals: list[str], orig_counts: list[int]) -> tuple[int, int]:
    """Whole-text token counts ``(net, gross)`` of a stage; unchanged records reuse the original count."""
    net = gross = 0
    for k, t in enumerate(stage.texts):
        if t is originals[k] or t == originals[k]:
            net += orig_counts[k]
            gross += orig_counts[k]
            continue
        n = tokenizer.count(t)
        net += n
        g = strip_stub_lines(t)
        gross += n if g == t else tokenizer.count(g)
    return net, gross


# ----------------------------------------------------------------------------------------------
# result


@dataclass
class CompactionResult(MapView):
    """Everything one compaction run measured on one trajectory (``to_json`` is what the CLI writes)."""

    trajectory: Trajectory
    config: CompactionConfig
    encoder: dict[str, Any]
    residual_texts: list[str]
    audit: AuditStore
    chunks: int
    pi: np.ndarray
    distances: np.ndarray
    chunk_tokens: np.ndarray
    pairs_verified: int
    truncated: int
    tokens_original: int
    tokens_residual_net: int
    tokens_residual_gross: int
    layer_tokens: dict[str, tuple[int, int]]
    l1_stubs: int
    l0_stubs: int
    l0_dropped_lines: int
    timings: dict[str, float] = field(default_factory=dict)
    #: L2 storage of the retained embeddings (``config.l2_rel_eb`` set and L1 run), else ``None``.
    l2: _codec.StorageReport | None = None
    #: cl100k tokens of the windows beyond the encoder's horizon (SPEC §3.4; 0 with ``fit_window``).
    unseen_tokens: int = 0
    #: windows encoded and windows whose text the run had already encoded, over every encoding of
    #: this trajectory (its residual's too with ``both_orders``; SPEC §4.4)
    windows_encoded: int = 0
    windows_reused: int = 0

    # -- derived -------------------------------------------------------------------------------
    @property
    def kept_chunks(self) -> int:
        return self.kept_count

    @property
    def removal(self) -> _metrics.RemovalResult:
        return _metrics.RemovalResult(self.tokens_original, self.tokens_residual_net, self.tokens_residual_gross)

    @property
    def merge_stats(self) -> _metrics.MergeDistanceStats:
        ids = self.deleted_ids
        return _metrics.merge_distance_stats(self.distances[ids], self.chunk_tokens[ids], self.config.threshold)

    def residual_records(self) -> list[Record]:
        """The residual trajectory: records in order, observations replaced by their residual."""
        return [
            Record(r.role, t, r.turn, r.source, r.name)
            for r, t in zip(self.trajectory.records, self.residual_texts)
        ]

    def restore(self) -> list[str]:
        """Every original record text, recovered from the residual through the audit store."""
        return self.audit.restore(self.residual_texts)

    def observation_residuals(self) -> list[str]:
        return [self.residual_texts[i] for i in self.trajectory.observation_indices]

    def to_json(self) -> dict[str, Any]:
        """The per-trajectory report (the report keys of docs/compaction.md)."""
        rem = self.removal
        layer = _metrics.layer_removal(self.tokens_original, {k: v[0] for k, v in self.layer_tokens.items()})
        layer_gross = _metrics.layer_removal(self.tokens_original, {k: v[1] for k, v in self.layer_tokens.items()})
        ms = self.merge_stats
        n = self.chunks
        out = {
            "id": self.trajectory.id,
            "format": self.trajectory.format,
            "path": self.trajectory.path,
            "records": len(self.trajectory.records),
            "observation_records": self.trajectory.observation_count,
            "observation_text": any(r.role == OBSERVATION and r.text.strip() for r in self.trajectory.records),
            "chunks": n,
            "kept_chunks": self.kept_chunks,
            "tokens_original": self.tokens_original,
            "tokens_residual_gross": self.tokens_residual_gross,
            "tokens_residual_net": self.tokens_residual_net,
            "removal_gross": rem.gross,
            "removal_net": rem.net,
            "stub_cost": rem.stub_cost,
            "l1_removal": layer.get("L1"),
            "l0_removal": layer.get("L0"),
            "l1_removal_gross": layer_gross.get("L1"),
            "l0_removal_gross": layer_gross.get("L0"),
            "layer_removal": layer,
            "layers": "->".join(x.upper() for x in self.config.layers),
            "threshold": self.config.threshold,
            "delta": self.config.delta,
            "delta_hat": self.delta_hat,
            "delta_hat_17g": _digest.fmt17(self.delta_hat),
            "within_bound": self.delta_hat <= self.config.delta,
            "merge_distances": ms.to_json(),
            "deletion_digest": self.deletion_digest,
            "map_digest": self.map_digest,
            "encoder": self.encoder.get("name"),
            "encoder_info": self.encoder,
            "truncated_windows": self.truncated,
            "truncation_rate": self.truncated / n if n else 0.0,
            "unseen_tokens": self.unseen_tokens,
            "windows_encoded": self.windows_encoded,
            "windows_reused": self.windows_reused,
            "window_fit": "encoder" if self.config.fit_window else "none",
            "pairs_verified": self.pairs_verified,
            "l1_stubs": self.l1_stubs,
            # net-positive stubs (SPEC §8.1): L1-dropped windows kept verbatim, their stub costing more
            "l1_stubs_skipped": (n - self.kept_chunks) - self.l1_stubs if "l1" in self.config.layers else 0,
            "l0_stubs": self.l0_stubs,
            "l0_dropped_lines": self.l0_dropped_lines,
            "audit_moved_bytes": self.audit.moved_bytes,
            "timings_s": dict(self.timings),
            "warnings": list(self.trajectory.warnings),
            "l2": None if self.l2 is None else self.l2.to_json(),
            "evidence": None,  # gold-patch evidence: lam-ref compact --gold fills it (gold_evidence_json)
            "qa_evidence": _qa_evidence_json(self),
        }
        return out


def _qa_evidence_json(res: CompactionResult) -> dict[str, Any] | None:
    """The LoCoMo QA evidence turns the residual keeps (:func:`lam_ref.evidence.qa_evidence_retention`,
    SPEC §12), with their ``retention`` (``None`` when none is witnessed); ``None`` without QA items."""
    r = _evidence.qa_evidence_retention(res.trajectory, res.observation_residuals())
    return None if r is None else _evidence.result_json(r)


def compact_trajectory(
    traj: Trajectory,
    encoder: Encoder | None,
    config: CompactionConfig | None = None,
    *,
    progress: bool = False,
    cache: dict[str, Encoded] | None = None,
    reuse: EncodingCache | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> CompactionResult:
    """Compact one trajectory (see the module docstring for the stages).

    ``encoder`` may be ``None`` only when L1 is not among ``config.layers`` (then the L1-alone
    removal is not reported). ``cache`` (a dict kept by the caller) reuses encodings across runs of the same trajectory
    with other thresholds (``lam-ref sweep``): keys ``"orig"`` and ``"l0"``. ``reuse``: the run's
    cache of window embeddings by text digest (SPEC §4.4); ``None``: reuse inside this trajectory.
    ``on_batch``: called with each encoder batch's size (the command line's progress bar).
    """
    config = config or CompactionConfig()
    if encoder is None and config.uses_encoder:
        raise LamValueError(f"encoder is required for layers {config.layers!r} (L1 embeds windows)")
    cache = {} if cache is None else cache
    reuse = EncodingCache(enabled=config.reuse) if reuse is None else reuse
    counts = {"encoded": 0, "reused": 0}
    timings: dict[str, float] = {"chunk": 0.0, "fit": 0.0, "encode": 0.0, "l1": 0.0, "l0": 0.0, "residual": 0.0,
                                 "tokens": 0.0}
    t_all = time.perf_counter()
    tok = get_tokenizer(config.tokenizer)
    obs_idx = traj.observation_indices
    originals = [traj.records[i].text for i in obs_idx]

    def encoded(key: str, its: list[tuple[int, int, str]]) -> Encoded:
        if key not in cache:
            assert encoder is not None
            cache[key] = encode_chunks(
                its, encoder, tok, window=config.window, batch_size=config.batch_size, progress=progress,
                fit=config.fit_window, reuse=reuse, on_batch=on_batch,
            )
            counts["encoded"] += cache[key].encoded
            counts["reused"] += cache[key].reused
            timings["chunk"] += cache[key].chunk_s
            timings["fit"] += cache[key].fit_s
            timings["encode"] += cache[key].encode_s
        return cache[key]

    def run_l1(stage: _Stage, key: str) -> tuple[_Stage, Encoded, L1Pass]:
        its = [(i, traj.records[i].turn, t) for i, t in zip(obs_idx, stage.texts)]
        enc = encoded(key, its)
        t0 = time.perf_counter()
        l1 = l1_pass(enc, config)
        t1 = time.perf_counter()
        out = _run_l1(stage, obs_idx, enc, l1, tok.count if config.l0_net_positive else None)
        timings["l1"] += t1 - t0
        timings["residual"] += time.perf_counter() - t1
        return out, enc, l1

    def run_l0(stage: _Stage) -> _Stage:
        t0 = time.perf_counter()
        out = _run_l0(stage, obs_idx, config.l0_net_positive, tok)
        timings["l0"] += time.perf_counter() - t0
        return out

    start = _Stage(list(originals), [[] for _ in originals])
    t0 = time.perf_counter()
    orig_counts = tok.count_many(originals)
    timings["tokens"] += time.perf_counter() - t0

    stage = start
    main_enc: Encoded | None = None
    main_l1: L1Pass | None = None
    l1_alone: _Stage | None = None
    l0_alone: _Stage | None = None
    for k, layer in enumerate(config.layers):
        if layer == "l1":
            stage, main_enc, main_l1 = run_l1(stage, "orig" if k == 0 else "l0")
            if k == 0:
                l1_alone = stage
        else:
            stage = run_l0(stage)
            if k == 0:
                l0_alone = stage
    if config.per_layer or config.both_orders:
        if l1_alone is None and encoder is not None:
            l1_alone = run_l1(start, "orig")[0]
        if l0_alone is None:
            l0_alone = run_l0(start)
    other: _Stage | None = None
    if config.both_orders and len(config.layers) == 2:
        assert l0_alone is not None and l1_alone is not None
        other = run_l1(l0_alone, "l0")[0] if config.layers == ("l1", "l0") else run_l0(l1_alone)

    t0 = time.perf_counter()
    net, gross = _count(tok, stage, originals, orig_counts)
    layer_tokens: dict[str, tuple[int, int]] = {"->".join(x.upper() for x in config.layers): (net, gross)}
    if l1_alone is not None:
        layer_tokens["L1"] = _count(tok, l1_alone, originals, orig_counts)
    if l0_alone is not None:
        layer_tokens["L0"] = _count(tok, l0_alone, originals, orig_counts)
    if other is not None:
        layer_tokens["->".join(x.upper() for x in reversed(config.layers))] = _count(tok, other, originals, orig_counts)
    timings["tokens"] += time.perf_counter() - t0

    t0 = time.perf_counter()
    residual, audit = _residual_and_audit(traj, stage)
    timings["audit"] = time.perf_counter() - t0

    unseen = 0
    if main_enc is None:
        pi, dist, ctok, verified, trunc = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64), 0, 0
    else:
        unseen = main_enc.unseen_tokens
        assert main_l1 is not None
        pi, dist, verified = main_l1.pi, main_l1.distances, main_l1.pairs_verified
        ctok = np.fromiter((c.tokens for c in main_enc.chunks), dtype=np.int64, count=len(main_enc.chunks))
        trunc = main_enc.truncated
    l2 = None
    if config.l2_rel_eb is not None and main_enc is not None and pi.shape[0]:
        t0 = time.perf_counter()  # nothing to store without windows: no report then ("—")
        kept = main_enc.embeddings[pi == np.arange(pi.shape[0])]
        l2 = _codec.storage_report(kept.reshape(kept.shape[0], -1), config.l2_rel_eb)
        timings["l2"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_all
    return CompactionResult(
        trajectory=traj,
        config=config,
        encoder=encoder.describe() if encoder is not None else {"name": None},
        residual_texts=residual,
        audit=audit,
        chunks=int(pi.shape[0]),
        pi=pi,
        distances=dist,
        chunk_tokens=ctok,
        pairs_verified=verified,
        truncated=trunc,
        tokens_original=sum(orig_counts),
        tokens_residual_net=net,
        tokens_residual_gross=gross,
        layer_tokens=layer_tokens,
        l1_stubs=stage.l1_stubs,
        l0_stubs=stage.l0_stubs,
        l0_dropped_lines=stage.l0_dropped_lines,
        timings=timings,
        l2=l2,
        unseen_tokens=unseen,
        windows_encoded=counts["encoded"],
        windows_reused=counts["reused"],
    )


def _residual_and_audit(traj: Trajectory, stage: _Stage) -> tuple[list[str], AuditStore]:
    """Every record's residual text and the audit store of a finished stage (SPEC §8)."""
    audit = AuditStore.for_records(traj.id, [r.text for r in traj.records],
                                   meta=[(r.role, r.turn, r.source, r.name) for r in traj.records])
    residual = [r.text for r in traj.records]
    for k, rec in enumerate(traj.observation_indices):
        residual[rec] = stage.texts[k]
        for layer_name, patches in stage.patches[k]:
            audit.add(rec, layer_name, patches)
    return residual, audit


@dataclass(frozen=True)
class MappedResidual:
    """One trajectory compacted with L1 decisions taken over the whole corpus (``--scope corpus``)."""

    trajectory: Trajectory
    residual_texts: list[str]
    audit: AuditStore
    chunks: int
    tokens_original: int
    tokens_residual_net: int
    tokens_residual_gross: int
    l1_stubs: int
    l0_stubs: int

    def residual_records(self) -> list[Record]:
        return [Record(r.role, t, r.turn, r.source, r.name) for r, t in zip(self.trajectory.records, self.residual_texts)]


def residual_from_map(traj: Trajectory, config: CompactionConfig, first_row: int, pi: Any, distances: Any,
                      encoder: Encoder | None = None) -> MappedResidual:
    """The residual and audit store of one trajectory whose L1 decisions come from a corpus-wide map.

    The windows are cut as :func:`compact_trajectory` cuts them (SPEC §3; nothing is encoded; with
    ``config.fit_window`` at ``encoder``'s horizon, SPEC §3.4, so ``encoder`` is required); window
    ``i`` is global row ``first_row + i`` of ``pi``/``distances`` (the corpus scope's manifest order)
    and is dropped iff ``pi[first_row + i] != first_row + i``. Its stub names the two **global** ids
    (the representative may lie in an earlier trajectory); the audit store holds the dropped bytes, so
    ``lam-ref restore`` needs nothing but this trajectory's files. Then L0 runs within the trajectory
    when ``config.layers`` is ``("l1", "l0")``, as in the per-trajectory scope.

    Raises:
        LamValueError: the layers do not start with L1, ``encoder`` is missing with
            ``config.fit_window``, or the windows do not fit the map.
    """
    if not config.layers or config.layers[0] != "l1":
        raise LamValueError(f"layers must start with l1 for a corpus-wide map, got {config.layers!r}")
    if config.fit_window and encoder is None:
        raise LamValueError("encoder is required with fit_window (the windows end at the encoder's horizon, "
                            "SPEC §3.4): pass the encoder that cut them")
    tok = get_tokenizer(config.tokenizer)
    obs_idx = traj.observation_indices
    originals = [traj.records[i].text for i in obs_idx]
    chunks = chunk_records([(i, traj.records[i].turn, t) for i, t in zip(obs_idx, originals)], tok, config.window,
                           horizon=encoder, fit=config.fit_window)
    if first_row < 0 or first_row + len(chunks) > len(pi):
        raise LamValueError(f"trajectory {traj.id!r}: {len(chunks)} windows from row {first_row} do not fit a map of "
                            f"{len(pi)} rows")
    shifted = [dataclasses.replace(c, id=c.id + first_row) for c in chunks]
    enc = Encoded(shifted, np.zeros((len(chunks), 0), np.float32), 0, 0.0, 0.0)
    stage = _run_l1(_Stage(list(originals), [[] for _ in originals]), obs_idx, enc,
                    L1Pass(pi, distances, 0, 0),  # the corpus arrays, indexed by global id
                    tok.count if config.l0_net_positive else None)
    if "l0" in config.layers:
        stage = _run_l0(stage, obs_idx, config.l0_net_positive)
    orig_counts = tok.count_many(originals)
    net, gross = _count(tok, stage, originals, orig_counts)
    residual, audit = _residual_and_audit(traj, stage)
    return MappedResidual(traj, residual, audit, len(chunks), sum(orig_counts), net, gross, stage.l1_stubs,
                          stage.l0_stubs)


# ----------------------------------------------------------------------------------------------
# many trajectories


def compact_paths(
    paths: Sequence[str | Path],
    encoder: Encoder | None,
    config: CompactionConfig | None = None,
    *,
    format: str | None = None,
    progress: bool = False,
) -> Iterator[CompactionResult | LoadFailure]:
    """Compact every trajectory under ``paths``, streaming: one trajectory (and its embeddings) in
    memory at a time. Load failures are yielded as :class:`~lam_ref.text.loaders.LoadFailure`."""
    for item in iter_trajectories(list(paths), format):
        if isinstance(item, LoadFailure):
            yield item
        else:
            yield compact_trajectory(item, encoder, config, progress=progress)


def summarize(results: Sequence[dict[str, Any]], config: CompactionConfig) -> dict[str, Any]:
    """Totals over per-trajectory reports (``CompactionResult.to_json()`` dicts): token-weighted
    removal (sums of whole-text counts, :func:`lam_ref.metrics.corpus_removal`), max δ̂, and
    digests over corpus-global chunk ids (SPEC §1, §10: trajectories in order, ids offset by the
    chunks before them). Keeps only the small per-trajectory dicts, never embeddings."""
    orig = [r["tokens_original"] for r in results]
    rem = _metrics.corpus_removal(orig, [r["tokens_residual_net"] for r in results],
                                  [r["tokens_residual_gross"] for r in results])
    layer_names = sorted({k for r in results for k in r.get("_layer_tokens", {})})
    layer = {}
    for name in layer_names:
        if all(name in r.get("_layer_tokens", {}) for r in results):
            net = sum(r["_layer_tokens"][name][0] for r in results)
            gross = sum(r["_layer_tokens"][name][1] for r in results)
            layer[name] = _metrics.corpus_removal([sum(orig)], [net], [gross]).net
    deleted: list[int] = []
    pi_all: list[int] = []
    offset = 0
    for r in results:
        pi = r.get("_pi", [])
        pi_all.extend(int(p) + offset for p in pi)
        deleted.extend(i + offset for i, p in enumerate(pi) if int(p) != i)
        offset += len(pi)
    chunks = sum(r["chunks"] for r in results)
    trunc = sum(r["truncated_windows"] for r in results)
    dh = max((r["delta_hat"] for r in results), default=0.0)
    return {
        "id": "TOTAL",
        "format": ",".join(sorted({r["format"] for r in results})),
        "trajectories": len(results),
        "records": sum(r["records"] for r in results),
        "observation_records": sum(r["observation_records"] for r in results),
        "chunks": chunks,
        "kept_chunks": sum(r["kept_chunks"] for r in results),
        "tokens_original": rem.original_tokens,
        "tokens_residual_gross": rem.residual_tokens_without_stubs,
        "tokens_residual_net": rem.residual_tokens,
        "removal_gross": rem.gross,
        "removal_net": rem.net,
        "stub_cost": rem.stub_cost,
        "l1_removal": layer.get("L1"),
        "l0_removal": layer.get("L0"),
        "layer_removal": layer,
        "layers": "->".join(x.upper() for x in config.layers),
        "threshold": config.threshold,
        "delta": config.delta,
        "delta_hat": dh,
        "delta_hat_17g": _digest.fmt17(dh),
        "within_bound": all(r["within_bound"] for r in results),
        "deletion_digest": _digest.deletion_digest(deleted),
        "map_digest": _digest.map_digest(pi_all),
        "encoder": results[0]["encoder"] if results else None,
        "truncated_windows": trunc,
        "truncation_rate": trunc / chunks if chunks else 0.0,
        "unseen_tokens": sum(r.get("unseen_tokens", 0) for r in results),
        "windows_encoded": sum(r.get("windows_encoded", 0) for r in results),
        "windows_reused": sum(r.get("windows_reused", 0) for r in results),
        "window_fit": results[0].get("window_fit") if results else ("encoder" if config.fit_window else "none"),
        "l1_stubs": sum(r["l1_stubs"] for r in results),
        "l1_stubs_skipped": sum(r.get("l1_stubs_skipped", 0) for r in results),
        "l0_stubs": sum(r["l0_stubs"] for r in results),
        "l2": _l2_total([r.get("l2") for r in results]),
        # pooled over the trajectories that carry it, the rule of sweep's rows[].qa_evidence
        "qa_evidence": _evidence.pooled_json(r.get("qa_evidence") for r in results),
        "evidence": _gold_total([r["evidence"] for r in results if r.get("evidence") is not None]),
    }


def gold_evidence_json(res: CompactionResult, key: str, patch: str) -> dict[str, Any]:
    """A trajectory's ``evidence`` with its gold patch (``key``: its id in ``--gold``): the exact
    and relaxed survival of the patch's evidence lines (:func:`lam_ref.evidence.gold_evidence`,
    the function ``lam-ref sweep`` measures with; App. F.3, F.4)."""
    exact, relaxed = _evidence.gold_evidence(res.trajectory, res.observation_residuals(),
                                             _evidence.evidence_lines(patch))
    return {"gold_key": key, **_evidence.result_json(exact), "relaxed": _evidence.result_json(relaxed)}


def _gold_total(per: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Gold evidence pooled over the trajectories with a gold patch (exact, and ``relaxed``), the
    pooling of sweep's ``rows[].evidence``; ``None`` when none has one."""
    if not per:
        return None
    return {**_evidence.pooled_json(per), "relaxed": _evidence.pooled_json(e["relaxed"] for e in per)}


def _l2_total(reports: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """L2 over all trajectories: summed bytes (each trajectory is its own stream, its own bound)."""
    reps = [r for r in reports if r is not None]
    if not reps:
        return None
    raw = sum(r["raw_bytes"] for r in reps)
    enc = sum(r["encoded_bytes"] for r in reps)
    return {"vectors": sum(r["vectors"] for r in reps), "rel_eb": reps[0]["rel_eb"], "raw_bytes": raw,
            "encoded_bytes": enc, "ratio": raw / enc if enc else None,
            "bound_holds": all(r["bound_holds"] for r in reps), "trajectories": len(reps)}


def result_summary(res: CompactionResult) -> dict[str, Any]:
    """``res.to_json()`` plus the private fields :func:`summarize` needs (``_pi``, ``_layer_tokens``)."""
    out = res.to_json()
    out["_pi"] = res.pi.tolist()
    out["_layer_tokens"] = {k: list(v) for k, v in res.layer_tokens.items()}
    return out

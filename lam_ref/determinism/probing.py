"""``lam-ref determinism probe``: encode the same windows at several batch sizes and record decisions,
margins, jitter, digests and where it ran (paper App. D; claim ``STAB``; docs/determinism.md).

:func:`probe` encodes every observation window once per batch size and records, per (batch size,
threshold), the digests, the margins, the at-risk decisions (:mod:`lam_ref.determinism.margins`),
the jitter relative to the reference batch size, the L2 codec's byte digests, the input identity
and the execution target with its kernel configuration (:mod:`lam_ref.provenance`).
The report's schema is :mod:`lam_ref.determinism.report` (``lam_ref/schemas/lam_ref.determinism.report.schema.json``,
tabled in docs/determinism.md).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .. import codec as _codec
from .. import digest as _digest
from ..devices import require_cuda, validate_device
from ..geometry import LamValueError, validate_embeddings, validate_positive_int, validate_threshold
from ..provenance import execution_target
from ..text.reuse import distinct_texts
from .corpus import Corpus, load_corpus
from .encoder import DTYPES, encode_corpus, probe_encoder
from .margins import (
    MACHINE_JITTER,
    MARGIN_SLACK,
    at_risk,
    decision_margins,
    groups_or_all,
    jitter,
    risk_bound,
)
from .report import SCHEMA, SCHEMA_VERSION

__all__ = [
    "DEFAULT_BATCH_SIZES",
    "DEFAULT_THRESHOLDS",
    "LAYERS",
    "REFERENCE_BATCH_SIZE",
    "REL_EBS",
    "InlineSteps",
    "device_kwargs",
    "greedy_map",
    "check_options",
    "probe",
    "probe_corpus",
    "probe_steps_total",
]

#: The paper's batch sizes (App. D) and thresholds.
DEFAULT_BATCH_SIZES = (8, 16, 32, 64, 128, 256)
DEFAULT_THRESHOLDS = (0.99, 0.95)
#: Jitter is measured relative to this batch size (App. D: "relative to batch 64"; SPEC §3).
REFERENCE_BATCH_SIZE = 64
#: Relative error bounds of the L2 codec digests (App. D: 1e-3, 1e-2, 3e-2).
REL_EBS = (1e-3, 1e-2, 3e-2)
#: What the probe computes (``--layers``): L1 decisions and margins, L2 codec digests.
LAYERS = ("l1", "l2")
#: The probe's windows by default: ``compact``'s (:class:`~lam_ref.text.pipeline.CompactionConfig`'s
#: defaults, SPEC §3, §3.4): at most 512 cl100k tokens, each ending where the encoder stops reading,
#: so a default probe certifies the windows a default ``compact`` cuts (issue 35 §2;
#: ``determinism/test_reports.py`` checks both against the config).
DEFAULT_WINDOW = 512
DEFAULT_FIT_WINDOW = True


# ----------------------------------------------------------------------------------------------
# devices


def device_kwargs(device: Any) -> dict[str, Any]:
    """Keyword arguments that send :func:`lam_ref.substitution.substitute` to ``device``: ``{}`` for
    the CPU; ``{"device": "cuda"}`` when CuPy and a CUDA device are present; otherwise
    :class:`LamValueError` naming the device."""
    return {} if validate_device(device) == "cpu" else {"device": device}


def greedy_map(embeddings: Any, t: float, groups: Sequence[tuple[int, int]] | None = None, *, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """The greedy rule (exhaustive Algorithm 2 = the oracle, SPEC §5) per group: ``(π, distances)`` in global ids.

    ``device="cuda"`` is passed to :func:`lam_ref.substitution.substitute` when that function
    accepts a ``device`` argument; otherwise it is refused (one line naming the device).
    """
    from ..substitution import substitute

    kwargs: dict[str, Any] = {"exhaustive": True, **device_kwargs(device)}
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    pi = np.arange(n, dtype=np.int64)
    dist = np.zeros(n)
    for a, b in groups_or_all(n, groups):
        res = substitute(e[a:b], t, **kwargs)
        pi[a:b] = np.asarray(res.pi) + a
        dist[a:b] = np.asarray(res.distances)
    return pi, dist


# ----------------------------------------------------------------------------------------------
# probe


def _parse_list(values: Iterable[Any], name: str, conv: Callable[[Any], Any]) -> list[Any]:
    out = []
    for v in values:
        out.append(conv(v))
    if not out:
        raise LamValueError(f"{name}: give at least one value")
    if len(set(out)) != len(out):
        raise LamValueError(f"{name}: repeated value in {out!r}")
    return out


def _batch(v: Any) -> int:
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            raise LamValueError(f"batch size must be a positive integer, got {v!r}") from None
    return validate_positive_int(v, "batch size")


def _threshold(v: Any) -> float:
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise LamValueError(f"threshold must be a number in [-1, 1], got {v!r}") from None
    return validate_threshold(v, "threshold")


def _codec_digests(e: np.ndarray, rel_ebs: Sequence[float], device: str) -> list[dict[str, Any]]:
    flat = np.ascontiguousarray(e, dtype=np.float32).reshape(-1)
    out = []
    for r in rel_ebs:
        if device == "cuda":
            cupy = require_cuda()
            b = _codec.codec_encode_rel(cupy.asarray(flat), r, xp=cupy)
        else:
            b = _codec.codec_encode_rel(flat, r)
        out.append({"rel_eb": r, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)})
    return out


def _margin_summary(m: np.ndarray) -> dict[str, Any]:
    fin = m[np.isfinite(m)]
    if fin.size == 0:
        return {"decisions": 0, "min_sq": None, "min_cos": None, "argmin": None, "p01_cos": None, "median_cos": None}
    return {
        "decisions": int(fin.size),
        "min_sq": float(fin.min()),
        "min_cos": float(fin.min()) / 2.0,
        "argmin": int(np.flatnonzero(m == fin.min())[0]),
        "p01_cos": float(np.percentile(fin, 1)) / 2.0,
        "median_cos": float(np.median(fin)) / 2.0,
    }


def _margins_json(m: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else float(f"{x:.6g}") for x in m.tolist()]


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def _describe_step(encoder: str, dtype: str, device: str, threads: int | None, backend: str = "torch") -> dict[str, Any]:
    """Load the encoder (timed) and describe it and the execution target (where the encodings run)."""
    _set_threads(threads)
    t0 = time.perf_counter()
    enc = probe_encoder(encoder, dtype, device, backend)
    load_s = time.perf_counter() - t0
    return {"encoder": enc.describe(), "target": execution_target(device), "load_encoder_s": load_s}


def _encode_step(texts: list[str], encoder: str, dtype: str, device: str, threads: int | None, bs: int,
                 codec: bool, backend: str = "torch") -> dict[str, Any]:
    """All windows at one batch size (App. D), their SHA-256 and, with ``codec``, the L2 codec digests."""
    import socket

    _set_threads(threads)
    enc = probe_encoder(encoder, dtype, device, backend)
    t0 = time.perf_counter()
    e = encode_corpus(texts, enc, bs)
    row: dict[str, Any] = {"batch_size": bs, "embeddings_sha256": hashlib.sha256(e.tobytes()).hexdigest(),
                           "encode_s": time.perf_counter() - t0, "codec": None, "codec_s": None}
    if codec:
        t0 = time.perf_counter()
        row["codec"] = _codec_digests(e, REL_EBS, device)
        row["codec_s"] = time.perf_counter() - t0
    torch = sys.modules.get("torch")
    where = {"batch_size": bs, "host": socket.gethostname(), "pid": os.getpid(),
             "torch_threads": int(torch.get_num_threads()) if torch is not None else None}
    return {"e": e, "row": row, "where": where}


def _jitter_step(ref: dict[str, Any], other: dict[str, Any], groups: list[tuple[int, int]]) -> dict[str, float]:
    return jitter(ref["e"], other["e"], groups)


def _greedy_step(encoded: dict[str, Any], t: float, groups: list[tuple[int, int]], device: str) -> dict[str, Any]:
    """The greedy rule and the decision margins of one (batch size, threshold)."""
    e = encoded["e"]
    t0 = time.perf_counter()
    pi, dist = greedy_map(e, t, groups, device=device)
    greedy_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    m = decision_margins(e, pi, t, groups)
    return {"pi": pi, "dist": dist, "m": m, "greedy_s": greedy_s, "margin_s": time.perf_counter() - t0}


#: A progress callback: called after each labelled step with ``(label, windows encoded by it)``.
Progress = Callable[[str, int], None]


class InlineSteps:
    """Runs every probe step here, when it is submitted (the serial probe). ``progress`` (a
    :data:`Progress` callback, e.g. the command line's one progress bar) hears of each labelled step."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.progress = progress

    def share(self, obj: Any) -> Any:
        return obj

    def submit(self, fn: Callable[..., Any], *args: Any, label: str | None = None, windows: int = 0) -> Any:
        out = fn(*args)
        if self.progress is not None and label:
            self.progress(label, windows)
        return out

    def gather(self, handles: list[Any]) -> list[Any]:
        return list(handles)

    def close(self) -> None:
        pass


def probe_steps_total(batch_sizes: int, thresholds: int, layers: Sequence[str] = LAYERS) -> int:
    """How many labelled steps a serial probe reports: one encoding per batch size, one greedy run
    per (batch size, threshold) with ``l1``."""
    return batch_sizes * (1 + (thresholds if "l1" in layers else 0))


def check_options(batch_sizes: Sequence[Any] = DEFAULT_BATCH_SIZES, thresholds: Sequence[Any] = DEFAULT_THRESHOLDS,
                  dtype: str = "float32", threads: int | None = None, device: str = "cpu", layers: Sequence[str] = LAYERS,
                  jitter_bound: float | None = None, reference_batch_size: int | None = None, backend: str = "torch",
                  **_ignored: Any) -> tuple[list[int], list[float], str, int | None, tuple[str, ...], int]:
    """The probe's options checked and parsed, before anything loads: ``(batch sizes, thresholds,
    device, threads, layers, reference batch size)``; :class:`LamValueError` naming the first bad one
    (an encoder backend whose packages are missing included, SPEC §4.5)."""
    from ..text.backends import require_backend
    from .encoder import check_backend_dtype

    check_backend_dtype(require_backend(backend), dtype)
    bss = _parse_list(batch_sizes, "batch sizes", _batch)
    ts = _parse_list(thresholds, "thresholds", _threshold)
    if dtype not in DTYPES:
        raise LamValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    device = validate_device(device)
    if threads is not None:
        threads = validate_positive_int(threads, "threads")
    lay = tuple(layers)
    if not lay or any(x not in LAYERS for x in lay) or len(set(lay)) != len(lay):
        raise LamValueError(f"layers must be a non-empty subset of {','.join(LAYERS)}, got {','.join(map(str, lay))!r}")
    if jitter_bound is not None:
        risk_bound(jitter_bound)
    ref = REFERENCE_BATCH_SIZE if reference_batch_size is None and REFERENCE_BATCH_SIZE in bss else reference_batch_size
    ref = bss[0] if ref is None else _batch(ref)
    if ref not in bss:
        raise LamValueError(f"reference batch size {ref} is not among the batch sizes {bss}")
    return bss, ts, device, threads, lay, ref


class _EncoderHorizon:
    """The window cutter's view of ``encoder`` (:class:`~lam_ref.text.chunking.Horizon`: its own
    tokenizer and input limit, SPEC §3.4; the weights do not matter), loaded at the first window
    cut: after the inputs are checked, as before any encoder loads."""

    def __init__(self, name: str) -> None:
        self.name = name

    @functools.cached_property
    def _encoder(self) -> Any:
        from ..text.encoders import get_encoder

        return get_encoder(self.name, "cpu")

    @property
    def max_tokens(self) -> int | None:
        return self._encoder.max_tokens

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        return self._encoder.token_lengths(texts)

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None:
        return self._encoder.piece_spans(text)


def probe_corpus(paths: Sequence[str], *, encoder: str = "all-MiniLM-L6-v2", window: int = DEFAULT_WINDOW,
                 fit_window: bool = DEFAULT_FIT_WINDOW, fmt: str | None = None, scope: str = "trajectory") -> Corpus:
    """The windows :func:`probe` encodes (:func:`~lam_ref.determinism.corpus.load_corpus`): with
    ``fit_window`` each ends where ``encoder`` stops reading (SPEC §3.4, ``input.window_fit``
    ``encoder``), else fixed ``window``-token windows (``none``)."""
    horizon = _EncoderHorizon(encoder) if fit_window else None
    return load_corpus(paths, window=window, fmt=fmt, scope=scope, horizon=horizon)


def probe(
    paths: Sequence[str],
    *,
    encoder: str = "all-MiniLM-L6-v2",
    batch_sizes: Sequence[Any] = DEFAULT_BATCH_SIZES,
    thresholds: Sequence[Any] = DEFAULT_THRESHOLDS,
    dtype: str = "float32",
    threads: int | None = None,
    device: str = "cpu",
    layers: Sequence[str] = LAYERS,
    jitter_bound: float | None = None,
    reference_batch_size: int | None = None,
    scope: str = "trajectory",
    window: int = DEFAULT_WINDOW,
    fmt: str | None = None,
    backend: str = "torch",
    progress: Progress | None = None,
    fit_window: bool = DEFAULT_FIT_WINDOW,
    embeddings_out: dict[int, np.ndarray] | None = None,
    steps: Any = None,
) -> dict[str, Any]:
    """Encode every window once per batch size and record decisions, margins, jitter and digests (App. D).

    Args:
        paths: trajectory files or folders (every loader of :mod:`lam_ref.text.loaders`).
        encoder: ``all-MiniLM-L6-v2`` (default), a sentence-transformers name or local folder, or ``hash``.
        batch_sizes: encoding batch sizes (default the paper's 8..256).
        thresholds: cosine thresholds (default 0.99, 0.95).
        dtype: encoder precision: float32, bfloat16 or float16.
        threads: torch CPU threads (``None``: leave as is).
        device: cpu or cuda (encoder, greedy rule when substitute supports it, codec).
        layers: ``l1`` (decisions, margins) and/or ``l2`` (codec digests).
        jitter_bound: a stated pairwise-cosine jitter γ; decisions with margin <= 4γ are at risk.
            ``None``: the larger of the cosine jitter measured across ``batch_sizes`` and
            :data:`~lam_ref.determinism.margins.MACHINE_JITTER` (the jitter between machines and CPU
            kernels, measured by the kernel matrix; docs/determinism.md).
        reference_batch_size: jitter is relative to it (default 64 when listed, else the first).
        scope: ``trajectory`` (SPEC §1: matching within a trajectory) or ``corpus``.
        window: window size in cl100k tokens.
        fit_window: each window ends where ``encoder`` stops reading (SPEC §3.4), as ``compact``'s
            default windows do (the default, :data:`DEFAULT_FIT_WINDOW`; ``lam-ref determinism
            probe`` passes its ``--window-fit``); ``False``: the paper's fixed ``window``-token
            windows. Recorded with ``window`` as the report's ``input.window_fit``.
        fmt: loader format (default: detect per file).
        backend: the encoder backend, ``torch`` or ``onnx`` (SPEC §4.5; named in ``encoder.backend``).
        progress: a :data:`Progress` callback told of each step (serial probe only); ``None``: silent.
        embeddings_out: when a dict, receives the embedding matrix of every batch size.
        steps: where the steps run (``share``/``submit``/``gather``/``close``): ``None`` runs them
            here, one after the other (:class:`InlineSteps`); :class:`lam_ref.distributed.files.DaskSteps`
            submits each (encoder load and description, one encoding per batch size, one jitter per
            batch size, one greedy per batch size and threshold) as a Dask task. The report is the
            same apart from timings and the ``distributed`` key.

    Returns:
        The report (a JSON-ready dict; schema in docs/determinism.md).

    Raises:
        LamValueError: any bad argument (checked before the encoder loads) or input file.
    """
    bss, ts, device, threads, lay, ref = check_options(batch_sizes, thresholds, dtype, threads, device, layers,
                                                       jitter_bound, reference_batch_size, backend)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    corpus = probe_corpus(paths, encoder=encoder, window=window, fit_window=fit_window, fmt=fmt, scope=scope)
    timings["chunk_s"] = time.perf_counter() - t0
    own = steps is None
    if own:
        if progress is not None and not callable(progress):
            if progress is not False:
                raise LamValueError(f"progress must be a callable (label, windows) or None, got {progress!r}")
            progress = None
        steps = InlineSteps(progress)
    try:
        texts = steps.share(corpus.texts)
        groups = [tuple(g) for g in corpus.groups]
        info_h = steps.submit(_describe_step, encoder, dtype, device, threads, backend)
        enc_h = {bs: steps.submit(_encode_step, texts, encoder, dtype, device, threads, bs, "l2" in lay, backend,
                                  label=f"encode batch {bs}", **({"windows": len(corpus.texts)} if own else {})) for bs in bss}
        jit_h = {bs: steps.submit(_jitter_step, enc_h[ref], enc_h[bs], groups) for bs in bss}
        order = [ref] + [b for b in bss if b != ref]
        keys = [(bs, t) for bs in order for t in ts] if "l1" in lay else []
        greedy_h = {key: steps.submit(_greedy_step, enc_h[key[0]], key[1], groups, device,
                                      label=f"greedy batch {key[0]} t={key[1]}") for key in keys}
        got = steps.gather([info_h, *enc_h.values(), *jit_h.values(), *greedy_h.values()])
    finally:
        if own:
            steps.close()
    info, got = got[0], got[1:]
    encoded = dict(zip(bss, got[: len(bss)]))
    jitters = dict(zip(bss, got[len(bss) : 2 * len(bss)]))
    greedy = dict(zip(keys, got[2 * len(bss) :]))
    timings["load_encoder_s"] = info["load_encoder_s"]
    embs = {bs: encoded[bs]["e"] for bs in bss}
    encodings = [encoded[bs]["row"] for bs in bss]
    for row in encodings:
        row["jitter"] = jitters[row["batch_size"]]
    measured = max(r["jitter"]["cos"] for r in encodings)
    gamma = max(measured, MACHINE_JITTER) if jitter_bound is None else float(jitter_bound)
    bound = risk_bound(gamma)
    runs = []
    for bs, t in keys:
        g = greedy[(bs, t)]
        pi, dist, m = g["pi"], g["dist"], g["m"]
        kept = pi == np.arange(pi.size)
        deleted = np.flatnonzero(~kept)
        dh = float(dist[deleted].max()) if deleted.size else 0.0
        rm = greedy[(ref, t)]["m"]
        fin = rm[np.isfinite(rm)]
        certified = bool(fin.size == 0 or fin.min() - MARGIN_SLACK > jitters[bs]["sq"] + MARGIN_SLACK)
        runs.append({
            "batch_size": bs,
            "threshold": t,
            "deletion_digest": _digest.deletion_digest(deleted),
            "map_digest": _digest.map_digest(pi),
            "dropped": int(deleted.size),
            "kept": int(kept.sum()),
            "delta_hat": _digest.fmt17(dh),
            "deleted": [[int(i), int(pi[i])] for i in deleted.tolist()],
            "margin": _margin_summary(m),
            "margins": _margins_json(m),
            "at_risk": at_risk(m, bound).tolist(),
            "certified_vs_reference": certified,
            "greedy_s": g["greedy_s"],
            "margin_s": g["margin_s"],
        })
    runs.sort(key=lambda r: (bss.index(r["batch_size"]), ts.index(r["threshold"])))
    if embeddings_out is not None:
        embeddings_out.update(embs)
    desc = info["encoder"]
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "input_sha256": corpus.input_sha256,
        "input": {
            "paths": corpus.paths,
            "trajectories": len(corpus.trajectories),
            "chunks": len(corpus.texts),
            "distinct_texts": len(distinct_texts(corpus.texts)[0]),  # encoded once per batch size (SPEC §4.4)
            "window": corpus.window,
            "window_fit": corpus.window_fit,
            "tokenizer": corpus.tokenizer,
            "scope": corpus.scope,
            "groups": [list(g) for g in corpus.groups],
        },
        "encoder": desc,
        "settings": {
            "batch_sizes": bss,
            "thresholds": ts,
            "reference_batch_size": ref,
            "dtype": dtype,
            "device": device,
            "threads": threads,
            "layers": list(lay),
            "greedy": "exhaustive (equals the oracle, SPEC §5)",
        },
        "jitter": {
            "measured_cos": measured,
            "measured_coord": max(r["jitter"]["coord"] for r in encodings),
            "measured_sq": max(r["jitter"]["sq"] for r in encodings),
            "stated_cos": None if jitter_bound is None else float(jitter_bound),
            "assumed_cos": gamma,
            "at_risk_bound_sq": bound,
        },
        "encodings": encodings,
        "runs": runs,
        "target": info["target"],
        "timings_s": timings | {"total_encode_s": sum(r["encode_s"] for r in encodings)},
    } | ({} if own else {"distributed": {**steps.describe(), "encodings": [encoded[bs]["where"] for bs in bss]}})



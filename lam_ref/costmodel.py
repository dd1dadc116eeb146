r"""The deployment cost model (paper §2.6, App. E, G, M; SPEC §13): claim AMDAHL and the schedule gains.

Everything here is arithmetic on named inputs; every input carries its source (table or section of
the paper, or a measurement made here by ``lam-ref bench constants``).

Units. Equation 2 as printed mixes units (``Δ/R_h`` divides tokens by bytes per second). The
consistent form used here charges ``β·Δ/R_h`` and ``β·Δ/R_z`` (``β`` bytes per token) and a
context-dependent prefill (SPEC §13):

* prefill of ``n`` arriving tokens against a context of ``C``: ``(2Pn + 2LdnC) / (μ_c F)``;
* one decode step, per sequence at batch ``b``: ``(2P/b + C·KV) / (μ_m B)`` — the weights
  (``2P`` bytes in fp16) are read once per step for the whole batch, each sequence reads its own KV;
* re-prefill of a context of ``C`` tokens: ``(2PC + 2LdC²) / (μ_c F)``.

A turn prefills its ``Δ`` arriving tokens (eq. 2's ``Δ/R_p``, charged on every arriving token as
printed) and decodes ``G_a`` tokens against the context after admission. The growth regime adds
``Δ(1 - r)`` tokens to the context per turn (per-arrival accounting, Table 27; never ``C(1 - r)``).

Schedules (Tables 2 and 8):

* ``admit`` — test before prefill (LAM, L0): no re-prefill, compaction cost only;
* ``delete_in_place`` — prefill, then delete: every turn is an event that rebuilds the KV cache from
  the earliest deletion on (the whole context by default, ``invalidated_share`` of it otherwise);
* ``wall`` — defer compaction to the budget wall: a method that is not prefix-stable compresses the
  whole context when it is over the budget ``B_ctx`` and rebuilds its cache. In the growth regime the
  context passes the wall at ``B_ctx/Δ ≈ 50`` turns and stays past it, so from there every turn is an
  event; we charge every turn as one (the turns before the wall hold under 0.1 % of the cost), and
  each event runs the method's compressor on the whole context (its cost class, App. M.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ._io import InputError, read_json_input
from .geometry import LamValueError

__all__ = [
    "ModelSpec",
    "EncoderSpec",
    "DeviceProfile",
    "Workload",
    "Run",
    "LLAMA31_8B",
    "XLMR_LARGE",
    "MINILM_L6",
    "encoder_matmul_flops",
    "GB10",
    "A100",
    "PROFILES",
    "PAPER",
    "profile",
    "load_profile",
    "prefill_time",
    "decode_step_time",
    "reprefill_time",
    "turn_time",
    "compaction_time",
    "phi",
    "amdahl_ceiling",
    "kv_capacity_tokens",
    "exhaustion_turn",
    "simulate",
    "snapshot_steady_state",
    "mean_context_budget",
    "class1_time",
    "class2_time",
    "class3_time",
    "table2",
    "table7",
    "table8",
    "table27",
    "table_m",
    "TABLES",
    "with_overrides",
]


# --------------------------------------------------------------------------------------------------
# Inputs, each with its source
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """A served transformer (App. M.1 symbols). ``params`` is P, ``layers`` L, ``d_model`` d."""

    name: str
    params: float
    layers: int
    d_model: int
    kv_heads: int
    head_dim: int
    bytes_weight: int = 2
    bytes_kv: int = 2
    source: str = ""

    @property
    def kv_bytes_per_token(self) -> int:
        """Bytes of KV cache per token: ``2 (K and V) · L · H_kv · d_h · b_kv``."""
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_kv


#: Llama-3.1-8B in fp16 (SPEC §13; App. M.1): KV = 131,072 B/token.
LLAMA31_8B = ModelSpec("Llama-3.1-8B", 8.03e9, 32, 4096, 8, 128, source="SPEC §13; App. M.1 (8B model, fp16)")


@dataclass(frozen=True)
class EncoderSpec:
    """A prefill-only compressor's backbone (App. M.1, class 2)."""

    name: str
    params: float
    layers: int
    d_model: int
    window: int | None = None  # chunked encoder: attention windowed at W tokens (linear in T)
    source: str = ""


#: LLMLingua-2's cost-model backbone, XLM-R-large (App. M.2), a chunked encoder with 512-token windows.
XLMR_LARGE = EncoderSpec("XLM-R-large", 560e6, 24, 1024, window=512,
                         source="App. M.2 (LLMLingua-2 uses XLM-R-large); 560M parameters, 24 layers, d=1024 (model card)")

#: The retrieval encoder of LAM's L1 (SPEC §4), all-MiniLM-L6-v2: 6 BERT layers, d = 384, feed-forward
#: 1536; ``params`` counts the weights of the layers' matrix products only (``6·(4d² + 2·d·1536)``,
#: no embeddings), the ``P`` of ``2PT``.
MINILM_L6 = EncoderSpec("all-MiniLM-L6-v2", 6 * (4 * 384 * 384 + 2 * 384 * 1536), 6, 384,
                        source="model card / config.json: 6 layers, hidden 384, intermediate 1536")


def encoder_matmul_flops(lengths: Sequence[int] | np.ndarray, encoder: EncoderSpec = MINILM_L6) -> float:
    """The matrix-product FLOPs of one bidirectional encoder forward pass over sequences of the given
    token lengths (App. M.1's ``2PT`` plus full attention): ``Σ_n 2P·n + 4·L·d·n²`` (``QKᵀ`` and
    ``AV``, ``2·n²·d`` each, per layer). A padded batch of ``b`` rows at length ``n`` is ``b`` times
    ``n``; elementwise work (softmax, GELU, layer norm) is not counted. Checked against torch's own
    FLOP counter on the real model (``tests/test_costmodel.py``)."""
    n = np.asarray(lengths, dtype=np.float64)
    if n.ndim != 1 or (n.size and (not np.all(np.isfinite(n)) or n.min() < 0)):
        raise LamValueError(f"lengths must be a 1-D sequence of non-negative token counts, got {lengths!r:.80}")
    return float(np.sum(2 * encoder.params * n + 4 * encoder.layers * encoder.d_model * n * n))


@dataclass(frozen=True)
class DeviceProfile:
    """Device constants (App. G, Table 22) and efficiency factors (App. M.1 fairness rule).

    Attributes:
        mem_bw: streaming bandwidth B in bytes/s (triad).
        flops: dense matmul rate F in FLOP/s.
        memory_bytes: device memory that holds weights and KV cache.
        mu_c / mu_m: compute / memory efficiency granted to LLM work.
        encoder_tok_s: R_e (R_enc), encoder throughput, tokens/s.
        hash_bytes_s: R_h, xxHash3 throughput, bytes/s.
        verify_pairs_s: R_v (R_ℓ2), exact ℓ2 verification, pairs/s.
        quantize_bytes_s: B_q, quantizer throughput, bytes moved/s (6 B per element).
        codec_bytes_s: R_z, error-bounded codec throughput, bytes/s; ``codec_ratio`` CR its ratio.
        beta: bytes per token β of observation text.
        sources: where each value comes from (field name → source).
    """

    name: str
    mem_bw: float
    flops: float
    memory_bytes: float
    mu_c: float = 0.70
    mu_m: float = 1.00
    encoder_tok_s: float = 71_708.0
    hash_bytes_s: float = 38.2e9
    verify_pairs_s: float = 13.0e6
    quantize_bytes_s: float = 65.4e9
    codec_bytes_s: float = 53.3e9
    codec_ratio: float = 5.18
    beta: float = 3.68
    sources: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = dict(self.sources)
        return d


_TABLE22 = "App. G, Table 22 (GB10)"
GB10 = DeviceProfile(
    "GB10",
    mem_bw=237.4e9,
    flops=90.3e12,
    memory_bytes=128e9,
    sources={
        "mem_bw": _TABLE22 + ", triad",
        "flops": _TABLE22 + ", fp16 8192³ GEMM",
        "memory_bytes": "128 GB unified memory (GB10); gives the 854K-token KV capacity of App. M.2",
        "mu_c": "App. M.1 fairness rule", "mu_m": "App. M.1 fairness rule",
        "encoder_tok_s": _TABLE22 + ", bge-base encode; Table 1",
        "hash_bytes_s": _TABLE22 + ", xxHash3 single thread; Table 1",
        "verify_pairs_s": _TABLE22 + ", exact ℓ2 verify at D=768; Table 1",
        "quantize_bytes_s": _TABLE22 + ", Q_ε quantize",
        "codec_bytes_s": _TABLE22 + ", cuSZp", "codec_ratio": _TABLE22 + ", cuSZp ratio 5.18×",
        "beta": _TABLE22 + ", SWE-smith observation records; Table 1",
    },
)

_A100_NOTE = "not measured for A100 in the paper; GB10 value (Table 22)"
A100 = DeviceProfile(
    "A100",
    mem_bw=1365e9,
    flops=312e12,
    memory_bytes=40e9,
    sources={
        "mem_bw": "App. E.2: A100-SXM4-40GB at 1,365 GB/s achieved bandwidth",
        "flops": "NVIDIA A100 datasheet: 312 TFLOP/s dense fp16 tensor (the paper prints no measured value)",
        "memory_bytes": "A100-SXM4-40GB: 40 GB HBM2",
        "mu_c": "App. M.1 fairness rule", "mu_m": "App. M.1 fairness rule",
        **{k: _A100_NOTE for k in ("encoder_tok_s", "hash_bytes_s", "verify_pairs_s", "quantize_bytes_s",
                                   "codec_bytes_s", "codec_ratio", "beta")},
    },
)

PROFILES: dict[str, DeviceProfile] = {"GB10": GB10, "A100": A100}


@dataclass(frozen=True)
class Workload:
    """Run-dependent inputs (Table 1 online terms; App. E.1, M.3)."""

    delta: float = 636.8  # arriving tokens per turn (SPEC §13; "637" in Table 7)
    g_a: float = 38.8  # decoded tokens per turn (SPEC §13; "39" in Table 7)
    turns: int = 1453  # growth run length (Table 2, App. E.1)
    budget: float = 32_000.0  # context budget B_ctx (App. E.1)
    candidate_pairs: float = 0.0  # |𝒞| pairs verified per event (run-dependent; 0 = negligible)
    sources: Mapping[str, str] = field(default_factory=lambda: {
        "delta": "SPEC §13 (Table 7 prints 637)", "g_a": "SPEC §13 (Table 7 prints 39)",
        "turns": "§3.2, App. E.1: 1,453 turns", "budget": "App. E.1: B_ctx = 32K",
    })


#: Measured removal rates (per arriving token) and the paper's per-method effective removal (Table 2).
PAPER = {
    "r_lam": 0.2237,  # SPEC §13, LAM full pipeline (Table 2 prints 0.22)
    "r_l0": 0.17,  # SPEC §13, L0 alone (Table 2)
    "invalidated_share": 0.94,  # App. E.2: mean invalidated share of context, 300 trajectories
    "r_masking": 0.75, "r_summarization": 0.90, "r_semdedup": 0.32, "r_llmlingua2": 0.24,  # Table 2
    "summarization_rho": 10.0,  # Table 2 (ρ = 10)
}


def profile(name_or_path: str | DeviceProfile) -> DeviceProfile:
    """A device profile by name (``GB10``, ``A100``) or from a ``lam-ref bench constants`` JSON file.

    Raises:
        LamValueError: unknown name, unreadable file or a file without the needed fields.
    """
    if isinstance(name_or_path, DeviceProfile):
        return name_or_path
    key = str(name_or_path)
    for k, v in PROFILES.items():
        if k.lower() == key.lower():
            return v
    if Path(key).suffix.lower() == ".json" or Path(key).exists():
        return load_profile(key)
    raise LamValueError(f"device {key!r} is neither a known profile ({', '.join(PROFILES)}) nor a profile JSON file")


_FIELDS = ("mem_bw", "flops", "memory_bytes", "mu_c", "mu_m", "encoder_tok_s", "hash_bytes_s", "verify_pairs_s",
           "quantize_bytes_s", "codec_bytes_s", "codec_ratio", "beta")


def load_profile(path: str | Path) -> DeviceProfile:
    """Read a profile written by ``lam-ref bench constants --out`` (its ``profile`` object).

    Raises:
        LamValueError: the file is missing, not JSON, or a field is absent, non-finite or not positive.
    """
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"device profile {str(path)!r} does not exist")
    try:
        doc = read_json_input(p)
    except InputError as exc:
        raise LamValueError(f"device profile {str(path)!r} is not readable JSON: {exc.problem}") from exc
    prof = doc.get("profile", doc) if isinstance(doc, dict) else None
    if not isinstance(prof, dict):
        raise LamValueError(f"device profile {str(path)!r} holds no profile object")
    vals: dict[str, Any] = {}
    for f in _FIELDS:
        v = prof.get(f)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
            raise LamValueError(f"device profile {str(path)!r}: field {f!r} = {v!r} must be a positive number")
        vals[f] = float(v)
    name = str(prof.get("name", p.stem))
    sources = prof.get("sources") if isinstance(prof.get("sources"), dict) else {}
    return DeviceProfile(name, sources={str(k): str(v) for k, v in sources.items()}, **vals)


# --------------------------------------------------------------------------------------------------
# Serving terms (SPEC §13)
# --------------------------------------------------------------------------------------------------


def _check_nonneg(**kw: float) -> None:
    for k, v in kw.items():
        if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v) or v < 0:
            raise LamValueError(f"{k} = {v!r} must be a finite number >= 0")


def _check_batch(batch: int) -> None:
    if not isinstance(batch, (int, np.integer)) or isinstance(batch, bool) or batch < 1:
        raise LamValueError(f"batch = {batch!r} must be an integer >= 1")


def prefill_time(n_new: float, context: float, model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10) -> float:
    """Seconds to prefill ``n_new`` tokens against ``context`` cached tokens: ``(2Pn + 2LdnC)/(μ_c F)``."""
    _check_nonneg(n_new=n_new, context=context)
    return (2 * model.params * n_new + 2 * model.layers * model.d_model * n_new * context) / (device.mu_c * device.flops)


def decode_step_time(context: float, batch: int = 1, model: ModelSpec = LLAMA31_8B,
                     device: DeviceProfile = GB10) -> float:
    """Seconds per decoded token per sequence at batch ``b``: ``(b_w·P/b + C·KV)/(μ_m B)``.

    The weights are streamed once per step for the whole batch (amortised over ``b`` sequences);
    each sequence reads its own KV cache.
    """
    _check_nonneg(context=context)
    _check_batch(batch)
    return (model.bytes_weight * model.params / batch + context * model.kv_bytes_per_token) / (device.mu_m * device.mem_bw)


def reprefill_time(context: float, model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10) -> float:
    """Seconds to rebuild the KV cache of ``context`` tokens: ``(2PC + 2LdC²)/(μ_c F)`` (App. E.2).

    The paper's "≈538 s at C = 360K" is the quadratic term alone (SPEC §14); this returns both terms.
    """
    return prefill_time(context, 0.0, model, device) + (
        2 * model.layers * model.d_model * float(context) ** 2 / (device.mu_c * device.flops))


def turn_time(context: float, workload: Workload = Workload(), *, removal: float = 0.0, batch: int = 1,
              model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10) -> float:
    """Serving time of one turn (eq. 2's first sum): prefill ``Δ`` against ``C``, then ``G_a`` decode
    steps against the context after admitting ``Δ(1 - r)`` tokens."""
    _check_removal(removal)
    added = workload.delta * (1.0 - removal)
    return (prefill_time(workload.delta, context, model, device)
            + workload.g_a * decode_step_time(context + added, batch, model, device))


def compaction_time(n_tokens: float, device: DeviceProfile = GB10, *, candidate_pairs: float = 0.0,
                    l0_only: bool = False) -> float:
    """Eq. 2's compaction term for one event, unit-consistent: ``Δ(1/R_e + β/R_h + β/R_z) + |𝒞|/R_v``.

    ``l0_only`` charges the exact-hash layer alone (``βΔ/R_h``): L0 needs no encoder, verifier or codec.
    """
    _check_nonneg(n_tokens=n_tokens, candidate_pairs=candidate_pairs)
    if l0_only:
        return device.beta * n_tokens / device.hash_bytes_s
    return (n_tokens / device.encoder_tok_s + device.beta * n_tokens / device.hash_bytes_s
            + device.beta * n_tokens / device.codec_bytes_s + candidate_pairs / device.verify_pairs_s)


def _check_removal(r: float) -> None:
    if not isinstance(r, (int, float, np.floating)) or not math.isfinite(r) or not 0.0 <= r < 1.0:
        raise LamValueError(f"removal = {r!r} must be in [0, 1)")


# --------------------------------------------------------------------------------------------------
# φ and the Amdahl ceiling (Table 7, claim AMDAHL)
# --------------------------------------------------------------------------------------------------


def phi(context: float, batch: int = 1, *, delta: float = 637.0, g_a: float = 39.0,
        model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10) -> float:
    """φ: the share of one turn's latency that scales with the context ``C`` (App. E.1, claim AMDAHL).

    Context-scaling part: the ``2LdΔC`` prefill term and the ``G_a·C·KV`` decode reads; the rest
    (``2PΔ`` prefill, ``G_a`` weight streams amortised over the batch) does not scale with ``C``.
    Table 7 uses ``Δ = 637``, ``G_a = 39`` and decimal ``K`` (32K = 32,000 tokens).
    """
    _check_nonneg(context=context, delta=delta, g_a=g_a)
    _check_batch(batch)
    mf, mb = device.mu_c * device.flops, device.mu_m * device.mem_bw
    ctx = 2 * model.layers * model.d_model * delta * context / mf + g_a * context * model.kv_bytes_per_token / mb
    rest = 2 * model.params * delta / mf + g_a * model.bytes_weight * model.params / batch / mb
    return ctx / (ctx + rest)


def amdahl_ceiling(share: float) -> float:
    """``1/(1 - φ)``: the most any context reduction can speed a turn up (claim AMDAHL)."""
    if not isinstance(share, (int, float, np.floating)) or not 0.0 <= share < 1.0:
        raise LamValueError(f"phi = {share!r} must be in [0, 1)")
    return 1.0 / (1.0 - share)


# --------------------------------------------------------------------------------------------------
# Growth regime, KV capacity, schedules (Tables 2, 8, 27)
# --------------------------------------------------------------------------------------------------


def kv_capacity_tokens(model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10, batch: int = 1) -> float:
    """Tokens of KV cache that fit beside the weights, per sequence: ``(M - b_w·P)/(b·KV)`` (App. M.2: 854K)."""
    _check_batch(batch)
    free = device.memory_bytes - model.bytes_weight * model.params
    if free <= 0:
        raise LamValueError(f"device {device.name!r}: memory {device.memory_bytes:g} B does not hold the weights")
    return free / (batch * model.kv_bytes_per_token)


def exhaustion_turn(removal: float, workload: Workload = Workload(), model: ModelSpec = LLAMA31_8B,
                    device: DeviceProfile = GB10, batch: int = 1) -> int:
    """The last turn whose context still fits the KV cache in the growth regime ``C_n = nΔ(1 - r)``
    (App. E.1, M.3: 1,341 uncompacted, 1,615 L0, 1,727 LAM)."""
    _check_removal(removal)
    return int(math.floor(kv_capacity_tokens(model, device, batch) / (workload.delta * (1.0 - removal))))


@dataclass
class Run:
    """Per-turn costs of one schedule in the growth regime (arrays of length ``turns``, seconds)."""

    schedule: str
    removal: float
    batch: int
    context: np.ndarray  # context after the turn's admission
    serving: np.ndarray
    compaction: np.ndarray
    reprefill: np.ndarray

    @property
    def per_turn(self) -> np.ndarray:
        return self.serving + self.compaction + self.reprefill

    @property
    def total(self) -> float:
        return float(self.per_turn.sum())

    @property
    def mean_per_turn(self) -> float:
        return self.total / len(self.context)

    @property
    def cumulative(self) -> np.ndarray:
        return np.cumsum(self.per_turn)

    def share(self, part: str) -> float:
        """Share of the total in ``serving``, ``compaction`` or ``reprefill``."""
        return float(getattr(self, part).sum()) / self.total


SCHEDULES = ("admit", "delete_in_place", "wall")


def simulate(schedule: str, removal: float, *, batch: int = 1, workload: Workload = Workload(),
             model: ModelSpec = LLAMA31_8B, device: DeviceProfile = GB10, invalidated_share: float = 1.0,
             compressor: Callable[[float], float] | None = None, l0_only: bool = False) -> Run:
    """Eq. 2 summed over the growth run for one schedule (App. E.1–E.2, Tables 2 and 8).

    Args:
        schedule: ``admit`` (test before prefill), ``delete_in_place`` or ``wall`` (module docstring).
        removal: per-arrival removal rate r; the context grows by ``Δ(1 - r)`` per turn.
        batch: decode batch b.
        invalidated_share: share s of the context whose KV a deletion voids; the rebuild is
            charged as ``reprefill(s·C)`` (App. E.2: s = 0.94 gives 63.5×–81.5×).
        compressor: seconds a non-prefix-stable method spends compressing a context of ``C`` tokens
            per event (cost classes of App. M.1); default: LAM's class-3 compaction of the arrivals.
        l0_only: charge only the exact-hash layer as the compaction cost (L0 alone).

    Returns:
        The per-turn :class:`Run`.

    Raises:
        LamValueError: unknown schedule, removal outside [0, 1), share outside (0, 1], batch < 1.
    """
    if schedule not in SCHEDULES:
        raise LamValueError(f"schedule {schedule!r} is not one of {', '.join(SCHEDULES)}")
    _check_removal(removal)
    _check_batch(batch)
    if not isinstance(invalidated_share, (int, float)) or not 0.0 < invalidated_share <= 1.0:
        raise LamValueError(f"invalidated_share = {invalidated_share!r} must be in (0, 1]")
    n = workload.turns
    added = workload.delta * (1.0 - removal)
    before = added * np.arange(n, dtype=np.float64)  # context before each turn
    after = before + added
    mf, mb = device.mu_c * device.flops, device.mu_m * device.mem_bw
    lm, d = model.layers, model.d_model
    serving = ((2 * model.params * workload.delta + 2 * lm * d * workload.delta * before) / mf
               + workload.g_a * (model.bytes_weight * model.params / batch + after * model.kv_bytes_per_token) / mb)
    if schedule == "wall" and compressor is not None:
        compaction = np.array([compressor(c) for c in before + workload.delta])
    else:
        compaction = np.full(n, compaction_time(workload.delta, device, candidate_pairs=workload.candidate_pairs,
                                                l0_only=l0_only))
    if schedule == "admit":
        reprefill = np.zeros(n)
    else:
        c = invalidated_share * after
        reprefill = (2 * model.params * c + 2 * lm * d * c * c) / mf
    return Run(schedule, float(removal), int(batch), after, serving, compaction, reprefill)


def snapshot_steady_state(removal: float, delta: float = 636.8) -> float:
    """The fixed point ``C* = Δ/r`` of the (wrong) snapshot rule ``C ← C(1 - r) + Δ`` (Table 27)."""
    _check_removal(removal)
    if removal == 0:
        return math.inf
    return delta / removal


def mean_context_budget(removal: float, workload: Workload = Workload(), *, accounting: str = "per_arrival") -> float:
    """Mean context over the run under the hard budget ``B_ctx`` (Table 27: 2.8K snapshot, 28K per-arrival).

    ``per_arrival``: ``C ← C + Δ(1 - r)``; when it passes ``B_ctx``, compaction at the wall removes
    the share ``r`` of the context (``C ← C(1 - r)``) and eviction bounds what remains.
    ``snapshot`` (the paper's left column, wrong): ``C ← C(1 - r) + Δ``, removal applied to the whole
    context every event; it settles at ``Δ/r`` and never meets the budget.
    """
    _check_removal(removal)
    if accounting not in ("per_arrival", "snapshot"):
        raise LamValueError(f"accounting {accounting!r} is not 'per_arrival' or 'snapshot'")
    c, total = 0.0, 0.0
    for _ in range(workload.turns):
        if accounting == "snapshot":
            c = c * (1.0 - removal) + workload.delta
        else:
            c += workload.delta * (1.0 - removal)
            if c > workload.budget:
                c = min(c, workload.budget) * (1.0 - removal)
        total += c
    return total / workload.turns


# --------------------------------------------------------------------------------------------------
# Cost classes (App. M.1, eqs. 11 and 12)
# --------------------------------------------------------------------------------------------------


def class1_time(tokens: float, rho: float = 10.0, *, tau: float = 0.0, model: ModelSpec = LLAMA31_8B,
                device: DeviceProfile = GB10) -> float:
    """Eq. 11, decode-bound LLM (summarization at ratio ρ): prefill ``T``, decode ``G = T/ρ`` tokens.

    ``(2PT + 2LdT²)/(μ_c F) + (G·P·b_w + 2L·H_kv·d_h·b_kv·(GT + G²/2))/(μ_m B) + Gτ``.
    """
    _check_nonneg(tokens=tokens, tau=tau)
    if not rho > 0:
        raise LamValueError(f"rho = {rho!r} must be > 0")
    g = tokens / rho
    return (reprefill_time(tokens, model, device)
            + (g * model.params * model.bytes_weight + model.kv_bytes_per_token * (g * tokens + g * g / 2))
            / (device.mu_m * device.mem_bw) + g * tau)


def class2_time(tokens: float, encoder: EncoderSpec = XLMR_LARGE, device: DeviceProfile = GB10) -> float:
    """Class 2, prefill-only LLM: ``(2PT + 2LdT²)/(μ_c F)`` causal, ``(2PT + 4LdTW)/(μ_c F)`` windowed."""
    _check_nonneg(tokens=tokens)
    mf = device.mu_c * device.flops
    if encoder.window is None:
        return (2 * encoder.params * tokens + 2 * encoder.layers * encoder.d_model * tokens ** 2) / mf
    return (2 * encoder.params * tokens + 4 * encoder.layers * encoder.d_model * tokens * encoder.window) / mf


def class3_time(tokens: float, device: DeviceProfile = GB10, *, window: int = 512, dim: int = 768,
                candidate_pairs: float = 0.0, with_encoder: bool = True) -> dict[str, float]:
    """Eq. 12, no LLM (LAM's layers), per stage, seconds: encoder ``T/R_enc``, quantize ``6ND/B_q``,
    band hashing ``2ND/R_hash``, verification ``n_cand/R_ℓ2``, codec ``βT(1 + 1/CR)/R_cuSZp``, and
    L0's line hashing ``βT/R_hash``; ``N = T/window`` chunks of dimension ``dim``.
    """
    _check_nonneg(tokens=tokens, candidate_pairs=candidate_pairs)
    n = tokens / window
    stages = {
        "encode": tokens / device.encoder_tok_s if with_encoder else 0.0,
        "quantize": 6 * n * dim / device.quantize_bytes_s,
        "band_hash": 2 * n * dim / device.hash_bytes_s,
        "verify": candidate_pairs / device.verify_pairs_s,
        "codec": device.beta * tokens * (1 + 1 / device.codec_ratio) / device.codec_bytes_s,
        "l0_hash": device.beta * tokens / device.hash_bytes_s,
    }
    stages["total"] = sum(stages.values())
    return stages


# --------------------------------------------------------------------------------------------------
# The paper's tables, with the printed values beside the model's
# --------------------------------------------------------------------------------------------------


def _dev(device: DeviceProfile | str | None) -> DeviceProfile:
    return GB10 if device is None else profile(device)


def table7(device: DeviceProfile | str | None = None) -> list[dict[str, Any]]:
    """φ and the Amdahl ceiling at batch 1 and 32, C = 3K…128K (Table 7)."""
    dev = _dev(device)
    paper = {1: (2.5, 6.4, 21.6, 52.4), 32: (23.5, 45.0, 76.6, 92.9)}
    rows = []
    for b in (1, 32):
        for c, p in zip((3_000, 8_000, 32_000, 128_000), paper[b]):
            f = phi(c, b, device=dev)
            rows.append({"batch": b, "context": c, "phi": f, "ceiling": amdahl_ceiling(f),
                         "paper_phi": p / 100, "paper_ceiling": 1 / (1 - p / 100)})
    return rows


def table8(device: DeviceProfile | str | None = None, invalidated_share: float = 1.0) -> list[dict[str, Any]]:
    """Delete-in-place vs test-first with LAM's removal, batch 1 and 32 (Table 8; App. E.2)."""
    dev = _dev(device)
    rows = []
    paper = {1: (1.186e6, 1.66e4, 71.4), 32: (1.183e6, 1.29e4, 91.6)}
    paper_share = {1: 63.5, 32: 81.5}
    for b in (1, 32):
        first = simulate("admit", PAPER["r_lam"], batch=b, device=dev)
        dip = simulate("delete_in_place", PAPER["r_lam"], batch=b, device=dev, invalidated_share=invalidated_share)
        rows.append({
            "batch": b, "delete_in_place_s": dip.total, "test_first_s": first.total, "gain": dip.total / first.total,
            "delete_in_place_overhead_share": dip.share("reprefill") + dip.share("compaction"),
            "test_first_compaction_share": first.share("compaction"),
            "paper_delete_in_place_s": paper[b][0] if invalidated_share == 1.0 else None,
            "paper_test_first_s": paper[b][1],
            "paper_gain": paper[b][2] if invalidated_share == 1.0 else (
                paper_share[b] if invalidated_share == PAPER["invalidated_share"] else None),
            "invalidated_share": invalidated_share,
        })
    return rows


def _baselines(dev: DeviceProfile) -> list[tuple[str, str, float, Callable[[float], float] | None, bool, tuple]]:
    zero: Callable[[float], float] = lambda c: 0.0  # noqa: E731 - masking drops records, no model runs
    return [
        ("observation masking (k=5)", "wall", PAPER["r_masking"], zero, False, (107.7, 105.1)),
        ("LLM summarization (rho=10)", "wall", PAPER["r_summarization"],
         lambda c: class1_time(c, PAPER["summarization_rho"], device=dev), False, (498.0, 495.5)),
        ("SemDeDup (global k-means, 0.95)", "wall", PAPER["r_semdedup"], lambda c: c / dev.encoder_tok_s, False,
         (647.9, 645.4)),
        ("LLMLingua-2 (rate 0.80)", "wall", PAPER["r_llmlingua2"], lambda c: class2_time(c, device=dev), False,
         (790.5, 787.9)),
        ("LAM, L0 only", "admit", PAPER["r_l0"], None, True, (12.0, 9.5)),
        ("LAM, full", "admit", PAPER["r_lam"], None, False, (11.4, 8.9)),
    ]


def table2(device: DeviceProfile | str | None = None) -> list[dict[str, Any]]:
    """Mean modelled latency per turn over 1,453 growth turns, each method on its cheapest schedule (Table 2)."""
    dev = _dev(device)
    runs = {}
    for name, sched, r, comp, l0, paper in _baselines(dev):
        runs[name] = ([simulate(sched, r, batch=b, device=dev, compressor=comp, l0_only=l0) for b in (1, 32)],
                      sched, r, paper)
    lam = runs["LAM, full"][0]
    rows = []
    for name, (rs, sched, r, paper) in runs.items():
        rows.append({"method": name, "schedule": sched, "removal": r,
                     "batch1_s": rs[0].mean_per_turn, "batch32_s": rs[1].mean_per_turn,
                     "ratio1": rs[0].total / lam[0].total, "ratio32": rs[1].total / lam[1].total,
                     "paper_batch1_s": paper[0], "paper_batch32_s": paper[1]})
    return rows


def table27(device: DeviceProfile | str | None = None) -> list[dict[str, Any]]:
    """Snapshot vs per-arrival accounting for LAM's removal (Table 27; App. M.3)."""
    dev = _dev(device)
    r, r0 = PAPER["r_lam"], PAPER["r_l0"]
    wl = Workload()
    lam_turns, l0_turns = exhaustion_turn(r, device=dev), exhaustion_turn(r0, device=dev)
    return [
        {"quantity": "steady state C* (snapshot, Δ/r)", "model": snapshot_steady_state(r), "paper": 2800.0},
        {"quantity": "mean context, 32K budget, snapshot", "model": mean_context_budget(r, wl, accounting="snapshot"),
         "paper": 2800.0},
        {"quantity": "mean context, 32K budget, per-arrival", "model": mean_context_budget(r, wl), "paper": 28000.0},
        {"quantity": "KV capacity, tokens (batch 1)", "model": kv_capacity_tokens(device=dev), "paper": 854_000.0},
        {"quantity": "KV exhaustion turn, uncompacted", "model": exhaustion_turn(0.0, device=dev), "paper": 1341.0},
        {"quantity": "KV exhaustion turn, L0", "model": l0_turns, "paper": 1615.0},
        {"quantity": "KV exhaustion turn, LAM", "model": lam_turns, "paper": 1727.0},
        {"quantity": "speedup of L1 over L0, growth (turn capacity)", "model": lam_turns / l0_turns, "paper": 1.07},
    ]


def table_m(device: DeviceProfile | str | None = None, tokens: float = 1e6) -> list[dict[str, Any]]:
    """Compaction latency of the three cost classes at ``T`` tokens (App. M.2, Figure 9a)."""
    dev = _dev(device)
    lam = class3_time(tokens, dev)
    rows = [
        {"method": "LLM summarization (class 1, rho=10)", "seconds": class1_time(tokens, 10.0, device=dev),
         "paper_ratio_to_lam": 4957.0},
        {"method": "LLMLingua-2 (class 2, XLM-R-large)", "seconds": class2_time(tokens, device=dev),
         "paper_ratio_to_lam": 1.33},
        {"method": "SemDeDup (same encoder)", "seconds": tokens / dev.encoder_tok_s, "paper_ratio_to_lam": 1.00},
        {"method": "LAM (class 3)", "seconds": lam["total"], "paper_ratio_to_lam": 1.0},
        {"method": "LAM without encoding (stored embeddings)", "seconds": lam["total"] - lam["encode"],
         "paper_ratio_to_lam": None},
        {"method": "L0 alone (line hashing)", "seconds": lam["l0_hash"], "paper_ratio_to_lam": None},
    ]
    for row in rows:
        row["ratio_to_lam"] = row["seconds"] / lam["total"]
    rows.append({"method": "LAM, encoding only (ratio: its share of LAM)", "seconds": lam["encode"], "ratio_to_lam": lam["encode"] / lam["total"],
                 "paper_ratio_to_lam": 0.99989})
    return rows


TABLES: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "2": table2, "7": table7, "8": table8, "27": table27, "M": table_m,
}


def with_overrides(device: DeviceProfile, **kw: float) -> DeviceProfile:
    """A copy of ``device`` with some constants replaced (e.g. a measured encoder rate)."""
    return replace(device, **kw)

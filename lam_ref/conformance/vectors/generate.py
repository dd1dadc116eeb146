"""Write the test vector files: ``python -m lam_ref.conformance.vectors.generate [--out DIR] [--check]``.

Expected outputs come from the definitions, never from the fast code under test:

* ``core``, ``online``: :func:`lam_ref.substitution.oracle` (SPEC §5, exhaustive float64, lowest
  id wins) and :func:`lam_ref.geometry.validate_embeddings` / ``validate_threshold`` (SPEC §2) for
  what must be refused, on the inputs exactly as the file encodes them;
* ``l0``, ``l0-stubs``: :func:`lam_ref.text.lines.reference_tokens`, the line-by-line definition
  of SPEC §7 (not the C pass or the numpy pass of ``dedup_records``);
* ``codec-bound``, ``codec-v1``: a pure-Python coder in this file written from the byte format of
  ``docs/codec.md`` (one value and one bit at a time; no ``lam_ref.codec``);
* ``codec-v2``: the streams are written by the version-2 reference encoder (``lam_ref.codec_v2``,
  held byte-equal to the C encoder by ``tests/test_codec_c.py``); every expected decode comes from
  this file's version-1 quantizer (the same codes, SPEC §9.6) and, for strict streams, the strict
  rule applied here value by value; the refused streams are single defects of valid ones;
* ``session-v1``: files assembled here field by field from SPEC §6.3 (a stored zip of ``.npy``
  arrays and ``header.json``, fixed timestamps) with the π of the oracle.

``--check`` regenerates in memory and exits 1 when a committed file differs (the test
``tests/conformance/test_vectors.py`` does the same, byte for byte).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import struct
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...geometry import LamValueError, delta_sq, validate_embeddings, validate_threshold
from ...substitution import oracle
from ...text.lines import reference_tokens
from ..hazards import l0_key_cases
from . import codec_boundaries as cb
from .format import decode_embeddings, encode_array, encode_bytes, encode_ints, encode_scalar

HERE = Path(__file__).resolve().parent
SCHEMA_NAME = "lam_ref.conformance.vectors"
SCHEMA_VERSION = 1
GENERATOR = "python -m lam_ref.conformance.vectors.generate"
STUB = "[LAM:"


class _File:
    """One profile's file under construction: notes (flags) and vectors with running ids."""

    def __init__(self, profile: str, title: str, notes: dict[str, tuple[str, str]], extra: dict[str, Any] | None = None):
        self.profile = profile
        self.title = title
        self.notes = {k: {"bug_type": b, "description": d} for k, (b, d) in notes.items()}
        self.extra = extra or {}
        self.vectors: list[dict[str, Any]] = []

    def add(self, *, comment: str, flags: list[str], spec: str, result: str, op: str, input: dict[str, Any],
            expected: dict[str, Any] | None = None, alternatives: list[dict[str, Any]] | None = None,
            may_reject: bool = False) -> None:
        unknown = [f for f in flags if f not in self.notes]
        if unknown:
            raise RuntimeError(f"{self.profile}: flags {unknown} have no note")
        v: dict[str, Any] = {"id": len(self.vectors) + 1, "comment": comment, "flags": flags,
                             "spec": f"docs/spec.md#{spec}", "result": result, "op": op, "input": input}
        if expected is not None:
            v["expected"] = expected
        if alternatives:
            v["alternatives"] = alternatives
        if may_reject:
            v["may_reject"] = True
        self.vectors.append(v)

    def document(self) -> dict[str, Any]:
        used = {f for v in self.vectors for f in v["flags"]}
        return {
            "schema": SCHEMA_NAME,
            "schema_version": SCHEMA_VERSION,
            "profile": self.profile,
            "title": self.title,
            "generator": GENERATOR,
            "encoding": "docs/vectors.md#encoding",
            **self.extra,
            "notes": {k: v for k, v in self.notes.items() if k in used},
            "number_of_vectors": len(self.vectors),
            "vectors": self.vectors,
        }


def dumps(doc: dict[str, Any]) -> str:
    """The committed text: one vector per line group, ASCII only (non-ASCII text as \\u escapes)."""
    return json.dumps(doc, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


# ------------------------------------------------------------------------------------------------
# embeddings builders
# ------------------------------------------------------------------------------------------------
def _f32(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _table(rows: Any, index: Any) -> dict[str, Any]:
    return {"table": encode_array(_f32(rows)), "index": encode_ints(index)}


def _signs(dim: int, scale: float, index: Any) -> dict[str, Any]:
    return {"sign_patterns": {"dim": dim, "scale": encode_array(_f32([scale]))}, "index": encode_ints(index)}


def _unit(angle_deg: float, dim: int = 2) -> np.ndarray:
    v = np.zeros(dim)
    v[0], v[1] = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    return v


def _clusters(seed: int, n: int, dim: int, t: float, spread: float) -> np.ndarray:
    """Clustered unit rows with every pair at least 1e-6 away from δ² (outside the tie band)."""
    rng = np.random.default_rng(seed)
    d2 = delta_sq(t)
    while True:
        centres = rng.normal(size=(max(2, n // 5), dim))
        pick = rng.integers(0, centres.shape[0], size=n)
        x = centres[pick] + spread * math.sqrt(d2 / dim) * rng.normal(size=(n, dim))
        x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
        e = x.astype(np.float64)
        sq = ((e[:, None, :] - e[None, :, :]) ** 2).sum(-1)
        if np.all(np.abs(sq - d2)[np.triu_indices(n, 1)] > 1e-6):
            return x


def _hair_pair(t: float, offset: float) -> np.ndarray:
    """Two float32 unit rows (D = 2) with ``sq - δ²`` within a factor 3 of ``offset`` (same sign).

    Searches float32 neighbours of ``(c, s)`` (by their bit patterns) for the best ``sq`` in float64."""
    d2 = delta_sq(t)
    c0 = np.float32(1.0 - (d2 + offset) / 2.0)
    cs = (np.int64(c0.view(np.int32)) + np.arange(-300, 301)).astype(np.int32).view(np.float32).astype(np.float64)
    best = None
    for c in cs.tolist():
        s0 = np.float32(math.sqrt(max(0.0, 1.0 - c * c)))
        ss = (np.int64(s0.view(np.int32)) + np.arange(-40, 41)).astype(np.int32).view(np.float32).astype(np.float64)
        ok = np.abs(np.sqrt(c * c + ss * ss) - 1.0) <= 1e-6
        gap = ((1.0 - c) ** 2 + ss * ss) - d2
        ok &= gap * offset > 0
        if not ok.any():
            continue
        score = np.where(ok, np.abs(np.log(np.where(ok, gap / offset, 1.0))), np.inf)
        k = int(np.argmin(score))
        if best is None or score[k] < best[0]:
            best = (float(score[k]), c, float(ss[k]))
    assert best is not None and best[0] < math.log(3.0), f"no float32 pair at sq - δ² ≈ {offset} for t = {t}"
    return _f32([[1.0, 0.0], [best[1], best[2]]])


# ------------------------------------------------------------------------------------------------
# core: substitute (SPEC §1, §2, §5)
# ------------------------------------------------------------------------------------------------
CORE_NOTES = {
    "InclusiveTie": ("EdgeCase", "sq == δ² exactly (values exact in binary): the pair merges; a strict < is wrong (SPEC §2.1)."),
    "HairInside": ("EdgeCase", "sq a hair below δ² (1e-8 to 1e-6, or one ulp of t for exact values): must merge."),
    "HairOutside": ("EdgeCase", "sq a hair above δ² (1e-8 to 1e-6, or one ulp of t for exact values): must not merge."),
    "Float32Threshold": ("Precision", "δ² = 2 - 2t must be computed in float64 from the float64 t; a float32 t or δ² moves the boundary by about 2e-8."),
    "NotSquared": ("WrongFormula", "compares sq with δ, or the distance with δ², instead of sq with δ²."),
    "TieBand": ("Tolerance", "|sq - δ²| <= 1e-9 with inexact values (SPEC §2.2): the exact rule's answer is expected, the other decision is acceptable."),
    "LowestId": ("WrongWitness", "several retained rows within δ: the representative is the lowest id, not the nearest (SPEC §5.1)."),
    "RetainedOnly": ("WrongWitness", "only retained rows represent: a row within δ of a dropped row only is retained (SPEC §5.1; chains, C4)."),
    "Chain": ("WrongWitness", "x0~x1~x2~... with non-neighbours beyond δ: greedy keeps every other link; connected components are wrong (C4)."),
    "Duplicates": ("EdgeCase", "exact duplicates, including at t = 1 (δ = 0)."),
    "Empty": ("EdgeCase", "N = 0 rows: π is empty (SPEC §1.4)."),
    "SingleRow": ("EdgeCase", "N = 1: the first row is always retained."),
    "LargeDimension": ("Size", "D = 768 or 1,024 (real encoders), beyond small fixed buffers."),
    "LargeRetainedSet": ("Size", "more than 1,024 / 2,048 retained rows (fixed-size retained buffers)."),
    "LargeIds": ("IntegerWidth", "ids past 32,767 and 65,536 in π (int16/uint16 ids or counters)."),
    "Clustered": ("Functionality", "seeded clustered data, every pair at least 1e-6 from δ²."),
    "NonFinite": ("InvalidInput", "NaN or ±inf in a row: ValueError naming the row (SPEC §2.3)."),
    "ZeroRow": ("InvalidInput", "a zero row: ValueError (SPEC §2.3)."),
    "NotUnitNorm": ("InvalidInput", "a row whose norm differs from 1 by more than 1e-4: ValueError (SPEC §2.3)."),
    "NormTolerance": ("Tolerance", "norms within 1e-4 of 1 are valid input; the test is on the norm, not its square (a norm of 1 + 7e-5 has a square of 1 + 1.4e-4)."),
    "BadShape": ("InvalidInput", "rank other than 2 or D = 0: ValueError (SPEC §2.3)."),
    "BadThreshold": ("InvalidInput", "t outside [-1, 1], NaN or infinite: ValueError (SPEC §1.3, §2.3)."),
    "ThresholdEnds": ("EdgeCase", "t = -1 and t = 1 are valid (SPEC §1.3)."),
    "SignedZeroThreshold": ("EdgeCase", "t = -0.0 is the threshold 0 (δ² = 2): a sign test on t, or a refusal of -0.0, is wrong."),
}


def _core_add(f: _File, comment: str, flags: list[str], spec: str, emb: dict[str, Any], t: float, *,
              acceptable: list[list[int]] | None = None) -> None:
    """A substitute vector; the expected π (or invalid) comes from the oracle on the decoded input."""
    e = decode_embeddings(emb, "embeddings")
    inp = {"embeddings": emb, "t": encode_scalar(t)}
    try:
        validate_threshold(t)
        validate_embeddings(e)
    except LamValueError:
        f.add(comment=comment, flags=flags, spec=spec, result="invalid", op="substitute", input=inp)
        return
    pi = oracle(e, t).pi
    alts = [{"pi": encode_ints(a)} for a in acceptable or [] if list(a) != pi.tolist()]
    f.add(comment=comment, flags=flags, spec=spec, result="acceptable" if alts else "valid", op="substitute",
          input=inp, expected={"pi": encode_ints(pi)}, alternatives=alts)


def build_core() -> _File:
    f = _File("core", "Algorithm 2's π (SPEC §5) and input validation (SPEC §2)", CORE_NOTES)
    h = 0.5
    exact = [
        ("SPEC §2.1 example: (1,0), (0,1) at t = 0, sq = 2 = δ²", [[1, 0], [0, 1]], 0.0, ["InclusiveTie"]),
        ("(1,0), (0,1) at t = 0.5: sq = 2 > δ² = 1", [[1, 0], [0, 1]], 0.5, ["HairOutside"]),
        ("antipodes at t = -1: sq = 4 = δ²", [[1, 0], [-1, 0]], -1.0, ["InclusiveTie", "ThresholdEnds"]),
        ("antipodes at t = 0: sq = 4 > δ² = 2", [[1, 0], [-1, 0]], 0.0, ["HairOutside"]),
        ("three axes at t = 0: every pair at sq = 2 = δ²", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 0.0, ["InclusiveTie", "LowestId"]),
        ("duplicates at t = 1 (δ = 0): sq = 0 = δ²", [[0, 1, 0], [1, 0, 0], [0, 1, 0]], 1.0, ["Duplicates", "ThresholdEnds"]),
        ("half vectors at t = 0.5: sq = 1 = δ²", [[h, h, h, h], [h, h, h, -h]], 0.5, ["InclusiveTie"]),
        ("half vectors at t = 0.75: sq = 1 > δ² = 0.5", [[h, h, h, h], [h, h, h, -h]], 0.75, ["HairOutside"]),
        ("two retained rows at sq = 1 = δ² from the arrival: the lower id wins", [[h, h, h, h], [h, -h, -h, h], [h, h, -h, h]], 0.5, ["LowestId", "InclusiveTie"]),
        ("a tie with a dropped row does not count: only retained rows represent", [[1, 0], [0, 1], [-1, 0]], 0.0, ["RetainedOnly", "InclusiveTie"]),
    ]
    for comment, rows, t, flags in exact:
        _core_add(f, comment, flags, "s2-merge", encode_array(_f32(rows)), t)
    # sq compared with δ instead of δ²: D = 16 rows of ±1/4, k flips give sq = k/4 exactly
    _core_add(f, "D = 16, three signs apart: sq = 0.75 > δ² = 0.6 at t = 0.7 (but sq <= δ = 0.775)", ["NotSquared"],
              "s2-merge", _signs(16, 0.25, [0, 7]), 0.7)
    _core_add(f, "D = 16, six signs apart: sq = 1.5 <= δ² = 2 at t = 0 (but sq > δ = 1.414)", ["NotSquared"],
              "s2-merge", _signs(16, 0.25, [0, 63]), 0.0)
    # D = 1024 sign patterns of ±1/32 (exact unit norm); index 7 flips three signs: sq = 3/256 exactly
    t_tie = 1.0 - 3.0 / 512.0
    for label, t, flags in (("t = 1 - 3/512, sq = δ² = 3/256", t_tie, ["InclusiveTie", "LargeDimension"]),
                            ("t one float64 ulp above 1 - 3/512: δ² < sq", float(np.nextafter(t_tie, 2.0)), ["HairOutside", "LargeDimension"]),
                            ("t one float64 ulp below 1 - 3/512: δ² > sq", float(np.nextafter(t_tie, -2.0)), ["HairInside", "LargeDimension"])):
        _core_add(f, f"D = 1024, rows of ±1/32 differing in 3 signs; {label}", flags, "s2-merge",
                  _signs(1024, 1.0 / 32.0, [0, 7, 8, 7]), t)
    # D = 768: 256 coordinates of 1/16, the rest 0; two sign flips: sq = 1/32 exactly
    a = np.zeros(768)
    a[:256] = 1.0 / 16.0
    b = a.copy()
    b[[3, 200]] = -1.0 / 16.0
    for label, t, flags in (("t = 1 - 1/64, sq = δ² = 1/32", 1.0 - 1.0 / 64.0, ["InclusiveTie", "LargeDimension"]),
                            ("t one ulp above 1 - 1/64: δ² < sq", float(np.nextafter(1.0 - 1.0 / 64.0, 2.0)), ["HairOutside", "LargeDimension"])):
        _core_add(f, f"D = 768, 256 coordinates of ±1/16, two signs apart; {label}", flags, "s2-merge",
                  _table([a, b], [0, 1, 1, 0]), t)
    # a hair from δ² with inexact values (float32 rows, D = 2)
    for t in (0.95, 0.9, 0.5, 0.99):
        for offset in (-1e-6, 1e-6, -1e-8, 1e-8):
            flags = ["HairInside" if offset < 0 else "HairOutside"]
            if abs(offset) < 1e-7:
                flags.append("Float32Threshold")
            _core_add(f, f"pair with sq - δ² ≈ {offset:g} at t = {t}", flags, "s2-merge", encode_array(_hair_pair(t, offset)), t)
    for t, offset in ((0.95, 3e-10), (0.95, -3e-10)):
        e = _hair_pair(t, offset)
        _core_add(f, f"pair inside the tie band, sq - δ² ≈ {offset:g} at t = {t}: either decision is acceptable",
                  ["TieBand"], "s2-tie-band", encode_array(e), t, acceptable=[[0, 0], [0, 1]])
    # lowest id, not nearest; chains
    t30 = math.cos(math.radians(30.0))
    rows = [_unit(0), _unit(50), _unit(28)]
    _core_add(f, "row 2 is within δ of rows 0 and 1 and nearer to 1: π[2] = 0 (lowest id)", ["LowestId"], "s5-oracle",
              encode_array(_f32(rows)), t30)
    _core_add(f, "chain at 25° steps, δ at 30°: π = 0, 0, 2, 2, 4", ["Chain", "RetainedOnly"], "s5-oracle",
              encode_array(_f32([_unit(25 * k) for k in range(5)])), t30)
    _core_add(f, "chain in 16 dimensions, links at 25°", ["Chain"], "s5-oracle",
              encode_array(_f32([_unit(25 * k, 16) for k in range(8)])), t30)
    # sizes
    _core_add(f, "N = 0 rows of D = 4", ["Empty"], "s1-pi", encode_array(np.zeros((0, 4), np.float32)), 0.95)
    _core_add(f, "N = 1", ["SingleRow"], "s1-pi", encode_array(_f32([[0.6, 0.8]])), 0.95)
    _core_add(f, "N = 1 at t = 1", ["SingleRow", "ThresholdEnds"], "s1-pi", encode_array(_f32([[0.0, 1.0]])), 1.0)
    for seed, (n, dim, t, spread) in enumerate([(40, 8, 0.9, 1.0), (40, 12, 0.95, 0.8), (30, 4, 0.5, 1.5), (36, 16, 0.99, 0.6)]):
        _core_add(f, f"clustered rows, N = {n}, D = {dim}, t = {t} (seed {seed})", ["Clustered"], "s5-oracle",
                  encode_array(_clusters(seed, n, dim, t, spread)), t)
    n = 2100
    tail = [2099, 1500, 1024, 1025, 2048, 0]
    _core_add(f, f"{n} distinct sign patterns (D = 12, all retained), then repeats of {tail}", ["LargeRetainedSet"],
              "s5-oracle", _signs(12, 1.0 / math.sqrt(12.0), list(range(n)) + tail), 0.95)
    idx = [0] * 65_537 + [1] + [0] * 5 + [1] * 3 + [2] + [1, 2] + [3] * 2 + [2]
    _core_add(f, "65,537 copies of one row, then new rows at ids 65,537, 65,546 and 65,549 and their repeats",
              ["LargeIds", "Duplicates"], "s1-pi", _table(np.eye(4), idx), 0.95)
    # validation (SPEC §2.3)
    base = _f32([_unit(0, 4), _unit(40, 4), _unit(80, 4), _unit(120, 4)])
    for label, row, value, flags in (("a NaN", 2, np.nan, ["NonFinite"]), ("+inf", 1, np.inf, ["NonFinite"]),
                                     ("-inf", 3, -np.inf, ["NonFinite"])):
        bad = base.copy()
        bad[row, 1] = value
        _core_add(f, f"{label} in row {row}", flags, "s2-validation", encode_array(bad), 0.9)
    zero = base.copy()
    zero[3] = 0.0
    _core_add(f, "a zero row 3", ["ZeroRow"], "s2-validation", encode_array(zero), 0.9)
    for scale, flags in ((1.01, ["NotUnitNorm"]), (0.98, ["NotUnitNorm"]), (1 + 2e-4, ["NotUnitNorm"]),
                         (1 - 2e-4, ["NotUnitNorm"]), (1 + 5e-5, ["NormTolerance"]), (1 - 5e-5, ["NormTolerance"]),
                         (1 + 7e-5, ["NormTolerance"])):
        scaled = base.copy()
        scaled[2] = (base[2].astype(np.float64) * scale).astype(np.float32)
        _core_add(f, f"row 2 with norm {scale:.6g}", flags, "s2-validation", encode_array(scaled), 0.9)
    for label, arr in (("a 1-D array (one vector)", base[0].copy()), ("a 3-D array", base.reshape(1, 4, 4)),
                       ("D = 0 (shape [3, 0])", np.zeros((3, 0), np.float32)), ("N = 0, D = 0", np.zeros((0, 0), np.float32))):
        _core_add(f, label, ["BadShape"], "s2-validation", encode_array(arr), 0.9)
    for t in (1.5, -1.5, 1.0000001, -1.0000001, float("nan"), float("inf"), float("-inf")):
        _core_add(f, f"t = {t!r}", ["BadThreshold"], "s1-threshold", encode_array(base), t)
    # issue 38: the threshold's boundaries one float64 ulp out and in, and its signed zero
    for t, flags in ((math.nextafter(1.0, 2.0), ["BadThreshold"]), (math.nextafter(-1.0, -2.0), ["BadThreshold"]),
                     (math.nextafter(1.0, 0.0), ["ThresholdEnds"]), (math.nextafter(-1.0, 0.0), ["ThresholdEnds"])):
        _core_add(f, f"t = {t!r} (one float64 ulp {'outside' if abs(t) > 1 else 'inside'} [-1, 1])", flags, "s1-threshold",
                  encode_array(base), t)
    _core_add(f, "t = -0.0 is t = 0: (1,0), (0,1) at sq = 2 = δ² merge", ["SignedZeroThreshold", "InclusiveTie"], "s2-merge",
              encode_array(_f32([[1, 0], [0, 1]])), -0.0)
    return f


# ------------------------------------------------------------------------------------------------
# online: sessions (SPEC §6)
# ------------------------------------------------------------------------------------------------
ONLINE_NOTES = {
    "Split": ("Functionality", "online ≡ batch: concatenated admit outputs over this split into turns equal Algorithm 2's π (SPEC §6.2)."),
    "IntraTurn": ("Functionality", "an arrival matches an earlier arrival of the same turn (SPEC §6.1)."),
    "EmptyTurn": ("EdgeCase", "a turn of zero rows returns an empty π and changes nothing."),
    "RejectedTurn": ("InvalidInput", "a turn with a bad row is refused whole (ValueError); the session is left exactly as it was: no row of it admitted, ids not advanced."),
    "DimensionChange": ("InvalidInput", "a turn of another dimension D is refused; the session keeps its dimension."),
    "DimensionNotFixedByRejected": ("InvalidInput", "a rejected first turn does not fix the session's dimension."),
    "EmptyFirstTurn": ("EdgeCase", "the first accepted turn, empty or not, fixes the session's dimension (SPEC §6.1, A2): a later turn of another D is refused."),
    "BadThreshold": ("InvalidInput", "OnlineSession(t) with t outside [-1, 1] or NaN: ValueError at construction or first admit."),
    "LargeIds": ("IntegerWidth", "global ids past 65,536 across turns."),
    "Ids2To24": ("IntegerWidth", "global ids past 2^24 (16,777,217 rows of D = 1): ids held in a float32 come back rounded (run on request only: seconds natively, a minute through lam_ref's Python paths)."),
    "SessionHandles": ("StateLeak", "sessions opened, fed and closed in interleaved order: a session keeps its own ids and rows across the close and open of others (exec: a handle is never that of an open session)."),
    "EmptyTurnOtherDim": ("InvalidInput", "after a turn fixed D, an empty turn of another D is a dimension mismatch and is refused (SPEC §6.1, §2.3); an empty turn of D is accepted."),
}


def _online_add(f: _File, comment: str, flags: list[str], t: float, turns: list[dict[str, Any]], *,
                spec: str = "s6-online-batch", alternatives: list[dict[str, Any]] | None = None) -> None:
    inp = {"t": encode_scalar(t), "turns": turns}
    try:
        validate_threshold(t)
    except LamValueError:
        f.add(comment=comment, flags=flags, spec="s6-session", result="invalid", op="session", input=inp)
        return
    accepted: list[np.ndarray] = []
    dim = None
    outcome: list[Any] = []
    for k, turn in enumerate(turns):
        e = decode_embeddings(turn, f"turns[{k}]")
        try:
            e = validate_embeddings(e, dim=dim)
        except LamValueError:
            outcome.append(None)
            continue
        dim = e.shape[1]
        outcome.append(e)
        accepted.append(e)
    rows = np.concatenate(accepted) if accepted else np.zeros((0, 1), np.float32)
    pi = oracle(rows, t).pi if rows.shape[0] else np.zeros(0, np.int64)
    out, start = [], 0
    for e in outcome:
        if e is None:
            out.append({"rejected": True})
        else:
            out.append({"pi": encode_ints(pi[start : start + e.shape[0]])})
            start += e.shape[0]
    result = "invalid" if any("rejected" in o for o in out) else "valid"
    if alternatives:
        result = "acceptable"
    f.add(comment=comment, flags=flags, spec=spec, result=result, op="session", input=inp, expected={"turns": out},
          alternatives=alternatives)


def build_online() -> _File:
    f = _File("online", "Algorithm 1: sessions, turns and rejected turns (SPEC §6)", ONLINE_NOTES)
    e = _clusters(10, 30, 8, 0.9, 1.0)
    for label, lengths in (("one turn", [30]), ("one row per turn", [1] * 30), ("turns of 5, 0, 12, 13", [5, 0, 12, 13]),
                           ("turns of 1, 29", [1, 29]), ("turns of 29, 1", [29, 1])):
        turns, s = [], 0
        for n in lengths:
            turns.append(encode_array(e[s : s + n]))
            s += n
        flags = ["Split"] + (["EmptyTurn"] if 0 in lengths else [])
        _online_add(f, f"30 clustered rows (D = 8, t = 0.9), {label}", flags, 0.9, turns)
    t30 = math.cos(math.radians(30.0))
    _online_add(f, "one turn whose row 2 repeats its row 1 (both new): π = 0, 1, 1", ["IntraTurn"], t30,
                [encode_array(_f32([_unit(0), _unit(90)])), encode_array(_f32([_unit(180), _unit(270), _unit(272)]))])
    x = _f32([_unit(0, 4), _unit(90, 4)])
    near = _f32([_unit(3, 4)])
    other = _f32([_unit(200, 4), _unit(130, 4)])
    bad = other.copy()
    bad[1, 0] = np.nan
    _online_add(f, "turn 1 has a NaN in its row 1 and is refused; its row 0 is not admitted, ids do not advance",
                ["RejectedTurn"], t30, [encode_array(x), encode_array(bad), encode_array(_f32([_unit(201, 4)])), encode_array(near)],
                spec="s6-session")
    zero = other.copy()
    zero[1] = 0
    _online_add(f, "a turn with a zero row is refused, then the same turn fixed is admitted", ["RejectedTurn"], t30,
                [encode_array(x), encode_array(zero), encode_array(other)], spec="s6-session")
    unnorm = other.copy()
    unnorm[0] *= 1.01
    _online_add(f, "a turn with a row of norm 1.01 is refused", ["RejectedTurn"], t30,
                [encode_array(x), encode_array(unnorm), encode_array(other)], spec="s6-session")
    wide = np.zeros((2, 5), np.float32)
    wide[0, 0] = wide[1, 4] = 1.0
    _online_add(f, "D = 4, then a turn of D = 5 refused, then D = 4 again", ["DimensionChange"], t30,
                [encode_array(x), encode_array(wide), encode_array(other)], spec="s6-session")
    bad_wide = wide.copy()
    bad_wide[1, 2] = np.inf
    _online_add(f, "the first turn (D = 5, an inf) is refused, so D = 4 is the session's dimension", ["DimensionNotFixedByRejected", "RejectedTurn"],
                t30, [encode_array(bad_wide), encode_array(x), encode_array(other)], spec="s6-session")
    _online_add(f, "an empty first turn (D = 4) fixes D: a turn of D = 5 is refused, one of D = 4 admitted",
                ["EmptyFirstTurn", "EmptyTurn", "DimensionChange"], t30,
                [encode_array(np.zeros((0, 4), np.float32)), encode_array(wide), encode_array(x)], spec="s6-session")
    _online_add(f, "an empty turn first, then rows of the same D", ["EmptyTurn"], t30,
                [encode_array(np.zeros((0, 4), np.float32)), encode_array(x), encode_array(np.zeros((0, 4), np.float32)), encode_array(near)])
    for t in (1.5, -2.0, float("nan")):
        _online_add(f, f"OnlineSession(t = {t!r})", ["BadThreshold"], t, [encode_array(x)])
    eye = np.eye(4)
    _online_add(f, "ids past 65,536 across three turns", ["LargeIds", "Split"], 0.95,
                [_table(eye, [0] * 40_000), _table(eye, [0] * 25_537 + [1, 0]), _table(eye, [1, 2, 0, 2, 3])])
    _online_add(f, "D = 4 fixed, then empty turns of D = 5, 1 and 3 (refused) and of D = 4 (accepted)",
                ["EmptyTurnOtherDim", "EmptyTurn"], t30,
                [encode_array(x), encode_array(np.zeros((0, 5), np.float32)), encode_array(np.zeros((0, 1), np.float32)),
                 encode_array(np.zeros((0, 3), np.float32)), encode_array(np.zeros((0, 4), np.float32)), encode_array(near)],
                spec="s6-session")
    # open, open, close, open with a live session (issue 38): each session's π is the oracle's on its own rows
    rows = {"A": _f32([_unit(0, 4), _unit(1, 4), _unit(90, 4)]), "B": _f32([_unit(180, 4), _unit(182, 4), _unit(181, 4), _unit(270, 4)]),
            "C": _f32([_unit(45, 4), _unit(46, 4)])}
    plan = [("open", "A"), ("open", "B"), ("admit", "A", 0, 2), ("admit", "B", 0, 2), ("close", "A"), ("open", "C"),
            ("admit", "C", 0, 2), ("admit", "B", 2, 4), ("admit", "A2", 0, 3), ("close", "C"), ("close", "B")]
    steps, admits = [], []
    for step in plan:
        if step[0] in ("open", "close"):
            steps.append({step[0]: step[1]})
            if step == ("open", "C"):
                steps.append({"open": "A2"})  # a fourth session, opened after the close: fresh
            continue
        name, lo, hi = step[1], step[2], step[3]
        e = rows[name[0]]
        steps.append({"admit": name, "turn": encode_array(e[lo:hi])})
        admits.append({"pi": encode_ints(oracle(e[:hi], t30).pi[lo:hi])})
    f.add(comment="sessions A, B open; A closed; C and A2 opened while B lives: B continues its ids, C and A2 start fresh",
          flags=["SessionHandles"], spec="s6-session", result="valid", op="sessions",
          input={"t": encode_scalar(t30), "steps": steps}, expected={"admits": admits})
    # ids past 2^24 (issue 38): 16 turns of 2^20 copies of (1), then (1), (-1), (-1). π by construction:
    # every (1) is a copy of row 0; row 2^24 + 1 is the first (-1) (sq = 4 > δ² = 1 at t = 0.5).
    signs = _f32([[1.0], [-1.0]])
    big = 2**24
    f.add(comment="ids past 2^24: 16,777,216 rows of (1) in 16 turns, then (1), (-1), (-1): π ends 0, 2^24 + 1, 2^24 + 1",
          flags=["LargeIds", "Ids2To24", "Split"], spec="s1-chunks", result="valid", op="session",
          input={"t": encode_scalar(0.5), "turns": [_table(signs, [0] * 2**20)] * 16 + [_table(signs, [0, 1, 1])]},
          expected={"turns": [{"pi": encode_ints([0] * 2**20)}] * 16 + [{"pi": [0, big + 1, big + 1]}]})
    return f


# ------------------------------------------------------------------------------------------------
# L0: dedup_lines (SPEC §7), token form (l0) and exact stub text (l0-stubs)
# ------------------------------------------------------------------------------------------------
L0_NOTES = {
    "Basic": ("Functionality", "a line kept earlier in the trajectory is dropped, across and within records (SPEC §7.2)."),
    "Run": ("Functionality", "a maximal run of consecutive dropped lines of one record becomes one stub line."),
    "RunBoundary": ("EdgeCase", "runs end at record boundaries and at protected (blank or stub) lines."),
    "Blank": ("Functionality", "empty and whitespace-only lines are protected: never dropped, never registered."),
    "UnicodeWhitespace": ("Encoding", "whitespace is the set of Python's str.isspace, listed in SPEC §7.1 (A4): lines of only U+00A0, U+2003, U+3000, U+2028, U+001C or U+0085 are blank (JavaScript's trim() misses U+001C and U+0085)."),
    "NotWhitespace": ("Encoding", "U+200B and U+FEFF are not whitespace (SPEC §7.1, A4; JavaScript's trim() strips U+FEFF): a line of either is deduplicated."),
    "CRLF": ("Encoding", "lines are split on \\n only: a CR stays part of the line, so 'a\\r' and 'a' differ; a lone CR does not split."),
    "TrailingWhitespace": ("Encoding", "'a ' and 'a' are different lines (no stripping before comparing)."),
    "NonLatin": ("Encoding", "non-Latin and non-BMP text compares by its exact UTF-8 bytes."),
    "LongPrefix": ("Hashing", "long lines that share a long prefix and differ at the end are different (hashing a prefix only is wrong)."),
    "StubLine": ("Functionality", "lines starting with the stub prefix (L1 stubs) are protected, even when repeated."),
    "PrefixInside": ("EdgeCase", "a line containing the stub prefix but not starting with it is an ordinary line."),
    "LargeSeenSet": ("Size", "more than 1,024 / 2,048 distinct lines seen (fixed-size seen-sets, eviction)."),
    "Empty": ("EdgeCase", "no records, or empty records."),
    "StubPointer": ("StubFormat", "the stub's rR:L names the first copy by record index and line index in that record's output, both 0-based (SPEC §7.2, §8.1, A5)."),
    "HashCollision32": ("Hashing", "distinct lines with one 32-bit hash (Java String.hashCode, FNV-1a 32, djb2): a 32-bit key drops the second (SPEC §7.1: the exact UTF-8 bytes, a 64-bit hash at least)."),
    "NulInLine": ("Encoding", "a NUL is an ordinary character of a line: 'a\\0b', 'a\\0c' and 'a' are three lines (a key cut at NUL, strlen, is wrong)."),
    "LoneCR": ("Encoding", "a lone CR is part of its line, at its start, middle or end: 'p\\rq', 'p\\r', '\\rq' and 'p' are four lines."),
    "PrototypeName": ("EdgeCase", "lines equal to names a plain map already holds (JavaScript Object.prototype: constructor, __proto__, toString, ...; Python dunders) are ordinary lines, kept on their first occurrence."),
}
_WS_ODD = ("\x1c", "\x85", "\ufeff")


def _l0_cases() -> list[tuple[str, list[str], list[str]]]:
    long_a, long_b = "x" * 3000 + "1", "x" * 3000 + "2"
    many = [f"line {k:05d}" for k in range(2100)]
    return [
        ("a line seen in an earlier record is dropped", ["a\nb", "b\nc\na"], ["Basic"]),
        ("repeats inside one record", ["x\ny\nx\ny\nz"], ["Basic", "Run"]),
        ("a whole record repeated becomes one stub", ["p\nq\nr", "p\nq\nr"], ["Run"]),
        ("runs end at record boundaries", ["a", "a", "a\na"], ["RunBoundary"]),
        ("a blank line splits a run in two", ["a\nb", "a\n\nb"], ["RunBoundary", "Blank"]),
        ("empty, space, tab, vertical tab and form feed lines are kept", ["a\n\n \n\t\n\x0b\n\x0c\na", "\n \n\t\n\x0b\n\x0c"], ["Blank"]),
        ("Unicode whitespace-only lines are kept", ["\u00a0\n\u2003 \n\u3000\n\u2028\nz", "\u00a0\n\u2003 \n\u3000\n\u2028\nz"], ["UnicodeWhitespace"]),
        ("U+200B is not whitespace", ["\u200b\nk", "\u200b\nk"], ["NotWhitespace"]),
        ("CRLF: 'a\\r' differs from 'a'", ["a\r\nb\r\n", "a\nb\r\na\r\nb"], ["CRLF"]),
        ("a lone CR does not split lines", ["p\rq\np", "p\rq\nq\np\rq"], ["CRLF"]),
        ("a line of only CR is whitespace", ["\r\nx", "\r\nx"], ["CRLF", "Blank"]),
        ("trailing whitespace makes a different line", ["a \na", "a\na \nb "], ["TrailingWhitespace"]),
        ("non-Latin and emoji lines", ["привет\n日本語\n🙂\né", "🙂\nпривет\ne\u0301\né"], ["NonLatin"]),
        ("3,001-character lines sharing a 3,000-character prefix", [f"{long_a}\n{long_b}", f"{long_b}\n{long_a}\n{long_a}2"], ["LongPrefix"]),
        ("L1 stub lines are never dropped", [f"{STUB}L1 3=1 d=0.1000]\nfoo", f"{STUB}L1 3=1 d=0.1000]\nfoo\n{STUB}L1 3=1 d=0.1000]"], ["StubLine"]),
        ("a stub line inside a run of repeats ends the run", ["a\nb\nc", f"a\n{STUB}L1 1=0 d=0.1000]\nb\nc"], ["StubLine", "RunBoundary"]),
        ("lines containing the prefix not at the start are ordinary lines",
         [f"see {STUB}L0 1 lines=r0:0] here\n {STUB}x", f"see {STUB}L0 1 lines=r0:0] here\n {STUB}x"], ["PrefixInside"]),
        ("2,100 distinct lines, then a few of them again, then all of them", ["\n".join(many), "line 00000\nline 02099\nline 01024\nnew", "\n".join(many)], ["LargeSeenSet", "Run"]),
        ("no records", [], ["Empty"]),
        ("one empty record", [""], ["Empty"]),
        ("empty records around repeats", ["", "a", "", "a"], ["Empty", "Basic"]),
        ("the pointer names the first copy's output line (after an earlier stub in its record)", ["x\nx\nx\ny", "y\nx"], ["StubPointer"]),
        ("pointers into the same record and into record 2", ["m", "n\nn", "o\nm\no\nn"], ["StubPointer"]),
    ]


def _tokens_json(tokens: list[list[tuple]]) -> list[list[Any]]:
    return [[tok[1] if tok[0] == "keep" else {"stub": {"count": tok[1], "record": tok[2][0], "line": tok[2][1]}}
             for tok in rec] for rec in tokens]


def _render(tokens: list[list[tuple]]) -> list[str]:
    return ["\n".join(tok[1] if tok[0] == "keep" else f"{STUB}L0 {tok[1]} lines=r{tok[2][0]}:{tok[2][1]}" + "]" for tok in rec)
            for rec in tokens]


def build_l0(exact: bool) -> _File:
    profile = "l0-stubs" if exact else "l0"
    title = ("L0 with lam_ref's stub text [LAM:L0 n lines=rR:L] (SPEC §7.2, §8.1)" if exact
             else "L0 exact line deduplication, any stub text starting with STUB_PREFIX (SPEC §7)")
    f = _File(profile, title, L0_NOTES, {"stub_prefix": STUB})
    cases = _l0_cases()
    cases += [(f"a line of only U+{ord(ch):04X}, repeated", [f"{ch}\nq", f"{ch}\nq"],
               ["UnicodeWhitespace" if ch.isspace() else "NotWhitespace"]) for ch in _WS_ODD]
    cases += l0_key_cases()
    for comment, records, flags in cases:
        tokens = reference_tokens(records, STUB)
        expected = _render(tokens) if exact else _tokens_json(tokens)
        f.add(comment=comment, flags=flags, spec="s7-runs", result="valid", op="dedup_lines",
              input={"records": records}, expected={"records": expected})
    return f


# ------------------------------------------------------------------------------------------------
# L2 codec, version 1 byte format (docs/codec.md), written here one value at a time
# ------------------------------------------------------------------------------------------------
MAGIC = b"LSZP"
Q_MAX = 2**31 - 1


def v1_quantize(x: float, eb: float) -> int:
    y = x / (2.0 * eb)
    fl = math.floor(y)
    return fl + 1 if y - fl >= 0.5 else fl


def _bits(bits: list[int]) -> bytes:
    return bytes(sum(bits[i + k] << (7 - k) for k in range(8)) for i in range(0, len(bits), 8))


def v1_stream(n: int, eb: float, block: int, rates: bytes, payload: bytes, *, version: int = 1, flags: int = 0,
              magic: bytes = MAGIC, crc: int | None = None) -> bytes:
    head = magic + struct.pack("<BBHQd", version, flags, block, n, eb)
    c = zlib_crc(head + rates + payload) if crc is None else crc
    return head + struct.pack("<I", c) + rates + payload


def zlib_crc(b: bytes) -> int:
    import zlib

    return zlib.crc32(b)


def v1_blocks(q: list[int], block: int) -> tuple[bytes, bytes]:
    rates, payload = bytearray(), bytearray()
    for b0 in range(0, len(q), block):
        deltas, prev = [], 0
        for j in range(block):
            if b0 + j < len(q):
                deltas.append(q[b0 + j] - prev)
                prev = q[b0 + j]
            else:
                deltas.append(0)
        rate = max(abs(d) for d in deltas).bit_length()
        rates.append(rate)
        if rate:
            payload += _bits([1 if d < 0 else 0 for d in deltas])
            for p in range(rate):
                payload += _bits([(abs(d) >> p) & 1 for d in deltas])
    return bytes(rates), bytes(payload)


def v1_encode(x: list[float], eb: float, block: int = 32) -> bytes:
    q = [v1_quantize(v, eb) for v in x]
    assert all(abs(k) <= Q_MAX for k in q)
    rates, payload = v1_blocks(q, block)
    return v1_stream(len(x), eb, block, rates, payload)


def v1_decode_values(x: list[float], eb: float) -> list[float]:
    """The reconstruction ``float32(q · 2eb)`` of each value (struct rounds to nearest even)."""
    return [struct.unpack("<f", struct.pack("<f", v1_quantize(v, eb) * (2.0 * eb)))[0] for v in x]


CODEC_NOTES = {
    "RoundTrip": ("Functionality", "decode(encode(x)) has x's length and every value within the bound."),
    "Empty": ("EdgeCase", "n = 0: a valid stream that decodes to an empty array."),
    "PartialBlock": ("EdgeCase", "n not a multiple of the block size (padding)."),
    "RoundingTie": ("Rounding", "quotients x / (2eb) exactly halfway: round half up on the float64 quotient (docs/codec.md)."),
    "SlackNeeded": ("Tolerance", "|x - x'| exceeds eb by the float32 rounding of the reconstruction, which the bound allows (x = 0.5, eb = 0.1)."),
    "LargeQuotient": ("IntegerWidth", "|x| / (2eb) near 2^31 (int32 codes, rate-32 blocks, 32-bit deltas overflow)."),
    "QuotientBeyondInt32": ("IntegerWidth", "|x| / (2eb) beyond 2^31 - 1: format version 1 MUST refuse; any format MAY refuse an eb too small for the data, and MUST NOT break the bound (SPEC §9.4, A9)."),
    "Float32Overflow": ("Overflow", "a reconstruction q · 2eb beyond float32's range: version 1 MUST refuse; any format MAY refuse, never return a value outside the bound (SPEC §9.4)."),
    "SpecialValues": ("EdgeCase", "negative zero and subnormal values."),
    "BadBound": ("InvalidInput", "eb zero, negative, NaN or infinite: ValueError."),
    "HugeBound": ("InvalidInput", "eb so large that 2eb overflows float64 (eb > 8.98e307, e.g. 1e308): MUST be refused (SPEC §9.4, A9)."),
    "NonFinite": ("InvalidInput", "a NaN or infinite value in x: ValueError naming the index."),
    "Truncated": ("InvalidStream", "the stream cut short: decode must refuse, never return a shorter array."),
    "EmptyStream": ("InvalidStream", "zero bytes: decode must refuse."),
    "GoldenBytes": ("Format", "encode(x, eb) must give exactly these bytes (format version 1, block size 32)."),
    "BlockSize": ("Format", "streams with block sizes other than 32 (8, 64, 4096) decode: the stream is self-describing."),
    "CrcMismatch": ("InvalidStream", "the CRC-32 does not match header and body."),
    "TrailingBytes": ("InvalidStream", "bytes after the last payload."),
    "BadHeader": ("InvalidStream", "wrong magic, version, flags, block size, or eb in the header (CRC recomputed so the field is what is wrong)."),
    "BadRate": ("InvalidStream", "a rate byte above 32, or larger than the bit length of the block's largest delta (non-canonical)."),
    "BadPayload": ("InvalidStream", "a sign bit on a zero delta, non-zero padding, a code beyond 2^31 - 1, or a reconstruction beyond float32."),
    "NegativeZeroDelta": ("Sign", "-0.0 inputs make deltas of -0.0 in float arithmetic: no sign bit (a sign bit is set iff d < 0, and d = 0 has none)."),
    "BelowHalf": ("Rounding", "the quotient x / (2eb) is the largest double below 0.5 (0.5 - 2^-54): the rule gives q = 0; floor(y + 0.5) gives 1 because y + 0.5 rounds to 1.0."),
    "ReciprocalTrap": ("Rounding", "values whose code changes when x / (2eb) is computed as x * (1/(2eb)), at many eb (SPEC §9.2 forbids the rewrite)."),
    "RangeOnCode": ("IntegerWidth", "the range rule is on the rounded code q (SPEC §9.4): x = 2^31 with quotient 2^31 - 0.75 has q = 2^31 - 1 and MUST encode (a check on the quotient or the value refuses it); quotient 2^31 - 0.5 has q = 2^31 and is refused."),
    "Float32OverflowEdge": ("Overflow", "a reconstruction q * 2eb in (FLT_MAX, 2^128 - 2^103) rounds to FLT_MAX and is valid; from 2^128 - 2^103 on it rounds to infinity and is refused (docs/spec-decisions.md D-codec-overflow)."),
    "WidthEdge": ("IntegerWidth", "codes and deltas at 2^k - 1, 2^k, 2^k + 1 (k = 8, 12, 13, 16, 23, 24, 30, 31, 32): rate bytes, 16-, 24- and 32-bit arithmetic."),
    "HeaderEdge": ("InvalidStream", "a header field at its minimum or maximum (valid) or one beyond it (refused): block size 8, 4088, 4096 against 7, 9, 4095, 4097, 65535; eb the smallest subnormal and DBL_MAX/2 against the next double; version 3 and 255; flags 128 and 255."),
    "HeaderWidth": ("IntegerWidth", "a count read with the wrong width or signedness: n with bit 32 or bit 63 set (a 32-bit or signed read sees a plausible n), rate bytes 128 and 255 (a signed byte reads them as negative)."),
    "EmptyChecked": ("EarlyExit", "n = 0 with another defect (CRC, trailing byte, eb, block size, flags, version): an empty stream is checked like any other, never returned early."),
}


def _codec_cases() -> list[tuple[str, list[float], float, list[str]]]:
    rng = np.random.default_rng(21)
    hand = [2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6
    return [
        ("docs/codec.md worked example (n = 40, eb = 0.5)", hand, 0.5, ["RoundTrip", "PartialBlock"]),
        ("n = 0", [], 1e-3, ["Empty"]),
        ("n = 1", [0.3], 1e-3, ["RoundTrip", "PartialBlock"]),
        ("rounding ties at eb = 0.5 (s = 1)", [2.5, 1.5, 0.5, -0.5, -1.5, -2.5, 0.49999997], 0.5, ["RoundingTie"]),
        ("x = 0.5, eb = 0.1: the error exceeds eb by float32 rounding", [0.5], 0.1, ["SlackNeeded"]),
        ("70 values from -1 to 1, eb = 1e-3", np.linspace(-1, 1, 70, dtype=np.float32).tolist(), 1e-3, ["RoundTrip", "PartialBlock"]),
        ("100 Gaussian values (σ = 0.05), eb = 1e-3", (0.05 * rng.normal(size=100)).astype(np.float32).tolist(), 1e-3, ["RoundTrip"]),
        ("33 values: one full block and one value", [(-1) ** k * k / 64 for k in range(33)], 1e-2, ["PartialBlock"]),
        ("quotients ±(2^31 - 128): rate-32 block, a delta of 2^32 - 256", [2147483520.0, -2147483520.0, 0.0, 2147483520.0], 0.5, ["LargeQuotient"]),
        ("negative zero and subnormals", [-0.0, 1e-45, -1e-45, 1.1754942e-38, 0.0], 1e-3, ["SpecialValues"]),
        ("eb = 1e300 (every code 0)", [1.0, -3.0], 1e300, ["RoundTrip"]),
        ("eb = 8e307 (2eb finite)", [1.0], 8e307, ["RoundTrip"]),
    ] + _codec_edge_cases()


def _codec_edge_cases() -> list[tuple[str, list[float], float, list[str]]]:
    """Inputs at the boundaries of SPEC §9's sentences (issue 38 §1; :mod:`.codec_boundaries`)."""
    out = [("-0.0 among codes 1 and 0 (deltas -0.0 in float arithmetic), eb = 0.5", [-0.0, 1.0, 0.0, -0.0, 1.0, -0.0], 0.5,
            ["NegativeZeroDelta"])]
    for x in (3.0, 7.0, 1.5):
        eb = cb.below_half_eb(x)
        assert eb is not None and v1_quantize(x, eb) == 0
        out.append((f"x = {x}, eb = {eb!r}: quotient 0.5 - 2^-54, q = 0", [x, -x, 2 * x], eb, ["BelowHalf"]))
    for eb in (1e-5, 3e-4, 0.03, 0.7, 0.1, 1e-3):
        traps = cb.reciprocal_traps(eb, limit=4)
        if traps:
            out.append((f"{len(traps)} values whose code differs under x * (1/(2eb)), eb = {eb!r}", traps, eb, ["ReciprocalTrap"]))
    ok, _ = cb.range_edge_eb()
    out.append((f"x = 2^31, eb = {ok!r}: quotient 2^31 - 0.75, q = 2^31 - 1 (the largest code)", [2.0**31, -(2.0**31)], ok,
                ["RangeOnCode", "LargeQuotient"]))
    fine, _ = cb.overflow_edge_eb()
    out.append((f"x = FLT_MAX, eb = {fine!r}: q * 2eb just below 2^128 - 2^103 rounds to FLT_MAX", [cb.FLT_MAX, -cb.FLT_MAX, 0.0],
                fine, ["Float32OverflowEdge"]))
    out.append(("codes and deltas at 2^k - 1, 2^k, 2^k + 1 (eb = 0.5, x = q)", [float(v) for v in cb.width_codes()], 0.5,
                ["WidthEdge", "LargeQuotient"]))
    return out


def build_codec_bound() -> _File:
    f = _File("codec-bound", "L2 codec, any format: the error bound and the refusals (SPEC §9)", CODEC_NOTES,
              {"tolerance": "|x - y| <= eb + ulp32(max(|x|, |y|)) + 2^-50 * (|x| + eb), in float64, where "
                            "ulp32(v) is the spacing of float32 at |v| (numpy.spacing); y = decode(encode(x, eb))"})
    for comment, x, eb, flags in _codec_cases():
        open_ = bool({"Float32OverflowEdge", "RangeOnCode"} & set(flags))  # SPEC §9.4: any format MAY refuse these
        f.add(comment=comment, flags=flags, spec="s9-bound", result="acceptable" if open_ else "valid", op="codec_roundtrip",
              input={"x": encode_array(_f32(x)), "eb": encode_scalar(eb)}, expected={"n": len(x)}, may_reject=open_)
    for comment, x, eb, flags in (("x = 2^31 at eb = 0.5 (code beyond int32)", [2147483648.0], 0.5, ["QuotientBeyondInt32"]),
                                  ("x = 1 at eb = 5e-324 (a subnormal bound)", [1.0], 5e-324, ["QuotientBeyondInt32"]),
                                  ("x = 3e38 at eb = 1e38 (reconstruction 4e38)", [3e38], 1e38, ["Float32Overflow"])):
        f.add(comment=comment, flags=flags, spec="s9-bound", result="acceptable", op="codec_roundtrip",
              input={"x": encode_array(_f32(x)), "eb": encode_scalar(eb)}, expected={"n": len(x)}, may_reject=True)
    x = np.linspace(-1, 1, 70, dtype=np.float32)
    for eb in (0.0, -1e-3, float("nan"), float("inf"), float("-inf"), 1e308):
        f.add(comment=f"eb = {eb!r}" + (": 2eb overflows float64 (SPEC §9.4, A9)" if eb == 1e308 else ""),
              flags=["HugeBound" if eb == 1e308 else "BadBound"], spec="s9-codec", result="invalid", op="codec_roundtrip",
              input={"x": encode_array(x), "eb": encode_scalar(eb)})
    for label, k, value in (("a NaN at index 37", 37, np.nan), ("+inf at index 3", 3, np.inf), ("-inf at index 69", 69, -np.inf)):
        bad = x.copy()
        bad[k] = value
        f.add(comment=label, flags=["NonFinite"], spec="s9-codec", result="invalid", op="codec_roundtrip",
              input={"x": encode_array(bad), "eb": encode_scalar(1e-3)})
    for cut in ("1", "half", "all but 1"):
        f.add(comment=f"the encoding of 70 values with {cut} byte(s) cut off the end", flags=["Truncated"], spec="s9-codec",
              result="invalid", op="codec_truncated", input={"x": encode_array(x), "eb": encode_scalar(1e-3), "cut": cut})
    f.add(comment="zero bytes", flags=["EmptyStream"], spec="s9-codec", result="invalid", op="codec_decode", input={"data": ""})
    return f


def build_codec_v1() -> _File:
    f = _File("codec-v1", "L2 codec byte format version 1 (docs/codec.md): golden bytes and refused streams", CODEC_NOTES)
    for comment, x, eb, flags in _codec_cases():
        x32 = _f32(x).tolist()
        data = v1_encode(x32, eb)
        f.add(comment=comment, flags=["GoldenBytes", *flags], spec="s9-codec", result="valid", op="codec_encode",
              input={"x": encode_array(_f32(x)), "eb": encode_scalar(eb)}, expected={"data": encode_bytes(data)})
        f.add(comment=f"decode: {comment}", flags=flags, spec="s9-codec", result="valid", op="codec_decode",
              input={"data": encode_bytes(data)}, expected={"x": encode_array(_f32(v1_decode_values(x32, eb)))})
    ext = cb.extreme_code_eb()
    for comment, x, eb, flags in ((f"q = 0, ±(2^31 - 1) at eb = {ext!r}: deltas 2^31 - 1, -(2^32 - 2), 2^32 - 2 (rate 32)",
                                   [0.0, 1.0, -1.0, 0.0, -1.0, 1.0], ext, ["WidthEdge", "LargeQuotient"]),):
        x32 = _f32(x).tolist()
        data = v1_encode(x32, eb)
        f.add(comment=comment, flags=["GoldenBytes", *flags], spec="s9-codec", result="valid", op="codec_encode",
              input={"x": encode_array(_f32(x)), "eb": encode_scalar(eb)}, expected={"data": encode_bytes(data)})
        f.add(comment=f"decode: {comment}", flags=flags, spec="s9-codec", result="valid", op="codec_decode",
              input={"data": encode_bytes(data)}, expected={"x": encode_array(_f32(v1_decode_values(x32, eb)))})
    x70 = np.linspace(-1, 1, 70, dtype=np.float32).tolist()
    for block in (8, 64, 4096):
        data = v1_encode(x70, 1e-3, block)
        f.add(comment=f"block size {block}, 70 values", flags=["BlockSize"], spec="s9-codec", result="valid", op="codec_decode",
              input={"data": encode_bytes(data)}, expected={"x": encode_array(_f32(v1_decode_values(x70, 1e-3)))})
    _, refused_range = cb.range_edge_eb()
    _, refused_overflow = cb.overflow_edge_eb()
    for comment, x, eb, flag in (("x = 2^31 at eb = 0.5 (code beyond 2^31 - 1)", [2147483648.0], 0.5, "QuotientBeyondInt32"),
                                 (f"x = 2^31 at eb = {refused_range!r}: quotient 2^31 - 0.5 rounds up to q = 2^31", [2.0**31],
                                  refused_range, "RangeOnCode"),
                                 (f"x = FLT_MAX at eb = {refused_overflow!r}: q * 2eb = 2^128 - 2^103 rounds to infinity",
                                  [cb.FLT_MAX], refused_overflow, "Float32OverflowEdge"),
                                 ("x = 3e38 at eb = 1e38 (reconstruction overflows float32)", [3e38], 1e38, "Float32Overflow"),
                                 ("eb = 1e308 (2eb overflows float64)", [1.0], 1e308, "HugeBound")):
        f.add(comment=f"encode refuses: {comment}", flags=[flag], spec="s9-codec", result="invalid", op="codec_encode",
              input={"x": encode_array(_f32(x)), "eb": encode_scalar(eb)})
    # refused streams, each with one defect (the CRC recomputed unless the CRC is the defect)
    hand = [2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6
    q = [v1_quantize(v, 0.5) for v in hand]
    rates, payload = v1_blocks(q, 32)
    good = v1_stream(40, 0.5, 32, rates, payload)
    bad: list[tuple[str, list[str], bytes]] = [
        ("CRC-32 off by one", ["CrcMismatch"], v1_stream(40, 0.5, 32, rates, payload, crc=(zlib_crc(good[:24] + good[28:]) + 1) % 2**32)),
        ("a flipped payload bit, CRC unchanged", ["CrcMismatch"], good[:-1] + bytes([good[-1] ^ 0x01])),
        ("one trailing zero byte (CRC over it)", ["TrailingBytes"], v1_stream(40, 0.5, 32, rates, payload + b"\x00")),
        ("header cut to 27 bytes", ["Truncated"], good[:27]),
        ("the last payload byte missing (CRC over the rest)", ["Truncated"], v1_stream(40, 0.5, 32, rates, payload[:-1])),
        ("the second rate byte missing", ["Truncated"], v1_stream(40, 0.5, 32, rates[:1], b"")),
        ("magic LSZQ", ["BadHeader"], v1_stream(40, 0.5, 32, rates, payload, magic=b"LSZQ")),
        ("version 2", ["BadHeader"], v1_stream(40, 0.5, 32, rates, payload, version=2)),
        ("version 0", ["BadHeader"], v1_stream(40, 0.5, 32, rates, payload, version=0)),
        ("flags 1", ["BadHeader"], v1_stream(40, 0.5, 32, rates, payload, flags=1)),
        ("block size 0", ["BadHeader"], v1_stream(40, 0.5, 0, rates, payload)),
        ("block size 12 (not a multiple of 8)", ["BadHeader"], v1_stream(40, 0.5, 12, rates, payload)),
        ("block size 4104 (above 4096)", ["BadHeader"], v1_stream(1, 0.5, 4104, b"\x00", b"")),
        ("eb = 0 in the header", ["BadHeader"], v1_stream(40, 0.0, 32, rates, payload)),
        ("eb = -0.5 in the header", ["BadHeader"], v1_stream(40, -0.5, 32, rates, payload)),
        ("eb = NaN in the header", ["BadHeader"], v1_stream(40, float("nan"), 32, rates, payload)),
        ("eb = inf in the header", ["BadHeader"], v1_stream(40, float("inf"), 32, rates, payload)),
        ("eb = 1e308 in the header (2eb overflows)", ["BadHeader"], v1_stream(40, 1e308, 32, rates, payload)),
        ("n = 33 in the header of a 40-value stream: padding slots hold non-zero deltas", ["BadPayload"],
         v1_stream(33, 0.5, 32, rates, payload)),
    ]
    # a rate byte of 33
    bad.append(("rate byte 33", ["BadRate"], v1_stream(8, 0.5, 8, bytes([33]), b"\x00" * 34)))
    # non-canonical rate: one value q = 1 written with rate 2
    one = _bits([0] * 8), _bits([1] + [0] * 7), _bits([0] * 8)
    bad.append(("rate 2 for a block whose largest |d| is 1", ["BadRate"], v1_stream(1, 0.5, 8, bytes([2]), b"".join(one))))
    # a sign bit on a zero delta: values q = 1, 0 -> d = 1, -1; set a sign on padding/zero
    signs_zero = _bits([0, 0, 1, 0, 0, 0, 0, 0])
    bad.append(("a sign bit on a zero delta", ["BadPayload"],
                v1_stream(3, 0.5, 8, bytes([1]), signs_zero + _bits([1, 0, 0, 0, 0, 0, 0, 0]))))
    bad.append(("a magnitude bit in a padding slot", ["BadPayload"],
                v1_stream(1, 0.5, 8, bytes([1]), _bits([0] * 8) + _bits([1, 0, 0, 0, 0, 0, 0, 1]))))
    # a code beyond 2^31 - 1 by a prefix sum: d = 2^31 - 1, then +1
    big = 2**31 - 1
    planes = b"".join(_bits([(big >> p) & 1, 1 if p == 0 else 0] + [0] * 6) for p in range(31))
    bad.append(("prefix sum reaches 2^31 (codes beyond 2^31 - 1)", ["BadPayload"],
                v1_stream(2, 0.5, 8, bytes([31]), _bits([0] * 8) + planes)))
    # a reconstruction beyond float32: q = 2 at eb = 1e38
    bad.append(("q = 2 at eb = 1e38: the reconstruction 4e38 overflows float32", ["BadPayload"],
                v1_stream(1, 1e38, 8, bytes([2]), _bits([0] * 8) + _bits([0] * 8) + _bits([1] + [0] * 7))))
    bad += _v1_edge_streams(good, rates, payload)
    for comment, flags, data in bad:
        f.add(comment=comment, flags=flags, spec="s9-codec", result="invalid", op="codec_decode", input={"data": encode_bytes(data)})
    for comment, flags, data, values in _v1_edge_valid():
        f.add(comment=comment, flags=flags, spec="s9-codec", result="valid", op="codec_decode", input={"data": encode_bytes(data)},
              expected={"x": encode_array(_f32(values))})
    return f


def _v1_edge_streams(good: bytes, rates: bytes, payload: bytes) -> list[tuple[str, list[str], bytes]]:
    """Refused version-1 streams at the header's edges: each one field one beyond its range (CRC recomputed)."""
    out: list[tuple[str, list[str], bytes]] = []
    for block in (7, 9, 4095, 4097, 65535):
        out.append((f"block size {block}", ["HeaderEdge"], v1_stream(40, 0.5, block, rates, payload)))
    out.append(("eb = the double above DBL_MAX/2 (2eb overflows)", ["HeaderEdge"],
                v1_stream(40, float(np.nextafter(np.finfo(np.float64).max / 2, np.inf)), 32, rates, payload)))
    for version in (3, 255):
        out.append((f"version {version}", ["HeaderEdge"], v1_stream(40, 0.5, 32, rates, payload, version=version)))
    for flags in (128, 255):
        out.append((f"flags {flags}", ["HeaderEdge"], v1_stream(40, 0.5, 32, rates, payload, flags=flags)))
    for extra, what in ((2**32, "bit 32"), (2**63, "bit 63")):
        out.append((f"n = 40 with {what} set (a 32-bit or signed read sees 40 or a negative count)", ["HeaderWidth"],
                    v1_stream(40 + extra, 0.5, 32, rates, payload)))
    out.append(("n = 2^64 - 1", ["HeaderWidth"], v1_stream(2**64 - 1, 0.5, 32, rates, payload)))
    for r in (128, 255):
        out.append((f"rate byte {r} (negative as a signed byte)", ["HeaderWidth", "BadRate"],
                    v1_stream(8, 0.5, 8, bytes([r]), b"\x00" * 8)))
        out.append((f"rate byte {r} and no payload (a signed reader sees an empty block)", ["HeaderWidth", "BadRate"],
                    v1_stream(8, 0.5, 8, bytes([r]), b"")))
    empty = v1_stream(0, 1e-3, 32, b"", b"")
    out += [
        ("n = 0 with the CRC-32 off by one", ["EmptyChecked", "CrcMismatch"], empty[:24] + struct.pack("<I", (zlib_crc(empty[:24]) + 1) % 2**32)),
        ("n = 0 with one trailing byte", ["EmptyChecked", "TrailingBytes"], v1_stream(0, 1e-3, 32, b"", b"\x00")),
        ("n = 0 with eb = 0", ["EmptyChecked", "BadHeader"], v1_stream(0, 0.0, 32, b"", b"")),
        ("n = 0 with block size 12", ["EmptyChecked", "BadHeader"], v1_stream(0, 1e-3, 12, b"", b"")),
        ("n = 0 with flags 1", ["EmptyChecked", "BadHeader"], v1_stream(0, 1e-3, 32, b"", b"", flags=1)),
        ("n = 0 with version 3", ["EmptyChecked", "BadHeader"], v1_stream(0, 1e-3, 32, b"", b"", version=3)),
        ("n = 0 with magic LSZQ", ["EmptyChecked", "BadHeader"], v1_stream(0, 1e-3, 32, b"", b"", magic=b"LSZQ")),
    ]
    q = [1]
    r2, p2 = v1_blocks(q, 8)
    _, bad_eb = cb.overflow_edge_eb()
    out.append(("q = 1 at eb = (2^128 - 2^103)/2: the reconstruction rounds to infinity", ["Float32OverflowEdge", "BadPayload"],
                v1_stream(1, bad_eb, 8, r2, p2)))
    return out


def _v1_edge_valid() -> list[tuple[str, list[str], bytes, list[float]]]:
    """Valid version-1 streams at the header's edges, with the values they decode to."""
    x40 = [2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6
    q = [v1_quantize(v, 0.5) for v in x40]
    out = []
    for block in (8, 4088):
        rates, payload = v1_blocks(q, block)
        out.append((f"block size {block}, the worked example's codes", ["HeaderEdge", "BlockSize"],
                    v1_stream(40, 0.5, block, rates, payload), v1_decode_values(x40, 0.5)))
    tiny = 5e-324
    rates, payload = v1_blocks(q, 32)
    out.append(("eb = 5e-324 (the smallest subnormal): codes reconstruct to +0.0 and -0.0", ["HeaderEdge", "SpecialValues"],
                v1_stream(40, tiny, 32, rates, payload),
                [struct.unpack("<f", struct.pack("<f", k * (2.0 * tiny)))[0] for k in q]))
    top = float(np.finfo(np.float64).max / 2)
    out.append(("eb = DBL_MAX/2 (the largest with 2eb finite), all codes 0", ["HeaderEdge"],
                v1_stream(40, top, 32, bytes(2), b""), [0.0] * 40))
    fine, _ = cb.overflow_edge_eb()
    r1, p1 = v1_blocks([1, -1], 8)
    out.append(("q = 1, -1 at eb just below (2^128 - 2^103)/2: decodes to FLT_MAX, -FLT_MAX", ["Float32OverflowEdge"],
                v1_stream(2, fine, 8, r1, p1), [cb.FLT_MAX, -cb.FLT_MAX]))
    return out


# ------------------------------------------------------------------------------------------------
# L2 codec, version 2 (SPEC §9.6): decode vectors; the expected values from the v1 quantizer above
# ------------------------------------------------------------------------------------------------
CODEC_V2_NOTES = {
    "Decode": ("Format", "a valid version-2 stream decodes to exactly these float32 values (the version-1 codes, SPEC §9.6)."),
    "Strict": ("Tolerance", "strict mode (flags bit 0): every value within eb exactly; the exceptions hold the values plain rounding would push past eb."),
    "RowRepeats": ("Format", "cols >= 16: exact repeats of earlier rows stored as references."),
    "Escapes": ("Format", "zigzag codes >= 4096: escape symbols followed by raw bits."),
    "Empty": ("EdgeCase", "n = 0."),
    "CrcMismatch": ("InvalidStream", "the CRC-32 does not match header and body."),
    "Truncated": ("InvalidStream", "the stream cut short (CRC recomputed): refused, never a partial array."),
    "TrailingBytes": ("InvalidStream", "a byte after the bit stream (CRC recomputed)."),
    "BadHeader": ("InvalidStream", "an undefined flags bit, or a column count that does not divide n (CRC recomputed)."),
    "NonCanonical": ("InvalidStream", "classes, code lengths, row repeats, exceptions or padding the encoder never writes (CRC recomputed)."),
    "ManyRepeats": ("Format", "far more values than body bits (rows repeated): valid; a decoder that needs one bit per value refuses it (docs/spec-decisions.md D-codec-capacity)."),
    "EqualRowsBelow16": ("Format", "cols < 16: no row-repeat section, equal rows are written out and valid (D-codec-equal-rows)."),
    "LengthLimit": ("Format", "skewed (Fibonacci) counts: 16 symbols give a tree exactly 15 deep (no halving); 17 give 16, so the counts are halved until every length is at most 15 (SPEC §9.6)."),
    "RepeatWidth": ("IntegerWidth", "R distinct rows at 2, 3, 4, 5, 8, 9, 16, 17, 257: each repeat index is bit_length(R - 1) bits, most significant first (D-codec-bit-order)."),
    "ZigzagWidth": ("IntegerWidth", "codes with zigzag values at and above 2^31 (up to 2^32 - 2): unsigned 32-bit or wider arithmetic; a signed 32-bit shift decodes them wrong."),
    "EscapeEdge": ("Format", "zigzag codes 4095 (the last direct symbol), 4096 (the first escape, bit length 13) up to bit length 32; the raw bits follow the code, most significant first."),
    "Float32OverflowEdge": ("Overflow", "q * 2eb just below 2^128 - 2^103 decodes to FLT_MAX; at 2^128 - 2^103 the stream is refused (D-codec-overflow)."),
    "BadCodeLengths": ("InvalidStream", "code lengths that are not the rule's: altered, over-subscribed, incomplete where the bit stream hits the gap, a table one symbol too long, a non-zero padding nibble."),
    "BadRowMarks": ("InvalidStream", "row marks the encoder never writes: a repeat of a row not yet seen, more or fewer new rows than R, marks that run past their bits, non-zero mark padding, R above the rows or 0 with rows."),
    "BadException": ("InvalidStream", "exceptions the encoder never writes (strict): indices out of order, repeated or >= n, a count above n, a value that is not finite, equals or lies within eb of its plain reconstruction, or has another code (D-codec-exceptions)."),
    "BadPadding": ("InvalidStream", "non-zero padding bits after the last code."),
    "CodeRange": ("IntegerWidth", "a decoded code beyond |q| <= 2^31 - 1 (zigzag 2^32 - 1): refused."),
    "HeaderEdge": ("InvalidStream", "header fields at their edges: cols 1 and 65535 valid; cols 0, flags 2, 128, 255 refused."),
    "HeaderWidth": ("IntegerWidth", "counts read with the wrong width or signedness: n, R or E with bit 32 set, a table size A with bit 15 set."),
    "EmptyChecked": ("EarlyExit", "n = 0 with another defect (a class above 0, a table with symbols, a trailing byte, R = 1): refused, never returned early."),
}


def _v2_expected(x: list[float], eb: float, strict: bool) -> list[float]:
    plain = v1_decode_values(x, eb)
    if not strict:
        return plain
    return [v if abs(v - r) > eb else r for v, r in zip(x, plain)]


def _restamp(data: bytes) -> bytes:
    return data[:24] + struct.pack("<I", zlib_crc(data[:24] + data[28:])) + data[28:]


def _v2_cases() -> list[tuple[str, np.ndarray, float, int, bool, list[str]]]:
    rng = np.random.default_rng(26)
    rows = (0.05 * rng.normal(size=(6, 16))).astype(np.float32)
    rep = np.concatenate([rows, rows[[1, 4, 1]]]).reshape(-1)
    large = (np.float32(1000.0) + np.arange(40, dtype=np.float32) * np.float32(2.0**-13)).astype(np.float32)
    return [
        ("100 Gaussian values (σ = 0.05), eb = 1e-3, one column", (0.05 * rng.normal(size=100)).astype(np.float32),
         1e-3, 1, False, ["Decode"]),
        ("rounding ties at eb = 0.5, two columns", _f32([2.5, 1.5, 0.5, -0.5, -1.5, -2.5, 0.49999997, 0.0]), 0.5, 2, False,
         ["Decode"]),
        ("9 rows of 16 with three exact repeats, eb = 1e-3", rep, 1e-3, 16, False, ["Decode", "RowRepeats"]),
        ("the same rows, strict, eb = 1e-4", rep, 1e-4, 16, True, ["Decode", "Strict", "RowRepeats"]),
        ("40 values near 1000 at eb = 1e-4, strict (float32 is coarser than eb)", large, 1e-4, 1, True,
         ["Decode", "Strict", "Escapes"]),
        ("x = 0.5, eb = 0.1, strict: the one value plain rounding pushes past eb", _f32([0.5, 0.25]), 0.1, 1, True,
         ["Decode", "Strict"]),
        ("n = 0, 16 columns, strict", _f32([]), 1e-3, 16, True, ["Empty"]),
    ]


def build_codec_v2() -> _File:
    from ... import codec_v2 as v2

    def stream(x: np.ndarray, eb: float, cols: int, strict: bool) -> bytes:
        q = np.array([v1_quantize(float(v), eb) for v in x.tolist()], dtype=np.int64)
        body = v2.encode_body(q, x, eb, cols, strict)
        head = MAGIC + struct.pack("<BBHQd", 2, 1 if strict else 0, cols, x.size, eb)
        return _restamp(head + b"\0\0\0\0" + body)

    f = _File("codec-v2", "L2 codec byte format version 2 (docs/codec.md): decoded values and refused streams",
              CODEC_V2_NOTES)
    for comment, x, eb, cols, strict, flags in _v2_cases():
        f.add(comment=comment, flags=flags, spec="s9-v2", result="valid", op="codec_decode",
              input={"data": encode_bytes(stream(x, eb, cols, strict))},
              expected={"x": encode_array(_f32(_v2_expected(x.tolist(), eb, strict)))})
    x = stream_input_of_good().reshape(5, 16)
    good = stream(x.reshape(-1), 1e-3, 16, True)
    body_at = 28 + 8 + 1  # header, distinct-row count (4 of 5 rows), 5 + 1 * 2 row bits in one byte
    classes = good[body_at : body_at + 16]
    dup = v2.row_repeats
    try:  # a stream that writes the repeated row again instead of referring to it
        v2.row_repeats = lambda z, cols: [-1] * (z.size // cols)  # type: ignore[assignment]
        twice = stream(x.reshape(-1), 1e-3, 16, True)
    finally:
        v2.row_repeats = dup  # type: ignore[assignment]
    bad: list[tuple[str, list[str], bytes]] = [
        ("CRC-32 off by one", ["CrcMismatch"], good[:24] + struct.pack("<I", (zlib_crc(good[:24] + good[28:]) + 1) % 2**32)
         + good[28:]),
        ("the last byte missing", ["Truncated"], _restamp(good[:-1])),
        ("one trailing zero byte", ["TrailingBytes"], _restamp(good + b"\0")),
        ("flags 3 (bit 1 undefined)", ["BadHeader"], _restamp(good[:5] + b"\x03" + good[6:])),
        ("7 columns for 80 values", ["BadHeader"], _restamp(good[:6] + struct.pack("<H", 7) + good[8:])),
        ("a column class raised by one", ["NonCanonical"],
         _restamp(good[:body_at] + bytes([classes[0] + 1]) + good[body_at + 1 :])),
        ("the repeated row written out again (two equal distinct rows)", ["NonCanonical"], twice),
        ("the first row marked as a repeat", ["NonCanonical"],
         _restamp(good[:36] + bytes([good[36] & 0x7F]) + good[37:])),
        ("the distinct-row count one too high", ["NonCanonical"],
         _restamp(good[:28] + struct.pack("<Q", struct.unpack("<Q", good[28:36])[0] + 1) + good[36:])),
    ]
    for comment, flags, data in bad:
        f.add(comment=comment, flags=flags, spec="s9-v2", result="invalid", op="codec_decode", input={"data": encode_bytes(data)})
    _v2_edge_vectors(f, stream, good)
    return f


def _v2_edge_valid() -> list[tuple[str, np.ndarray, float, int, bool, list[str]]]:
    """Valid version-2 inputs at the edges of SPEC §9.6's sentences (issue 38 §1)."""
    rng = np.random.default_rng(38)
    rows = (0.05 * rng.normal(size=(3, 16))).astype(np.float32)
    many = rows[[0, 1, 2] + [1] * 30 + [0, 2] * 6].reshape(-1)
    r15 = (0.05 * rng.normal(size=(2, 15))).astype(np.float32)
    out = [
        ("45 rows of 16 from 3 distinct rows: 720 values in fewer body bits", many, 1e-3, 16, False, ["Decode", "ManyRepeats", "RowRepeats"]),
        ("the same, strict", many, 1e-3, 16, True, ["Decode", "ManyRepeats", "RowRepeats", "Strict"]),
        ("40 rows of 16 zeros: 640 values in 37 body bytes", np.zeros(640, dtype=np.float32), 1e-3, 16, False, ["Decode", "ManyRepeats", "RowRepeats"]),
        ("cols = 15: equal rows written out (no row-repeat section)", r15[[0, 1, 0, 0]].reshape(-1), 1e-3, 15, False,
         ["Decode", "EqualRowsBelow16"]),
    ]
    for m in (16, 17):
        counts = cb.skewed_counts(m)
        x = np.repeat(np.arange(m, dtype=np.float32), counts)
        x = x[np.random.default_rng(m).permutation(x.size)]
        out.append((f"{m} symbols with Fibonacci counts ({x.size} values, eb = 0.5)", x, 0.5, 1, False, ["Decode", "LengthLimit"]))
    for r in (2, 3, 4, 5, 8, 9, 16, 17, 257):
        base = np.zeros((r, 16), dtype=np.float32)
        base[:, 0] = np.arange(r, dtype=np.float32)
        base[:, 5] = -(np.arange(r, dtype=np.float32) % 3)
        x = base[list(range(r)) + [r - 1, 0, r // 2, r - 1, 1]].reshape(-1)
        out.append((f"R = {r} distinct rows of 16 and 5 repeats (index width {(r - 1).bit_length()})", x, 0.5, 16, False,
                    ["Decode", "RowRepeats", "RepeatWidth"]))
    out.append(("codes at 2^k - 1, 2^k, 2^k + 1 (zigzag up to 2^32 - 512), eb = 0.5", _f32([float(v) for v in cb.width_codes()]),
                0.5, 1, False, ["Decode", "ZigzagWidth", "EscapeEdge"]))
    ext = cb.extreme_code_eb()
    out.append((f"x = 1, -1, 0.5 at eb = {ext!r}: q = 2^31 - 1, -(2^31 - 1) (zigzag 2^32 - 2, 2^32 - 3)",
                _f32([1.0, -1.0, 0.5, -0.5]), ext, 1, False, ["Decode", "ZigzagWidth", "EscapeEdge"]))
    out.append(("codes 2047, 2048, -2048, 4095, -4096, 4096, -4097 (zigzag 4094 to 8193: the escape threshold)",
                _f32([2047, 2048, -2048, 4095, -4096, 4096, -4097, 0]), 0.5, 2, False, ["Decode", "EscapeEdge"]))
    fine, _ = cb.overflow_edge_eb()
    out.append((f"x = FLT_MAX, -FLT_MAX at eb = {fine!r}: q * 2eb just below 2^128 - 2^103", _f32([cb.FLT_MAX, -cb.FLT_MAX]),
                fine, 1, False, ["Decode", "Float32OverflowEdge"]))
    out.append(("n = 0, one column, plain", _f32([]), 1e-3, 1, False, ["Empty", "HeaderEdge"]))
    return out


def _flat_lengths(counts: list[int]) -> list[int]:
    """A complete prefix code of the used symbols with lengths as equal as possible (not Huffman's)."""
    used = [s for s, c in enumerate(counts) if c]
    out = [0] * len(counts)
    if len(used) == 1:
        out[used[0]] = 1
        return out
    d = (len(used) - 1).bit_length()
    short = 2**d - len(used)  # symbols of length d - 1, the rest d: Kraft sum exactly 1
    for k, s in enumerate(used):
        out[s] = d - 1 if k < short else d
    return out


def _with_lengths(rule: Callable[[list[int]], list[int]], make: Callable[[], bytes]) -> bytes:
    """A stream written with another code-length rule (a forgery of one part, everything else the encoder's)."""
    from ... import codec_v2 as v2

    keep = v2.huffman_lengths
    try:
        v2.huffman_lengths = rule  # type: ignore[assignment]
        return make()
    finally:
        v2.huffman_lengths = keep  # type: ignore[assignment]


def stream_input_of_good() -> np.ndarray:
    """The 5 rows of 16 (row 3 = row 1) of :func:`build_codec_v2`'s refused streams."""
    rng = np.random.default_rng(27)
    x = (0.05 * rng.normal(size=(5, 16))).astype(np.float32)
    x[3] = x[1]
    return x.reshape(-1)


def _v2_edge_vectors(f: _File, stream: Callable[[np.ndarray, float, int, bool], bytes], good: bytes) -> None:
    """The valid edges above, then refused streams, one defect each (CRC recomputed), for every item of
    docs/codec.md's refusal list ("Canonical and refused")."""
    for comment, x, eb, cols, strict, flags in _v2_edge_valid():
        f.add(comment=comment, flags=flags, spec="s9-v2", result="valid", op="codec_decode",
              input={"data": encode_bytes(stream(x, eb, cols, strict))},
              expected={"x": encode_array(_f32(_v2_expected(x.tolist(), eb, strict)))})
    bad: list[tuple[str, list[str], bytes]] = []
    lay = cb.v2_layout(good)  # 5 rows of 16, row 3 repeats row 1, strict
    u64 = lambda v: struct.pack("<Q", v)  # noqa: E731
    # header
    for flags in (2, 128, 255):
        bad.append((f"flags {flags}", ["HeaderEdge", "BadHeader"], cb.splice(good, 5, 6, bytes([flags]))))
    bad.append(("n with bit 32 set", ["HeaderWidth"], cb.splice(good, 8, 16, u64(lay.n + 2**32))))
    bad.append(("R with bit 32 set", ["HeaderWidth", "BadRowMarks"], cb.splice(good, 28, 36, u64(lay.distinct + 2**32))))
    bad.append(("R = 0 with 5 rows", ["BadRowMarks"], cb.splice(good, 28, 36, u64(0))))
    # row marks: 1 1 1 0 01 1 and one padding bit (row 3 repeats distinct row 1); index 3 is a row not yet seen
    m0 = lay.marks[0]
    assert good[m0] == 0b11100110, "the marks of the 5-row stream"
    bad.append(("a repeat of distinct row 3, only 3 seen", ["BadRowMarks"], cb.splice(good, m0, m0 + 1, bytes([0b11101110]))))
    bad.append(("non-zero row-mark padding", ["BadRowMarks"], cb.splice(good, m0, m0 + 1, bytes([good[m0] | 1]))))
    eight = stream(np.arange(128, dtype=np.float32) * np.float32(0.01), 1e-3, 16, False)
    bad.append(("8 distinct rows whose marks claim repeats past their 8 bits", ["BadRowMarks"], cb.splice(eight, 36, 37, b"\x80")))
    # code lengths
    g, at, a = lay.tables[0]
    nib = [v for byte in good[at + 2 : at + 2 + (a + 1) // 2] for v in (byte >> 4, byte & 15)][:a]

    def table(lengths: list[int]) -> bytes:
        x = lengths + [0] * (len(lengths) % 2)
        return struct.pack("<H", len(lengths)) + bytes((x[k] << 4) | x[k + 1] for k in range(0, len(x), 2))

    end = at + 2 + (a + 1) // 2
    used = [k for k, v in enumerate(nib) if v]
    x5 = stream_input_of_good()
    flat = _with_lengths(_flat_lengths, lambda: stream(x5, 1e-3, 16, True))
    assert flat != good, "the flat lengths must differ from the rule's in some class"
    bad.append(("flat code lengths (a complete prefix code of the same symbols, not the rule's)", ["BadCodeLengths", "NonCanonical"],
                flat))
    over = list(nib)
    zero = next((k for k, v in enumerate(nib) if not v), None)
    over = over + [1] if zero is None else over[:zero] + [1] + over[zero + 1 :]
    bad.append(("an unused symbol given length 1 (over-subscribed)", ["BadCodeLengths"], cb.splice(good, at, end, table(over))))
    longer = list(nib)
    longest = max(used, key=lambda k: (nib[k], k))
    longer[longest] += 1
    bad.append(("the longest code one bit longer (incomplete code)", ["BadCodeLengths"], cb.splice(good, at, end, table(longer))))
    bad.append(("a table one symbol too long (A = largest used + 2)", ["BadCodeLengths"], cb.splice(good, at, end, table(nib + [0]))))
    odd = next(((g2, at2, a2) for g2, at2, a2 in lay.tables if a2 % 2), None)
    if odd is not None:
        last = odd[1] + 2 + (odd[2] + 1) // 2 - 1
        bad.append(("a non-zero padding nibble after an odd table", ["BadCodeLengths", "BadPadding"],
                    cb.splice(good, last, last + 1, bytes([good[last] | 1]))))
    bad.append(("a table size with bit 15 set", ["HeaderWidth", "BadCodeLengths"], cb.splice(good, at, at + 2, struct.pack("<H", a + 0x8000))))
    # exceptions: 40 values near 1000 at eb = 1e-4, strict
    large = (np.float32(1000.0) + np.arange(40, dtype=np.float32) * np.float32(2.0**-13)).astype(np.float32)
    ex = stream(large, 1e-4, 1, True)
    el = cb.v2_layout(ex)
    e_at, ne = el.exceptions
    assert ne >= 2
    idx = [struct.unpack_from("<Q", ex, e_at + 8 + 8 * k)[0] for k in range(ne)]
    val_at = e_at + 8 + 8 * ne
    vals = [ex[val_at + 4 * k : val_at + 4 * k + 4] for k in range(ne)]
    swapped = b"".join(u64(v) for v in [idx[1], idx[0]] + idx[2:]) + b"".join([vals[1], vals[0]] + vals[2:])
    bad.append(("two exceptions (index and value) out of order", ["BadException"], cb.splice(ex, e_at + 8, val_at + 4 * ne, swapped)))
    bad.append(("an exception index repeated", ["BadException"], cb.splice(ex, e_at + 16, e_at + 24, u64(idx[0]))))
    bad.append(("an exception index = n", ["BadException"], cb.splice(ex, e_at + 8 + 8 * (ne - 1), val_at, u64(40))))
    bad.append(("the exception count with bit 32 set", ["BadException", "HeaderWidth"], cb.splice(ex, e_at, e_at + 8, u64(ne + 2**32))))
    bad.append(("the exception count above n", ["BadException"], cb.splice(ex, e_at, e_at + 8, u64(41))))
    k0 = idx[0]
    q0 = v1_quantize(float(large[k0]), 1e-4)
    rec = struct.unpack("<f", struct.pack("<f", q0 * 2e-4))[0]
    near = float(np.nextafter(np.float32(rec), np.float32(np.inf)))
    other = float(np.float32(rec + 3e-4))
    for what, v in (("NaN", float("nan")), ("+inf", float("inf")), ("equal to its plain reconstruction", rec),
                    ("one float32 ulp from its plain reconstruction (within eb)", near),
                    ("of another code (beyond eb, quantized to q + 1 or more)", other)):
        bad.append((f"exception value {what}", ["BadException"], cb.splice(ex, val_at, val_at + 4, struct.pack("<f", v))))
    # padding after the last code
    pad = next(s for s in (stream(_f32([0.0, 0.1, 0.2]), 1e-3, 1, False), good, ex) if cb.v2_layout(s).bits < len(s))
    bad.append(("a non-zero padding bit after the last code", ["BadPadding"], cb.splice(pad, len(pad) - 1, len(pad), bytes([pad[-1] | 1]))))
    # a code beyond 2^31 - 1: q = -2^31 (zigzag 2^32 - 1, escape of bit length 32) written by the body encoder
    from ... import codec_v2 as v2

    beyond = np.array([-(2**31), 0], dtype=np.int64)
    body = v2.encode_body(beyond, _f32([0.0, 0.0]), 0.5, 1, False)
    bad.append(("q = -2^31 (zigzag 2^32 - 1): a code beyond 2^31 - 1", ["CodeRange", "ZigzagWidth"],
                cb.restamp(MAGIC + struct.pack("<BBHQd", 2, 0, 1, 2, 0.5) + b"\0\0\0\0" + body)))
    # float32 overflow: q = 1 with eb = (2^128 - 2^103)/2 in the header
    fine, over_eb = cb.overflow_edge_eb()
    big = stream(_f32([cb.FLT_MAX]), fine, 1, False)
    bad.append(("q = 1 at eb = (2^128 - 2^103)/2: the reconstruction rounds to infinity", ["Float32OverflowEdge"],
                cb.splice(big, 16, 24, struct.pack("<d", over_eb))))
    # empty streams checked like any other
    empty = stream(_f32([]), 1e-3, 16, True)  # R = 0, 16 classes, table A = 0, E = 0
    el = cb.v2_layout(empty)
    bad += [
        ("n = 0 with cols = 0", ["EmptyChecked", "HeaderEdge"], cb.splice(empty, 6, 8, struct.pack("<H", 0))),
        ("n = 0 with a column class of 1 (and its empty table)", ["EmptyChecked", "NonCanonical"],
         cb.splice(empty, el.classes[1] - 1, el.tables[0][1] + 2, b"\x01" + struct.pack("<H", 0) * 2)),
        ("n = 0 with a table of one symbol", ["EmptyChecked", "BadCodeLengths"],
         cb.splice(empty, el.tables[0][1], el.tables[0][1] + 2, struct.pack("<H", 1) + b"\x10")),
        ("n = 0 with R = 1", ["EmptyChecked", "BadRowMarks"], cb.splice(empty, 28, 36, u64(1))),
        ("n = 0 with one trailing byte", ["EmptyChecked", "TrailingBytes"], cb.restamp(empty + b"\x00")),
        ("n = 0 with the CRC-32 off by one", ["EmptyChecked", "CrcMismatch"],
         empty[:24] + struct.pack("<I", (zlib_crc(empty[:24] + empty[28:]) + 1) % 2**32) + empty[28:]),
    ]
    for comment, flags, data in bad:
        f.add(comment=comment, flags=flags, spec="s9-v2", result="invalid", op="codec_decode", input={"data": encode_bytes(data)})


# ------------------------------------------------------------------------------------------------
# session-v1: the save format of SPEC §6.3
# ------------------------------------------------------------------------------------------------
SESSION_NOTES = {
    "Restore": ("Functionality", "a restored session decides exactly as one that never stopped (SPEC §6.3)."),
    "Unused": ("EdgeCase", "a save of an unused session (no dimension, no rows)."),
    "ChecksumMismatch": ("InvalidFile", "an array whose SHA-256 differs from the header's: refused."),
    "WrongFormat": ("InvalidFile", "another format name or version: refused."),
    "Inconsistent": ("InvalidFile", "map, distances, retained ids and rows disagree: refused (SPEC §6.3)."),
    "NotAZip": ("InvalidFile", "bytes that are not a session file, or a truncated one: refused."),
    "NonFinite": ("InvalidFile", "non-finite distances: refused."),
    "NextId": ("Functionality", "a restored session numbers new arrivals from the number admitted before the save, not from |R| (SPEC §6.3)."),
}
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def session_file(settings: dict[str, Any], arrays: dict[str, np.ndarray], *, next_id: int, turns: int,
                 fmt: str = "lam_ref.online_session", version: int = 1,
                 tamper: Callable[[dict[str, bytes]], None] | None = None) -> bytes:
    """A session save assembled field by field (SPEC §6.3): a stored zip of ``header.json`` and
    one ``.npy`` per array, entries with a fixed timestamp."""
    blobs = {k: _npy(v) for k, v in arrays.items()}
    header = {"format": fmt, "version": version, "settings": settings, "next_id": next_id, "turns": turns,
              "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()}}
    if tamper is not None:
        tamper(blobs)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("header.json", _ZIP_TIME), json.dumps(header, sort_keys=True))
        for k, v in blobs.items():
            zf.writestr(zipfile.ZipInfo(k + ".npy", _ZIP_TIME), v)
    return buf.getvalue()


def build_session_v1() -> _File:
    f = _File("session-v1", "Online session save files, format lam_ref.online_session version 1 (SPEC §6.3)", SESSION_NOTES)
    t = 0.9
    e = _clusters(30, 12, 4, t, 1.2)
    saved, later = e[:8], e[8:]
    res = oracle(saved, t)
    full = oracle(e, t).pi
    kept = np.flatnonzero(res.pi == np.arange(8))
    settings = {"t": t, "r": 4, "rel": 0.2, "exhaustive": True, "normalize": False, "dim": 4}
    arrays = {"retained_embeddings": saved[kept], "retained_ids": kept.astype(np.int64), "pi": res.pi,
              "distances": res.distances, "turn_lengths": np.array([5, 3], np.int64)}

    def add(comment: str, flags: list[str], data: bytes, valid: bool, turns: list[np.ndarray] | None = None,
            pis: list[np.ndarray] | None = None) -> None:
        inp: dict[str, Any] = {"data": encode_bytes(data), "t": t}
        if valid:
            inp["turns"] = [encode_array(x) for x in turns or []]
            f.add(comment=comment, flags=flags, spec="s6-save", result="valid", op="session_load", input=inp,
                  expected={"turns": [{"pi": encode_ints(p)} for p in pis or []]})
        else:
            f.add(comment=comment, flags=flags, spec="s6-save", result="invalid", op="session_load", input=inp)

    good = session_file(settings, arrays, next_id=8, turns=2)
    add("8 rows saved after 2 turns; 4 more rows admitted after loading", ["Restore"], good, True,
        [later[:1], later[1:]], [full[8:9], full[9:]])
    # a row far from every saved one is retained after loading: its id is 8, the arrivals counted
    far = next(c for c in (-saved[0], -saved[1], -saved[2], -saved[3])
               if oracle(np.concatenate([saved, c[None, :]]), t).pi[8] == 8)
    assert kept.size < 8, "the saved rows must include merged ones, so that 8 != |R|"
    add("8 rows saved (fewer retained); a far row admitted after loading is retained as id 8", ["Restore", "NextId"],
        good, True, [far[None, :]], [oracle(np.concatenate([saved, far[None, :]]), t).pi[8:]])
    empty_settings = dict(settings, dim=None)
    unused = {"retained_embeddings": np.zeros((0, 0), np.float32), "retained_ids": np.zeros(0, np.int64),
              "pi": np.zeros(0, np.int64), "distances": np.zeros(0, np.float64), "turn_lengths": np.zeros(0, np.int64)}
    add("an unused session; 12 rows admitted after loading", ["Unused", "Restore"],
        session_file(empty_settings, unused, next_id=0, turns=0), True, [e], [full])

    def flip(name: str) -> Callable[[dict[str, bytes]], None]:
        def tamper(blobs: dict[str, bytes]) -> None:
            b = bytearray(blobs[name])
            b[-1] ^= 0x01
            blobs[name] = bytes(b)
        return tamper

    add("a flipped bit in retained_embeddings", ["ChecksumMismatch"], session_file(settings, arrays, next_id=8, turns=2, tamper=flip("retained_embeddings")), False)
    add("a flipped bit in pi", ["ChecksumMismatch"], session_file(settings, arrays, next_id=8, turns=2, tamper=flip("pi")), False)
    add("format name lam_ref.other", ["WrongFormat"], session_file(settings, arrays, next_id=8, turns=2, fmt="lam_ref.other"), False)
    add("format version 2", ["WrongFormat"], session_file(settings, arrays, next_id=8, turns=2, version=2), False)
    wrong_ids = dict(arrays, retained_ids=np.roll(kept, 1).astype(np.int64))
    add("retained ids that are not the map's fixed points", ["Inconsistent"], session_file(settings, wrong_ids, next_id=8, turns=2), False)
    add("next_id 9 for 8 arrivals", ["Inconsistent"], session_file(settings, arrays, next_id=9, turns=2), False)
    add("rows of width 4 in a save of dimension 5", ["Inconsistent"], session_file(dict(settings, dim=5), arrays, next_id=8, turns=2), False)
    add("a dimension-less save holding rows", ["Inconsistent"], session_file(empty_settings, arrays, next_id=8, turns=2), False)
    bad_pi = dict(arrays, pi=np.where(np.arange(8) == 7, 8, res.pi).astype(np.int64))
    add("π[7] = 8 (a representative after the row)", ["Inconsistent"], session_file(settings, bad_pi, next_id=8, turns=2), False)
    nan_d = dict(arrays, distances=np.where(res.pi != np.arange(8), np.nan, 0.0))
    add("NaN distances", ["NonFinite"], session_file(settings, nan_d, next_id=8, turns=2), False)
    add("the file cut in half", ["NotAZip"], good[: len(good) // 2], False)
    add("JSON text instead of a zip", ["NotAZip"], b'{"format": "lam_ref.online_session"}', False)
    add("zero bytes", ["NotAZip"], b"", False)
    return f


# ------------------------------------------------------------------------------------------------
BUILDERS: dict[str, Callable[[], _File]] = {
    "core": build_core,
    "online": build_online,
    "l0": lambda: build_l0(False),
    "l0-stubs": lambda: build_l0(True),
    "codec-bound": build_codec_bound,
    "codec-v1": build_codec_v1,
    "codec-v2": build_codec_v2,
    "session-v1": build_session_v1,
}


def generate(profile: str) -> str:
    """The text of one profile's vector file."""
    return dumps(BUILDERS[profile]().document())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lam_ref.conformance.vectors.generate", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE), help="folder to write <profile>.json into (default: the package)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed file differs")
    ap.add_argument("profiles", nargs="*", help="profiles to generate (default: all)")
    args = ap.parse_args(argv)
    unknown = [p for p in args.profiles if p not in BUILDERS]
    if unknown:
        print(f"generate: error: unknown profile {unknown[0]!r} (known: {', '.join(BUILDERS)})", file=sys.stderr)
        return 2
    out = Path(args.out)
    if not out.is_dir():
        print(f"generate: error: --out {str(out)!r} is not a folder", file=sys.stderr)
        return 2
    differ = []
    for profile in args.profiles or list(BUILDERS):
        text = generate(profile)
        path = out / f"{profile}.json"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                differ.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(text.encode())} bytes)")
    if differ:
        print(f"generate --check: {', '.join(differ)} differ from a fresh generation", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

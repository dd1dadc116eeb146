"""LRE, Learned Relevance Eviction (seed 003, §3.1–3.4, App. B.3, C.1, D.2, E.1, Table 5; SPEC §16),
as a compactor of a whole recorded trajectory.

* **Units** (Domain A): one per agent step (its thought, action and observation records;
  :func:`~lam_ref.peers.base.step_units`). **Pinned**, never evicted and outside the budget:
  the system/task prefix, records outside any step, and the last ``k = 5`` units.
* **Scorer**: ten causal features per unit (:data:`FEATURES`, each computed from ``u_{<=i}``
  only), standardised, and an L2-regularised logistic regression giving the keep-probability
  ``p_i``. The shipped weights (``lre_weights.json``, a few KB) were trained with
  ``python -m lam_ref.peers.lre_train`` on a split of the shared SWE-agent trajectories (the
  held-out evaluation is stored in the file and printed by the command).
* **Retention** (Algorithm 3, Table 1): the other units are taken greedily by ``p_i / c_i``
  (``c_i`` = cl100k tokens of the unit; ties: the later unit first) while they fit the budget
  ``B`` tokens; a unit that does not fit is skipped and the next is tried. A zero-cost unit is
  always kept. Output: the kept units **verbatim and in chronological order**.
* **Labels** (§3.4, App. D.2; annotation-free): a unit is positive iff an identifier it
  introduces (first occurrence in the trajectory, prefix included) occurs in at least ``b = 3``
  later units.
* **Metrics** (App. E.1): AUC with ties counting ½ (:func:`auc`; equal to the Mann–Whitney ``U``
  over ``P·N``), Recall@b (:func:`recall_at_budget`), Budget@recall (:func:`budget_at_recall`).

Ours where the paper is silent: the feature formulas (Table 5 names them; the position feature
is ``log(1 + i)`` because a relative position would need the future length, and the tenth
feature, ``f_new_ids``, counts identifiers the unit introduces), the identifier pattern
(:data:`IDENTIFIER`), the tie-breaks, and ``C = 1`` for the regression. LRE evicts units that
were already sent, so it is not prefix-stable.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from typing import Any

import numpy as np

from .._io import InputError, read_json_input
from ..geometry import LamValueError
from ..text.chunking import Tokenizer
from ..text.records import Trajectory
from .base import PeerResult, Unit, build_result, step_units

__all__ = [
    "FEATURES",
    "IDENTIFIER",
    "LreModel",
    "auc",
    "budget_at_recall",
    "budget_greedy",
    "features",
    "identifiers",
    "labels",
    "load_model",
    "lre",
    "recall_at_budget",
    "validate_budget",
]

FEATURES = ("f_pos", "f_loglen", "f_num_digit", "f_caps_words", "f_has_error", "f_is_code", "f_rare_density",
            "f_sim_prev", "f_url_or_id", "f_new_ids")
#: Identifiers: names with ``_``, a digit or an inner capital (snake_case, camelCase, v2), dotted
#: or slashed paths, and hex strings of 8+ digits (ours; the paper does not give its pattern).
IDENTIFIER = re.compile(
    r"(?:[A-Za-z_][\w-]*/)+[\w.-]+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\b[0-9a-f]{8,}\b"
    r"|\b[A-Za-z]*(?:_|[0-9]|[a-z][A-Z])\w*\b")
_WORD = re.compile(r"\w+")
_CAPS = re.compile(r"\b[A-Z][a-z]+\b")
_ERROR = re.compile(r"Traceback|Error\b|Exception\b|\berror\b|\bfailed\b", re.IGNORECASE)
_CODE = re.compile(r"\bdef \w+\(|\bclass \w+|\bimport \w+|\breturn\b|[{};]\s*$|==|\w+\(\)", re.MULTILINE)
_URL_ID = re.compile(r"https?://|\b[0-9a-f]{8,}\b|\d{4,}|@\w+")
WEIGHTS = "lre_weights.json"
DEFAULT_KEEP_LAST = 5
DEFAULT_REUSE = 3


def validate_budget(budget: Any, name: str = "budget") -> int:
    """``B`` as an int ``>= 0`` (tokens); otherwise an error naming it."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise LamValueError(f"{name} must be an integer >= 0 (tokens), got {budget!r}")
    return int(budget)


# ----------------------------------------------------------------------------------------------
# features and labels


def unit_text(traj: Trajectory, u: Unit) -> str:
    return "\n".join(traj.records[i].text for i in u.records)


def identifiers(text: str) -> set[str]:
    """The identifiers of a text (:data:`IDENTIFIER`)."""
    return set(IDENTIFIER.findall(text))


def labels(texts: Sequence[str], prefix_text: str = "", reuse: int = DEFAULT_REUSE) -> np.ndarray:
    """Annotation-free labels (§3.4, App. D.2): unit ``i`` is positive iff an identifier that first
    appears in it (not in ``prefix_text`` nor an earlier unit) occurs in ``>= reuse`` later units."""
    ids = [identifiers(t) for t in texts]
    units_with: dict[str, list[int]] = {}
    for i, own in enumerate(ids):
        for x in own:
            units_with.setdefault(x, []).append(i)
    seen = identifiers(prefix_text)
    out = np.zeros(len(texts), dtype=np.int64)
    for i, own in enumerate(ids):
        # an identifier new in unit i first occurs there, so every other unit holding it is later
        out[i] = int(any(len(units_with[x]) - 1 >= reuse for x in own - seen))
        seen |= own
    return out


def features(texts: Sequence[str], token_counts: Sequence[int], prefix_text: str = "") -> np.ndarray:
    """The ten causal features of each unit (:data:`FEATURES`), shape ``(n, 10)`` float64."""
    n = len(texts)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    df: dict[str, int] = {}
    docs = 0
    seen_ids = identifiers(prefix_text)
    prev: set[str] = set()
    for i, t in enumerate(texts):
        words = set(w.lower() for w in _WORD.findall(t))
        docs += 1
        for w in words:
            df[w] = df.get(w, 0) + 1
        rare = float(np.mean([math.log(docs / df[w]) for w in words])) if words else 0.0
        union = words | prev
        sim = len(words & prev) / len(union) if union else 0.0
        own = identifiers(t)
        out[i] = (
            math.log1p(i),
            math.log1p(int(token_counts[i])),
            math.log1p(sum(ch.isdigit() for ch in t)),
            math.log1p(len(_CAPS.findall(t))),
            float(bool(_ERROR.search(t))),
            float(bool(_CODE.search(t))),
            rare,
            sim,
            float(bool(_URL_ID.search(t))),
            math.log1p(len(own - seen_ids)),
        )
        seen_ids |= own
        prev = words
    return out


# ----------------------------------------------------------------------------------------------
# the scorer


@dataclass(frozen=True)
class LreModel:
    """A standardised logistic regression over :data:`FEATURES` (the shipped weights file)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    info: dict[str, Any]

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Keep-probabilities ``p_i`` of feature rows ``x``."""
        z = ((np.asarray(x, dtype=np.float64) - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def to_json(self) -> dict[str, Any]:
        return {"format": "lam_ref.lre_weights", "version": 1, "features": list(FEATURES),
                "mean": self.mean.tolist(), "scale": self.scale.tolist(), "coef": self.coef.tolist(),
                "intercept": float(self.intercept), "info": self.info}

    @classmethod
    def from_json(cls, obj: Any, source: str = "<json>") -> LreModel:
        try:
            if obj["format"] != "lam_ref.lre_weights" or list(obj["features"]) != list(FEATURES):
                raise LamValueError(f"{source}: not LRE weights for features {FEATURES}")
            arrs = [np.asarray(obj[k], dtype=np.float64) for k in ("mean", "scale", "coef")]
            if any(a.shape != (len(FEATURES),) or not np.all(np.isfinite(a)) for a in arrs) or np.any(arrs[1] <= 0):
                raise LamValueError(f"{source}: mean, scale, coef must be {len(FEATURES)} finite numbers (scale > 0)")
            return cls(arrs[0], arrs[1], arrs[2], float(obj["intercept"]), dict(obj.get("info", {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise LamValueError(f"{source}: unreadable LRE weights: {type(exc).__name__}: {exc}") from exc


def load_model(path: str | None = None) -> LreModel:
    """The shipped weights (``lam_ref/peers/lre_weights.json``) or those at ``path``."""
    if path is None:
        text = resources.files("lam_ref.peers").joinpath(WEIGHTS).read_text(encoding="utf-8")
        return LreModel.from_json(json.loads(text), WEIGHTS)
    try:
        doc = read_json_input(path)
    except InputError as exc:
        raise LamValueError(f"LRE weights {path!r} cannot be read: {exc.problem}") from exc
    return LreModel.from_json(doc, path)


# ----------------------------------------------------------------------------------------------
# retention


def budget_greedy(p: Sequence[Any], c: Sequence[Any], budget: Any, pinned: Sequence[int] = ()) -> list[int]:
    """Indices kept: ``pinned`` plus the others greedily by ``p_i / c_i`` within ``budget``
    (SPEC §16). Exact with :class:`fractions.Fraction` inputs. Ties: the larger index first;
    ``c_i = 0`` ranks first. Returns sorted indices (chronological order)."""
    n = len(p)
    if len(c) != n:
        raise LamValueError(f"p and c differ in length: {n} vs {len(c)}")
    if budget < 0:
        raise LamValueError(f"budget must be >= 0, got {budget!r}")
    pin = set(int(i) for i in pinned)
    free = [i for i in range(n) if i not in pin]
    zero = [i for i in free if c[i] == 0]
    pos = [i for i in free if c[i] != 0]
    if any(c[i] < 0 for i in pos):
        raise LamValueError("costs c must be >= 0")
    pos.sort(key=lambda i: (Fraction(p[i]) / Fraction(c[i]) if isinstance(p[i], Fraction) else p[i] / c[i], i),
             reverse=True)
    kept = set(pin) | set(zero)
    left = budget
    for i in pos:
        if c[i] <= left:
            kept.add(i)
            left -= c[i]
    return sorted(kept)


def lre(traj: Trajectory, budget: int, tokenizer: Tokenizer, *, model: LreModel | None = None,
        keep_last: int = DEFAULT_KEEP_LAST) -> PeerResult:
    """LRE on one trajectory at budget ``B`` tokens (module docstring).

    Returns:
        The :class:`~lam_ref.peers.base.PeerResult`; units are steps; ``extra`` holds ``p`` and
        the pinned units.

    Raises:
        LamValueError: ``budget`` not an integer ``>= 0``.
    """
    budget = validate_budget(budget)
    model = model or load_model()
    t0 = time.perf_counter()
    prefix, units, _ = step_units(traj)
    texts = [unit_text(traj, u) for u in units]
    costs = tokenizer.count_many(texts) if texts else []
    prefix_text = "\n".join(traj.records[i].text for i in prefix)
    p = model.predict(features(texts, costs, prefix_text)) if texts else np.zeros(0)
    pinned = list(range(max(0, len(units) - keep_last), len(units)))
    kept = set(budget_greedy([float(v) for v in p], costs, budget, pinned))
    deleted = [u.id for u in units if u.id not in kept]
    removed = [i for j in deleted for i in units[j].records]
    return build_result("lre", {"budget": budget}, traj, tokenizer, removed=removed, unit="step",
                        kept_units=sorted(kept), deleted_units=deleted, prefix_stable=False,
                        wall_s=time.perf_counter() - t0,
                        extra={"pinned": pinned, "p": [float(v) for v in p]})


# ----------------------------------------------------------------------------------------------
# metrics (App. E.1)


def _scores_labels(scores: Sequence[float], y: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(y)
    if s.shape != t.shape or s.ndim != 1:
        raise LamValueError(f"scores and labels must be 1-D of equal length, got {s.shape} and {t.shape}")
    if not np.all(np.isfinite(s)):
        raise LamValueError("scores must be finite")
    if not np.all((t == 0) | (t == 1)):
        raise LamValueError("labels must be 0 or 1")
    return s, t.astype(bool)


def auc(scores: Sequence[float], y: Sequence[int]) -> float | None:
    """ROC-AUC with ties counting ½ (App. E.1); ``None`` without both classes."""
    s, t = _scores_labels(scores, y)
    pos, neg = s[t], s[~t]
    if not pos.size or not neg.size:
        return None
    gt = (pos[:, None] > neg[None, :]).sum()
    eq = (pos[:, None] == neg[None, :]).sum()
    return float((gt + 0.5 * eq) / (pos.size * neg.size))


def _ranking(s: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(s.size), -s))  # highest score first, ties by index


def recall_at_budget(scores: Sequence[float], y: Sequence[int], b: float) -> float | None:
    """Recall@b: share of positives among the ``ceil(b·n)`` highest-scoring units (App. E.1)."""
    s, t = _scores_labels(scores, y)
    if not 0.0 <= b <= 1.0:
        raise LamValueError(f"b must be in [0, 1], got {b!r}")
    if not t.any():
        return None
    k = math.ceil(b * s.size)
    return float(t[_ranking(s)[:k]].sum() / t.sum())


def budget_at_recall(scores: Sequence[float], y: Sequence[int], target: float) -> float | None:
    """Budget@recall: the smallest fraction ``K/n`` whose top-``K`` holds ``>= target`` of the positives."""
    s, t = _scores_labels(scores, y)
    if not 0.0 < target <= 1.0:
        raise LamValueError(f"target must be in (0, 1], got {target!r}")
    if not t.any():
        return None
    need = math.ceil(target * t.sum() - 1e-12)
    hits = np.cumsum(t[_ranking(s)])
    k = int(np.argmax(hits >= need)) + 1
    return k / s.size

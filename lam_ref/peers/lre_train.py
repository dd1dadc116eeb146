"""Train LRE's scorer (seed 003 §3.2, App. B.3, D.2) and write its weights file.

Usage::

    python -m lam_ref.peers.lre_train PATH... [--out lam_ref/peers/lre_weights.json] [--held-out-mod 5]

Every step of every trajectory under ``PATH...`` becomes one example (its ten causal features,
:data:`lam_ref.peers.lre.FEATURES`, and its annotation-free label). Trajectories are split **by
task** so that reruns of one task never sit on both sides: the task is the last component of the
trajectory id, and a task is held out iff ``XXH3-64(task) mod held_out_mod == 0``. The scorer is
scikit-learn's L2 logistic regression (``C = 1``, lbfgs) on features standardised with the
training mean and standard deviation. The file stores the weights, the split, the label rate and
the held-out AUC (ties ½), Recall@b (``b`` = 0.2, 0.4) and Budget@recall (0.8), pooled over
held-out steps; the command prints the same figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import xxhash

from .._io import atomic_write_text
from ..geometry import LamValueError
from ..text.chunking import get_tokenizer
from ..text.loaders import LoadFailure, iter_trajectories
from ..text.records import Trajectory
from . import lre as L
from .base import step_units

__all__ = ["examples", "main", "task_of", "train"]


def task_of(traj: Trajectory) -> str:
    """The task a trajectory solves: the last component of its id."""
    return traj.id.rsplit("/", 1)[-1]


def examples(traj: Trajectory, tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of every step of one trajectory."""
    prefix, units, _ = step_units(traj)
    texts = [L.unit_text(traj, u) for u in units]
    prefix_text = "\n".join(traj.records[i].text for i in prefix)
    if not texts:
        return np.zeros((0, len(L.FEATURES))), np.zeros(0, np.int64)
    return L.features(texts, tokenizer.count_many(texts), prefix_text), L.labels(texts, prefix_text)


def _metrics(p: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    return {"steps": int(y.size), "positives": int(y.sum()), "auc": L.auc(p, y),
            "recall_at_0.2": L.recall_at_budget(p, y, 0.2), "recall_at_0.4": L.recall_at_budget(p, y, 0.4),
            "budget_at_recall_0.8": L.budget_at_recall(p, y, 0.8)}


def train(trajs: Sequence[Trajectory], held_out_mod: int = 5, c: float = 1.0) -> L.LreModel:
    """Fit the scorer on the training split of ``trajs`` (module docstring)."""
    from sklearn.linear_model import LogisticRegression

    if held_out_mod < 2:
        raise LamValueError(f"held_out_mod must be >= 2, got {held_out_mod!r}")
    tok = get_tokenizer()
    parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"train": [], "held_out": []}
    split: dict[str, list[str]] = {"train": [], "held_out": []}
    for t in trajs:
        side = "held_out" if xxhash.xxh3_64_intdigest(task_of(t).encode()) % held_out_mod == 0 else "train"
        parts[side].append(examples(t, tok))
        split[side].append(t.id)
    if not parts["train"]:
        raise LamValueError("no training trajectories (every task fell in the held-out split)")
    xs, ys = (np.concatenate([p[k] for p in parts["train"]]) for k in (0, 1))
    if len(set(ys.tolist())) < 2:
        raise LamValueError("the training split has one label class only")
    mean, scale = xs.mean(axis=0), xs.std(axis=0)
    scale[scale == 0] = 1.0
    clf = LogisticRegression(C=c, max_iter=1000).fit((xs - mean) / scale, ys)
    model = L.LreModel(mean, scale, clf.coef_[0].astype(np.float64), float(clf.intercept_[0]), {})
    info: dict[str, Any] = {"trainer": f"sklearn LogisticRegression(C={c:g}, lbfgs)",
                            "held_out_rule": f"XXH3-64(task) mod {held_out_mod} == 0",
                            "label": f"an identifier the step introduces is reused in >= {L.DEFAULT_REUSE} later steps",
                            "split": split, "train": _metrics(model.predict(xs), ys)}
    if parts["held_out"]:
        xh, yh = (np.concatenate([p[k] for p in parts["held_out"]]) for k in (0, 1))
        info["held_out"] = _metrics(model.predict(xh), yh)
    return L.LreModel(mean, scale, model.coef, model.intercept, info)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lam_ref.peers.lre_train", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH")
    ap.add_argument("--out", default="lam_ref/peers/lre_weights.json")
    ap.add_argument("--held-out-mod", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        trajs = []
        for item in iter_trajectories(args.paths):
            if isinstance(item, LoadFailure):
                print(f"lre_train: failed: {item.error}", file=sys.stderr)
                return 1
            trajs.append(item)
        model = train(trajs, args.held_out_mod)
    except LamValueError as exc:
        print(f"lre_train: {exc}", file=sys.stderr)
        return 2
    import json

    atomic_write_text(args.out, json.dumps(model.to_json(), indent=1) + "\n")
    for side in ("train", "held_out"):
        m = model.info.get(side)
        if m:
            print(f"{side}: {len(model.info['split'][side])} trajectories, {m['steps']} steps, "
                  f"{m['positives']} positive; AUC {m['auc']}, Recall@0.2 {m['recall_at_0.2']}, "
                  f"Recall@0.4 {m['recall_at_0.4']}, Budget@recall0.8 {m['budget_at_recall_0.8']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Peers of LAM on the same footing (paper §3.1–3.2, App. D, F.3–F.8; SPEC §16).

One module per method, all behind the interface of :mod:`lam_ref.peers.base` (residual
trajectory, kept and deleted units, placeholders, prefix-stability, operating point, and a
removal record from which the input comes back exactly):

* :mod:`~lam_ref.peers.lam` — LAM's own layers: L1 → L0 (``lam``), L1 alone (``l1``), L0 alone (``l0``);
* :mod:`~lam_ref.peers.masking` — observation masking (keep the last ``k``);
* :mod:`~lam_ref.peers.semdedup` — SemDeDup (spherical k-means, per-cluster ``1 - eps`` rule);
* :mod:`~lam_ref.peers.gem` — GEM (protected set, residual-greedy completion, length guard);
* :mod:`~lam_ref.peers.lre` — LRE (causal features, logistic regression, budget-greedy).

``lam-ref compare`` runs them side by side (:func:`lam_ref.peers.compare.compare_methods`).
"""

from __future__ import annotations

from .base import PeerResult, RemovalRecord, restore_trajectory, step_units

__all__ = ["METHODS", "PeerResult", "RemovalRecord", "restore_trajectory", "step_units"]

#: Every method name ``lam-ref compare --methods`` accepts, with its operating-point parameter
#: (``None``: the method has none).
METHODS: dict[str, str | None] = {
    "lam": "t",
    "l1": "t",
    "l0": None,
    "masking": "k",
    "semdedup": "eps",
    "gem": "tau",
    "lre": "budget",
}

"""Observation masking (Lindenbauer et al., 2025; paper §3.1, Tables 2, 14, 17; SPEC §16).

Keep the last ``k`` observations verbatim; every older observation becomes a one-line placeholder
with its line count; the **first observation is never masked** (it usually holds the task's
starting state). Operating point: ``k >= 0`` (``k = 0`` masks every observation but the first).

The placeholder is :data:`PLACEHOLDER` formatted with the line count (lines = ``text.count("\\n")
+ 1``; an empty observation is left as it is: there is nothing to mask). It is not a LAM stub
(LAM's stubs name a representative; this one names nothing). Masking rewrites observations that
were already sent whenever a new one arrives, so it is not prefix-stable (§3.2).
"""

from __future__ import annotations

import time
from typing import Any

from ..geometry import LamValueError
from ..text.chunking import Tokenizer
from ..text.records import Trajectory
from .base import PeerResult, build_result

__all__ = ["PLACEHOLDER", "mask", "validate_k"]

#: The one-line placeholder of a masked observation (``{lines}``: its line count).
PLACEHOLDER = "[masked observation: {lines} lines]"


def validate_k(k: Any, name: str = "k") -> int:
    """``k`` as an int ``>= 0``; otherwise :class:`~lam_ref.geometry.LamValueError` naming it."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise LamValueError(f"{name} must be an integer >= 0 (observations kept), got {k!r}")
    return int(k)


def mask(traj: Trajectory, k: int, tokenizer: Tokenizer) -> PeerResult:
    """Mask all observations but the first and the last ``k`` (SPEC §16).

    Args:
        traj: the loaded trajectory.
        k: observations kept at the end (``>= 0``).
        tokenizer: counts removal (cl100k, SPEC §3).

    Returns:
        The :class:`~lam_ref.peers.base.PeerResult`; units are observation records (their indices
        in ``traj.records``).

    Raises:
        LamValueError: ``k`` is not an integer ``>= 0``.
    """
    k = validate_k(k)
    t0 = time.perf_counter()
    obs = traj.observation_indices
    keep = set(obs[:1]) | set(obs[len(obs) - k:] if k else [])
    edits = {}
    masked = []
    for i in obs:
        text = traj.records[i].text
        if i in keep or not text:
            continue
        ph = PLACEHOLDER.format(lines=text.count("\n") + 1)
        edits[i] = (ph, [(0, len(ph.encode("ascii")), text.encode("utf-8", errors="surrogatepass"))])
        masked.append(i)
    kept = [i for i in obs if i not in edits]
    return build_result("masking", {"k": k}, traj, tokenizer, edits=edits, unit="observation",
                        kept_units=kept, deleted_units=masked, placeholders=len(masked), prefix_stable=False,
                        gross_text=lambda i, t: "", wall_s=time.perf_counter() - t0)

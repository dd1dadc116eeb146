"""LAM's own layers behind the peer interface: L1 → L0 (``lam``), L1 alone (``l1``), L0 alone
(``l0``) (paper §2.2, Tables 12, 14, 17; SPEC §5–8).

A thin adapter over :func:`lam_ref.text.pipeline.compact_trajectory`: the residual and the audit
store are the pipeline's, so the removal record is LAM's own audit. Units: ``lam`` and ``l1``
decide on chunks (the representative map ``π``, SPEC §1: deleted = ``π[i] != i``); ``l0`` on lines,
identified as ``(record, line number in the original record)``. All three decide on each arrival
before prefill and never revise, so they are prefix-stable (§3.2, App. E.2). Operating point:
``t`` (cosine threshold) for ``lam`` and ``l1``; ``l0`` has none.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ..geometry import LamValueError
from ..text.encoders import Encoder
from ..text.pipeline import CompactionConfig, CompactionResult, Encoded, compact_trajectory
from ..text.records import Trajectory
from ..text.reuse import EncodingCache
from .base import PeerResult, RemovalRecord

__all__ = ["LAYERS_OF", "l0_deleted_lines", "run_lam"]

#: Layer order of each LAM method name.
LAYERS_OF = {"lam": ("l1", "l0"), "l1": ("l1",), "l0": ("l0",)}


def l0_deleted_lines(res: CompactionResult) -> list[tuple[int, int]]:
    """``(record, line)`` of every line L0 removed (from its audit patches: each patch's original
    bytes are whole lines joined by ``\\n``, starting at a line start)."""
    out: list[tuple[int, int]] = []
    for rec, layers in sorted(res.audit.edits.items()):
        if [lp.layer for lp in layers] != ["L0"]:
            raise LamValueError(f"record {rec}: line ids need an L0-only run, got layers {[lp.layer for lp in layers]}")
        original = res.trajectory.records[rec].text.encode("utf-8", errors="surrogatepass")
        shift = 0
        for start, end, orig in layers[0].patches:
            first = original[: start + shift].count(b"\n")
            out.extend((rec, first + j) for j in range(orig.count(b"\n") + 1))
            shift += len(orig) - (end - start)
    return out


def run_lam(
    method: str,
    traj: Trajectory,
    encoder: Encoder | None,
    *,
    threshold: float = 0.95,
    cache: dict[str, Encoded] | None = None,
    batch_size: int = 64,
    config: CompactionConfig | None = None,
    reuse: EncodingCache | None = None,
) -> PeerResult:
    """Run ``method`` (``"lam"``, ``"l1"`` or ``"l0"``) on one trajectory.

    Args:
        cache: the pipeline's encoding cache (key ``"orig"``), shared with other thresholds and
            with SemDeDup so that each chunk is encoded once.
        config: the layer settings (``lam-ref compare`` passes the one ``lam-ref compact`` would
            build from the same options; issue 23 §2); its threshold and layers are replaced by
            ``threshold`` and the method's. ``None``: the library defaults with ``batch_size``.
        reuse: the run's window embeddings by text digest (SPEC §4.4).

    Raises:
        LamValueError: unknown method or invalid threshold (from :class:`CompactionConfig`).
    """
    if method not in LAYERS_OF:
        raise LamValueError(f"method must be one of {sorted(LAYERS_OF)}, got {method!r}")
    layers = LAYERS_OF[method]
    base = config if config is not None else CompactionConfig(batch_size=batch_size)
    cfg = dataclasses.replace(base, threshold=threshold, layers=layers, per_layer=False, both_orders=False)
    t0 = time.perf_counter()
    res = compact_trajectory(traj, encoder if "l1" in layers else None, cfg, cache=cache, reuse=reuse)
    wall = time.perf_counter() - t0
    op: dict[str, Any] = {"t": threshold} if "l1" in layers else {}
    if method == "l0":
        unit = "line"
        deleted: list[Any] = l0_deleted_lines(res)
        kept: list[Any] = []  # lines are not enumerated; their count is the original line count minus the deleted
    else:
        unit = "chunk"
        deleted = res.deleted_ids.tolist()
        kept = [i for i in range(res.chunks) if int(res.pi[i]) == i]
    return PeerResult(
        method=method,
        operating_point=op,
        trajectory=traj,
        residual_texts=list(res.residual_texts),
        removal=RemovalRecord(res.audit, ()),
        unit=unit,
        kept_units=tuple(kept),
        deleted_units=tuple(deleted),
        placeholders=res.l1_stubs + res.l0_stubs,
        prefix_stable=True,
        tokens_original=res.tokens_original,
        tokens_residual_net=res.tokens_residual_net,
        tokens_residual_gross=res.tokens_residual_gross,
        wall_s=wall,
        extra={"delta_hat": res.delta_hat, "l0_dropped_lines": res.l0_dropped_lines,
               "deletion_digest": res.deletion_digest},
    )

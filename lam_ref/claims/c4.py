r"""C4: Connected components are not a δ-substitution (paper App. C.4, Figure 5).

Measured on a set (informational: never fails): whether one representative per connected
component of the δ-graph happens to be a δ-substitution here.
"""

from __future__ import annotations

from typing import Any

from ..covering import connected_components_map
from ..theory import measure_substitution
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "MAX_ROWS"]

#: Largest set on which the components are computed (the δ-graph is built in full).
MAX_ROWS = 5000


def measure(ctx) -> Measurement | None:
    """The component map's ``|R|`` and ``δ̂`` against greedy's (none above :data:`MAX_ROWS`)."""
    if ctx.n > MAX_ROWS:
        return None
    dchk = measure_substitution(ctx.e, connected_components_map(ctx.e, ctx.t), ctx.t)
    values = {"dsu_kept": dchk.kept, "dsu_delta_hat": dchk.delta_hat, "dsu_is_substitution": dchk.valid,
              "greedy_kept": ctx.greedy.kept_count}
    note = "DSU exceeds delta here (counterexample present)" if not dchk.valid else "DSU happens to be valid on this set"
    return Measurement(values, note)


def holds(m: dict[str, Any]) -> None:
    """Informational: a counterexample may or may not be present in the data."""
    return None


AGGREGATION = {"dsu_kept": "sum", "dsu_delta_hat": "max", "dsu_is_substitution": "all", "greedy_kept": "sum"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"components: {m['dsu_kept']} kept, δ̂ = {fmt(m['dsu_delta_hat'])}, a δ-substitution: {fmt(m['dsu_is_substitution'])}",
            f"greedy keeps {m['greedy_kept']}")


CLAIM = Claim(
    "C4",
    "Connected components are not a δ-substitution",
    r"\exists\,a\sim b,\ b\sim c,\ a\not\sim c:\ \text{one representative per component violates}\ \|x-\pi(x)\|_2\le\delta",
    "App. C.4, Figure 5",
    ("lam_ref.covering.connected_components_map",),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=110,
)

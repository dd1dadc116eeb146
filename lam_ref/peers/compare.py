"""LAM beside its peers on the same trajectories (paper Table 17, Figure 3; ``lam-ref compare``): the
default methods and operating points, the encoder wrapper that counts what each method encodes,
and the removal-against-evidence figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..plots import pyplot
from ..text.encoders import Encoder

__all__ = ["CHUNK_METHODS", "COLORS", "DEFAULT_METHODS", "DEFAULT_OPS", "DEFAULT_TAUS", "LAM_METHODS", "CountingEncoder",
           "plot"]

DEFAULT_METHODS = "lam,l0,masking,semdedup,gem,lre"
DEFAULT_OPS: dict[str, list[Any]] = {"t": [0.99, 0.95, 0.90], "k": [10, 5, 3], "eps": [0.01, 0.05, 0.10],
                                     "tau": [0.80, 0.90, 0.95], "budget": [2048, 1024, 512]}
DEFAULT_TAUS = ["1.0", "0.999", "0.99", "0.95"]
CHUNK_METHODS = frozenset({"lam", "l1", "semdedup"})
LAM_METHODS = frozenset({"lam", "l1", "l0"})


class CountingEncoder(Encoder):
    """An encoder that counts the texts it is given, by kind (the report's encode count)."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.device, self.kind = inner.device, inner.kind
        self.counts: dict[str, int] = {}
        self.current = "chunks"

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        self.counts[self.current] = self.counts.get(self.current, 0) + len(texts)
        return self.inner.encode(texts, batch_size=batch_size, progress=progress)

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        return self.inner.token_lengths(texts)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


COLORS = {"lam": "#c0392b", "l1": "#e67e22", "l0": "#8e44ad", "masking": "#7f8c8d", "semdedup": "#2980b9",
          "gem": "#27ae60", "lre": "#b7950b"}


def _label_offsets(points: list[tuple[float, float, str]], ax, fontsize: float) -> list[tuple[float, float]]:
    """Offsets (in points) for the operating-point labels so that none overprints another: labels
    of points at one height are staggered in rows wherever two would overlap along x, above the
    points, or below them at the top of the axis (evidence 100 %). ``points`` are sorted by x."""
    fig = ax.figure
    fig.canvas.draw()
    top = ax.get_ylim()[1]
    scale = fig.dpi / 72.0
    placed: dict[tuple[int, int], list[tuple[float, float]]] = {}
    out = []
    for x, y, text in points:
        px, py = ax.transData.transform((x, y))
        width = 0.62 * fontsize * len(text) * scale + 4
        level = round(py / (fontsize * scale))
        row = 0
        while any(a < px + width and px < b for a, b in placed.get((level, row), [])):
            row += 1
        placed.setdefault((level, row), []).append((px, px + width))
        out.append((2.0, -10.0 - 8.0 * row) if y >= top - 0.5 else (3.0, 3.0 + 8.0 * row))
    return out


def plot(rows_json: list[dict[str, Any]], path: str) -> tuple[Path, Path]:
    """Removal against evidence retained, one curve per method through its operating points
    (Figure 3 style; SemDeDup's seed range as error bars); PNG at ``path`` and SVG beside it.

    The x axis is the net removal over the trajectories with a witnessed evidence line (the
    table's ``removed (ev. set)`` column, the set the evidence is measured on); the evidence axis
    ends at 100 %, and the labels of points at 100 % are staggered so that none overprints another."""
    plt = pyplot("--plot")

    from .._io import atomic_write

    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    labels: list[tuple[float, float, str, str]] = []
    for method in dict.fromkeys(r["method"] for r in rows_json):
        pts = sorted((r for r in rows_json if r["method"] == method and r["evidence"]["micro"] is not None
                      and r["evidence"]["removal_net"] is not None), key=lambda r: r["evidence"]["removal_net"])
        if not pts:
            continue
        x = np.array([100 * r["evidence"]["removal_net"] for r in pts])
        y = np.array([100 * r["evidence"]["micro"] for r in pts])
        accent = method == "lam"
        kw = {"color": COLORS.get(method, "black"), "marker": "o" if accent else "s", "lw": 2.2 if accent else 1.2,
              "ms": 6 if accent else 4.5, "label": method + (" (prefix-stable)" if pts[0]["prefix_stable"] else ""),
              "clip_on": False}
        if pts[0]["seeds"] > 1:
            xr = np.array([[x[i] - 100 * r["evidence"]["removal_net_range"][0],
                            100 * r["evidence"]["removal_net_range"][1] - x[i]] for i, r in enumerate(pts)]).T
            yr = np.array([[y[i] - 100 * r["evidence"]["micro_range"][0],
                            100 * r["evidence"]["micro_range"][1] - y[i]] for i, r in enumerate(pts)]).T
            ax.errorbar(x, y, xerr=np.clip(xr, 0, None), yerr=np.clip(yr, 0, None), capsize=3, **kw)
        else:
            ax.plot(x, y, **kw)
        labels += [(float(xi), float(yi), r["label"], kw["color"]) for xi, yi, r in zip(x, y, pts)]
    low = min([y for _, y, _, _ in labels], default=0.0)
    ax.set_ylim(max(0.0, low - 0.08 * (100.0 - low) - 1.0), 100.0)
    ax.set_xlim(left=0.0)
    labels.sort(key=lambda t: t[0])
    for (xi, yi, text, color), off in zip(labels, _label_offsets([(a, b, c) for a, b, c, _ in labels], ax, 6)):
        ax.annotate(text, (xi, yi), textcoords="offset points", xytext=off, fontsize=6, color=color,
                    va="bottom" if off[1] > 0 else "top")
    ax.set_xlabel("tokens removed on the evidence set, net (%): the table's 'removed (ev. set)'")
    ax.set_ylabel("evidence lines retained (%)")
    ax.set_title("Removal against evidence (up and right is better)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    png = Path(path)
    svg = png.with_suffix(".svg")
    atomic_write(png, lambda fh: fig.savefig(fh, format="png", dpi=150))
    atomic_write(svg, lambda fh: fig.savefig(fh, format="svg", metadata={"Date": None}))
    plt.close(fig)
    return png, svg

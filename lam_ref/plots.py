"""Figures: ``matplotlib.pyplot`` on the non-interactive Agg backend, from the optional ``plots``
extra (``lam-ref compare --plot``, ``lam-ref model --plot``, ``lam-ref cct membership --plot``)."""

from __future__ import annotations

from typing import Any

from .geometry import LamValueError

__all__ = ["pyplot"]


def pyplot(option: str = "--plot") -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a :class:`LamValueError` naming
    ``option`` when matplotlib is not installed (it is the optional ``plots`` extra)."""
    try:
        import matplotlib
    except ImportError:
        raise LamValueError(f"{option} needs matplotlib (lam_ref is not on PyPI: pip install -e '.[peers]' "
                            "in its checkout)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt

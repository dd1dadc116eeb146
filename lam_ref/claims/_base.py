"""The :class:`Claim` record shared by every claim module (one module per claim)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Claim"]


@dataclass(frozen=True)
class Claim:
    """One claim: ``id`` (as used in ``@pytest.mark.claim``), a short ``title``, the
    ``statement`` in LaTeX (math mode, without delimiters), the ``location`` in the paper (or
    ``SPEC §n`` / "beyond the paper"), and ``implements``: dotted names of the functions or
    classes that realise or check it."""

    id: str
    title: str
    statement: str
    location: str
    implements: tuple[str, ...]
    origin: str = "paper"
    note: str = ""

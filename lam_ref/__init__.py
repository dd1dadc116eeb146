"""lam_ref: reference implementation and verification suite for LAM (Lossy Agent Memory).

The public core: :func:`substitute` / :func:`oracle` (Algorithm 2, SPEC §5),
:class:`OnlineSession` (Algorithm 1, SPEC §6), the merge rule in :mod:`lam_ref.geometry`
(SPEC §2), band candidates in :mod:`lam_ref.bands` and digests in :mod:`lam_ref.digest`.

``SPEC §n`` in lam_ref's docstrings, tests and messages is section n of the specification in
the repository, ``docs/spec.md`` (anchors ``#s1`` to ``#s16``, one per rule inside each section).
"""

from .bands import BandSettings, band_recall
from .digest import deletion_digest, map_digest
from .geometry import LamValueError, delta_from_t, merges, t_from_delta, t_prime
from .online import OnlineSession, TurnResult
from .substitution import SubstitutionResult, oracle, substitute

__version__ = "0.1.0"

__all__ = [
    "BandSettings",
    "LamValueError",
    "OnlineSession",
    "SubstitutionResult",
    "TurnResult",
    "band_recall",
    "deletion_digest",
    "delta_from_t",
    "map_digest",
    "merges",
    "oracle",
    "substitute",
    "t_from_delta",
    "t_prime",
    "__version__",
]

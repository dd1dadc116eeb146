"""Compaction of real agent trajectories (paper §2.2–2.3, App. B, F; SPEC §3, 4, 7, 8).

The flow: :mod:`~lam_ref.text.loaders` (records) → :mod:`~lam_ref.text.chunking` (cl100k
512-token windows) → :mod:`~lam_ref.text.encoders` (unit rows) → L1 through
:class:`~lam_ref.online.OnlineSession`, turn by turn → :mod:`~lam_ref.text.lines` (L0) →
:mod:`~lam_ref.text.stubs` (fixed templates) → residual + :mod:`~lam_ref.text.audit` store.
:func:`~lam_ref.text.pipeline.compact_trajectory` runs it all; :mod:`~lam_ref.text.residuals` writes
and reads the residual directory (``lam-ref compact --residual-dir``, ``lam-ref restore``).
"""

from .records import OBSERVATION, Record, Trajectory, TrajectoryFormatError

__all__ = ["OBSERVATION", "Record", "Trajectory", "TrajectoryFormatError"]

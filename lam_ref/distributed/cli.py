"""Deprecated (removed in 0.2): the former home of the per-file Dask run and the probe's Dask steps,
now :mod:`lam_ref.distributed.files`, re-exported here for one release.

The command-line side that lived here too (``add_cluster_options``, ``wants_cluster``,
``refuse_serial_only``, ``probe_steps``, ``run_compact``, ``run_substitute``, and ``file_run``
taking parsed arguments) moved to :mod:`lam_ref.commands._dask`; it is not re-exported here,
because the library does not import the commands (``docs/spec-decisions.md``, "Moved names").
"""

from .files import DaskSteps, FileRun, map_files

__all__ = ["DaskSteps", "FileRun", "map_files"]

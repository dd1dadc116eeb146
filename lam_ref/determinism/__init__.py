r"""Determinism: probe, compare, the decision-margin certificate and the kernel matrix (claim ``STAB``; paper App. D, SPEC §10).

The paper (Appendix D) encodes the same windows at six batch sizes, runs the greedy rule on each
embedding matrix and finds one deletion digest per threshold, although coordinates vary by up to
1.1e-6 and pairwise cosines by 1.8e-7; it explains this with decision margins (minimum
6.7e-6 at ``t = 0.99``). This package makes that argument a certificate and checks it across
batch sizes, threads, precisions, devices, CPU kernels and machines (docs/determinism.md).

| module | concern |
|---|---|
| :mod:`~lam_ref.determinism.margins` | the STAB math: margins, jitter, at-risk decisions (numpy and geometry only) |
| :mod:`~lam_ref.determinism.corpus` | the probe's input: windows of trajectories and the input identity |
| :mod:`~lam_ref.determinism.encoder` | loading the encoder at a precision and device; weight identity; float16-stored copies |
| :mod:`~lam_ref.determinism.probing` | :func:`probe`: the report of one process |
| :mod:`~lam_ref.determinism.report` | the report schema (``lam_ref.determinism.report``), :func:`load_report`, :func:`compare` |
| :mod:`~lam_ref.determinism.kernels` | the CPU kernel configurations one machine can emulate (OpenBLAS core types, numpy SIMD, torch CPU capability) |
| :mod:`~lam_ref.determinism.matrix` | :func:`~lam_ref.determinism.matrix.run_matrix`: one probe per kernel configuration in fresh processes, and the verdict over all |

Where a report was made (machine, GPU, git, libraries, kernels in use) is :mod:`lam_ref.provenance`,
shared with the conformance report.

Every name below is importable from ``lam_ref.determinism`` as before the split into modules
(``from lam_ref.determinism import probe, compare, decision_margins``), as well as from its
module. ``SCHEMA`` is now ``"lam_ref.determinism.report"`` with ``SCHEMA_VERSION`` 3 (``input.window_fit``
recorded); reports with the former id ``"lam_ref.determinism/1"`` still load (:func:`load_report`
migrates them), and reports of versions 1 and 2 are read as cut on fixed windows.
"""

from __future__ import annotations

from ..devices import DEVICES, require_cuda
from ..provenance import execution_target, kernel_config
from .corpus import SCOPES, Corpus, load_corpus
from .encoder import DTYPES, encode_corpus, make_weights_copy, shown_folder, weights_identity
from .margins import (
    MACHINE_JITTER,
    MARGIN_SLACK,
    at_risk,
    decision_margins,
    first_divergence,
    jitter,
    risk_bound,
)
from .probing import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_FIT_WINDOW,
    DEFAULT_THRESHOLDS,
    DEFAULT_WINDOW,
    LAYERS,
    REFERENCE_BATCH_SIZE,
    REL_EBS,
    InlineSteps,
    device_kwargs,
    greedy_map,
    probe,
    probe_corpus,
)
from .report import (
    LEGACY_SCHEMA_IDS,
    LEGACY_WINDOW_FIT,
    SCHEMA,
    SCHEMA_VERSION,
    Comparison,
    compare,
    identity,
    load_report,
    window_label,
    window_options,
)

__all__ = [
    "DEFAULT_BATCH_SIZES",
    "DEFAULT_FIT_WINDOW",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_WINDOW",
    "DEVICES",
    "DTYPES",
    "LAYERS",
    "LEGACY_SCHEMA_IDS",
    "LEGACY_WINDOW_FIT",
    "MACHINE_JITTER",
    "MARGIN_SLACK",
    "REFERENCE_BATCH_SIZE",
    "REL_EBS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SCOPES",
    "Comparison",
    "Corpus",
    "InlineSteps",
    "at_risk",
    "compare",
    "decision_margins",
    "device_kwargs",
    "encode_corpus",
    "execution_target",
    "first_divergence",
    "greedy_map",
    "identity",
    "jitter",
    "kernel_config",
    "load_corpus",
    "load_report",
    "make_weights_copy",
    "probe",
    "probe_corpus",
    "require_cuda",
    "risk_bound",
    "shown_folder",
    "weights_identity",
    "window_label",
    "window_options",
]

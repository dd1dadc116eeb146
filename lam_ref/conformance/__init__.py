"""The LAM conformance suite: check any implementation of SPEC §15 against the specification.

Three ways in, one set of checks (:mod:`lam_ref.conformance.checks`, one module per area, written
with the assertion vocabulary of :mod:`lam_ref.conformance.asserts`):

* ``lam-ref conform --impl pkg.module [--json report.json] [--thorough]``;
* ``pytest --pyargs lam_ref.conformance.suite --lam-impl=pkg.module`` (the pytest plugin
  :mod:`lam_ref.conformance.plugin` adds the options; ``LAM_IMPL`` works too);
* from Python, scikit-learn style: :func:`run_checks` / :func:`assert_conforms`, or any single
  ``check_*`` function of a module of :mod:`lam_ref.conformance.checks` (e.g.
  ``lam_ref.conformance.checks.substitute.check_substitute_sound``).

``pkg.module`` may be ``exec:COMMAND`` for an implementation in another language
(:mod:`lam_ref.conformance.protocol`). There is no default implementation: with none chosen the
suite refuses to run. An implementation declares the profiles it claims (``PROFILES``,
:mod:`lam_ref.conformance.profiles`); every check belongs to profiles and the report gives a
verdict per profile. The checks are registered by the ``@check`` decorator and listed by
:mod:`lam_ref.conformance.registry`. lam_ref checks itself through
:mod:`lam_ref.conformance.adapter` (exhaustive, ``COMPLETE = True``) and
:mod:`lam_ref.conformance.adapter_banded` (``COMPLETE = False``); the suite's own power is shown
by the deliberately wrong implementations in :mod:`lam_ref.conformance.witnesses.mutants` and its freedom
from false alarms by :mod:`lam_ref.conformance.witnesses.independent`.
"""

from . import checks
from .harness import Check, CheckSkipped, Context
from .impl import DEFAULT_IMPL, Implementation, load_implementation
from .registry import CHECKS, yield_checks
from .runner import CheckResult, ConformanceFailure, assert_conforms, read_id_file, run_checks

__all__ = [
    "CHECKS",
    "DEFAULT_IMPL",
    "Check",
    "CheckResult",
    "CheckSkipped",
    "ConformanceFailure",
    "Context",
    "Implementation",
    "assert_conforms",
    "checks",
    "load_implementation",
    "read_id_file",
    "run_checks",
    "yield_checks",
]

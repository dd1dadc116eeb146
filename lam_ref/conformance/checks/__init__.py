"""The conformance checks, one module per area, as array-api-tests has one test file per area.

A check's id is ``area.name``; it lives in the module named after its area (``substitute``,
``online``, ``validation``, ``lines``, ``codec``, ``session``, ``vectors``). Each check is a plain
function registered by the ``@check`` decorator (:mod:`lam_ref.conformance.harness`) and written
with the public assertion vocabulary of :mod:`lam_ref.conformance.asserts`; the suite's data is
in :mod:`lam_ref.conformance.strategies`.

To add a check, add a decorated function to its area's module; to add an area, add a module here.
Nothing else lists them: :mod:`lam_ref.conformance.registry` imports every module of this package
(``pkgutil``, in name order) and derives the list of checks, the docs tables, the pytest suite and
``lam-ref conform --list`` from the registrations. Every check names the mutants
(:mod:`lam_ref.conformance.witnesses.mutants`) it is shown to reject.
"""

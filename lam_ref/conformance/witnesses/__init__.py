"""The suite's witnesses: implementations that show the checks are right, not machinery a user runs.

* :mod:`.mutants`: deliberately wrong implementations of SPEC §15, one realistic bug each; every
  check must reject at least one (the suite's power, ``tests/conformance/test_mutants.py``);
  :mod:`.mutants.reference` is their correct skeleton;
* :mod:`.controls`: allowed alternatives the spec permits; every check must pass them (no false
  alarms);
* :mod:`.independent` and :mod:`.independent2`: two implementations written from the docs alone,
  without lam_ref code; every check of the profiles they claim must pass them.

Each is a plain SPEC §15 module: ``lam-ref conform --impl lam_ref.conformance.witnesses.independent``.
The tables of docs/conformance.md ("How we know the suite works") and docs/conformance-mutants.md
are rendered from the mutants' and controls' own records by :mod:`.tables`.
"""

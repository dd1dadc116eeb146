"""The conformance suite as pytest modules, one per SPEC area; each test wraps a check of
:mod:`lam_ref.conformance.checks`. Run ``pytest --pyargs lam_ref.conformance.suite --lam-impl=pkg.module``."""

"""The conformance suite as a pytest package: one parametrised test (:mod:`.test_checks`) with a
case per registered check. Run ``pytest --pyargs lam_ref.conformance.suite --lam-impl=pkg.module``."""

"""Property tests, one module per claim of :mod:`lam_ref.claims` (SPEC §11)."""

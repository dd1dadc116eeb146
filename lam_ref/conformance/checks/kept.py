"""Checks of the area ``kept``: the kept-set form, exact rule (SPEC §15.5; profile ``kept-set``).

The four checks are made by :func:`lam_ref.conformance.keptform.kept_checks`; the float32-cosine
twins are ``checks.kept_f32``.
"""

from __future__ import annotations

from ..keptform import kept_checks

check_kept_contract, check_kept_sound, check_kept_equals_oracle, check_kept_prefix = kept_checks(
    "kept-set", "float64-exact", "kept", __name__)

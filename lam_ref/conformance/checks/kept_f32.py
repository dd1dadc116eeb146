"""Checks of the area ``kept_f32``: the kept-set form under the float32-cosine tie band (SPEC §2.2,
§15.5; profile ``kept-set-f32``), made by :func:`lam_ref.conformance.keptform.kept_checks`.
"""

from __future__ import annotations

from ..keptform import kept_checks

check_kept_f32_contract, check_kept_f32_sound, check_kept_f32_equals_oracle, check_kept_f32_prefix = kept_checks(
    "kept-set-f32", "float32-cosine", "kept_f32", __name__)

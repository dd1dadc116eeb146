"""Checks of the area ``substitute_f32``: ``substitute`` judged with the float32-cosine tie band
(SPEC §2.2; profile ``core-f32``): every merge within δ, and a COMPLETE implementation's π equal
to the oracle's outside the band.
"""

from __future__ import annotations

from typing import Any

from ..asserts import call_substitute
from ..harness import Context, check
from ..keptform import as_kept, case_input, judge_case, mixed_cases, run_oracle_cases


@check("substitute_f32.sound", claim="DEF1", spec="§2.2/§5 every merge within δ, up to the float32-cosine tie band",
       parts=("substitute",), profiles=("core-f32",), shown_to_fail_on=("m209_cosine_f16",))
def check_substitute_f32_sound(impl: Any, ctx: Context) -> None:
    """Every merge is within δ (pairs in the float32-cosine tie band may go either way), COMPLETE or not."""

    def body(case: Any) -> None:
        e, t = case_input(case)
        pi = call_substitute(impl, e, t)
        judge_case(e, t, as_kept(pi), precision="float32-cosine", complete=impl.complete, soundness_only=True)

    ctx.run(mixed_cases(), body, examples=120)


@check("substitute_f32.equals_oracle", claim="DEF1", spec="§2.2/§5 the oracle's π outside the float32-cosine tie band",
       parts=("substitute",), profiles=("core-f32",), complete_only=True,
       shown_to_fail_on=("m208_cosine_f32_nearest",))
def check_substitute_f32_equals_oracle(impl: Any, ctx: Context) -> None:
    """A COMPLETE implementation returns the oracle's π, except that pairs in the tie band may go either way."""

    def body(case: Any, exact_ties: bool = False) -> None:
        e, t = case_input(case)
        pi = call_substitute(impl, e, t)
        judge_case(e, t, as_kept(pi), precision="float32-cosine", complete=True, soundness_only=False, exact_ties=exact_ties)

    run_oracle_cases(ctx, body)

"""The machinery under every check: registry, Hypothesis runs, statistics, counterexamples.

A check is a plain function ``check_x(impl, ctx=None)`` (scikit-learn style) registered with
:func:`check`, which records its id, the claim ID it covers (``DEF1``, ``ONLINE``, ...), the SPEC
item, the parts of SPEC §15 it needs and the profiles (:mod:`lam_ref.conformance.profiles`) it
belongs to. Calling it raises ``AssertionError`` on a violation, :class:`CheckSkipped` when it does
not apply, and returns ``None`` when the implementation conforms.

The decorator is the **one registration**: it adds the check to :data:`REGISTRY` (in definition
order). :mod:`lam_ref.conformance.registry` imports every module of the package
:mod:`lam_ref.conformance.checks` and derives ``CHECKS``, the docs tables, the pytest suite and the
``lam-ref conform --list`` output from it.

Property checks run through :meth:`Context.run`, a thin wrapper over ``hypothesis.given`` that
fixes the settings (derandomized by default, random in thorough mode, no example database, no
deadline), counts examples and remembers the last failing case: Hypothesis replays the *minimal*
failing example last, so that is the counterexample the report carries.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st
from hypothesis.errors import UnsatisfiedAssumption

__all__ = [
    "Check",
    "CheckSkipped",
    "Context",
    "HypothesisStats",
    "REGISTRY",
    "SPEC_ITEM_IDS",
    "check",
    "to_jsonable",
]

#: Example counts are multiplied by this in thorough mode (``--thorough``).
THOROUGH_FACTOR = 25

#: IDs the suite uses for SPEC items that are not claims of the paper; every other check claim
#: is registered in :mod:`lam_ref.claims` (a meta-test keeps both lists honest).
SPEC_ITEM_IDS = {
    "VALID": "SPEC §2 input validation: bad input raises ValueError naming the argument and value",
    "L0": "SPEC §7 exact line deduplication",
    "L2": "SPEC §9 error-bounded codec",
}


#: Every check registered by :func:`check`, by id, in registration order.
REGISTRY: dict[str, Check] = {}


class CheckSkipped(Exception):
    """The check does not apply to this implementation (a part is missing); carries the reason."""


@dataclass
class HypothesisStats:
    """Per-check Hypothesis statistics (summed over the check's properties)."""

    max_examples: int = 0
    examples: int = 0  # test-case bodies executed (generation, replay and shrinking)
    invalid: int = 0  # cases rejected by ``assume``
    failing: int = 0  # executions that failed (the first failure plus shrink attempts)
    properties: int = 0  # number of Hypothesis-run properties in the check
    derandomize: bool = True
    runtime_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Context:
    """How checks run: example counts, thoroughness, shrinking; collects statistics.

    ``scale`` multiplies every check's default example count (the mutant meta-test uses a small
    scale); ``thorough`` multiplies by :data:`THOROUGH_FACTOR` and turns off derandomization.
    """

    thorough: bool = False
    scale: float = 1.0
    shrink: bool = True
    verbosity: Verbosity = field(default_factory=lambda: Verbosity.normal)
    stats: HypothesisStats = field(default_factory=HypothesisStats)
    counterexample: Any = None
    #: the diagnosis of the last failure (:func:`lam_ref.conformance.diagnosis.diagnose`), else None
    diagnosis: Any = None

    def __repr__(self) -> str:
        return f"Context(thorough={self.thorough}, scale={self.scale}, examples run={self.stats.examples})"

    def note(self, case: Any) -> None:
        """Record the case a non-generated check is about to try (the report's counterexample)."""
        self.counterexample = case

    def reset(self) -> None:
        self.stats = HypothesisStats(derandomize=not self.thorough)
        self.counterexample = None
        self.diagnosis = None

    def examples(self, base: int) -> int:
        n = base * (THOROUGH_FACTOR if self.thorough else 1) * self.scale
        return max(1, int(math.ceil(n)))

    def run(self, strategy: st.SearchStrategy[Any], body: Callable[[Any], None], examples: int) -> None:
        """Run ``body(case)`` for cases drawn from ``strategy`` (up to ``examples(examples)``)."""
        n = self.examples(examples)
        phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if self.shrink else [])
        stats = self.stats
        stats.max_examples += n
        stats.properties += 1

        @settings(
            max_examples=n,
            derandomize=not self.thorough,
            database=None,
            deadline=None,
            phases=phases,
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=self.verbosity,
            suppress_health_check=list(HealthCheck),
        )
        @given(strategy)
        def prop(case: Any) -> None:
            stats.examples += 1
            try:
                body(case)
            except UnsatisfiedAssumption:
                stats.invalid += 1
                raise
            except BaseException:
                stats.failing += 1
                self.counterexample = case
                raise

        start = time.perf_counter()
        try:
            prop()
        finally:
            stats.runtime_s += time.perf_counter() - start


@dataclass(frozen=True)
class Check:
    """A registered check: ``id`` (``area.name``), ``claim`` ID, ``spec`` item, needed ``parts``."""

    id: str
    claim: str
    spec: str
    parts: tuple[str, ...]
    title: str
    func: Callable[..., None] = field(repr=False, compare=False)
    complete_only: bool = False
    #: The deliberately wrong implementations (:mod:`lam_ref.conformance.witnesses.mutants`) this check
    #: is shown to reject (metadata as data; ``tests/conformance/test_mutants.py`` holds it true).
    shown_to_fail_on: tuple[str, ...] = ()
    #: The profiles (:data:`lam_ref.conformance.profiles.PROFILES`) whose MUST rules this check tests.
    profiles: tuple[str, ...] = ("core",)
    #: A check whose cases are large by construction (seconds on a slow implementation); the mutant
    #: meta-test runs it only on the mutants it names (and on every correct implementation).
    heavy: bool = False

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    def applicable(self, impl: Any) -> str | None:
        """``None`` if the check applies to ``impl``, else the skip reason (SPEC §15)."""
        for part in self.parts:
            if part != "substitute" and not impl.has(part):  # substitute is required: its checks fail
                why = impl.missing_reasons.get(part, f"no {part}")
                return f"optional part {part!r} not provided ({why})"
        declared = getattr(impl, "profiles", None)
        if declared is not None and not set(self.profiles) & set(declared):
            return (
                f"profile {' / '.join(self.profiles)} not declared by the implementation "
                f"(PROFILES = {sorted(declared)}): skipped, not passed (SPEC §15.4)"
            )
        if self.complete_only and not impl.complete:
            return "implementation declares COMPLETE = False: held to soundness, not to the oracle's exact π (SPEC §15)"
        from .verdicts import precheck

        return precheck(self.id, impl)  # not applicable over exec, or not run within the declared BUDGET

    def __call__(self, impl: Any, ctx: Context | None = None) -> None:
        return self.func(impl, ctx)

    def __repr__(self) -> str:
        return f"Check({self.id!r}, claim={self.claim!r})"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "claim": self.claim,
            "spec": self.spec,
            "parts": list(self.parts),
            "title": self.title,
            "complete_only": self.complete_only,
            "profiles": list(self.profiles),
        }


def check(
    check_id: str,
    *,
    claim: str,
    spec: str,
    parts: tuple[str, ...],
    complete_only: bool = False,
    shown_to_fail_on: tuple[str, ...] = (),
    profiles: tuple[str, ...] = ("core",),
    heavy: bool = False,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Make ``func(impl, ctx)`` a check and register it in :data:`REGISTRY` (the one registration):
    its metadata becomes a :class:`Check` (``wrapper.check``). ``profiles`` are the profiles whose
    MUST rules it tests (it runs when the implementation declares one of them). The returned
    function is callable on its own: ``check_x(impl_or_module_or_spec, ctx=None)`` raises
    ``AssertionError`` on a violation."""
    from .profiles import PROFILES

    unknown = [p for p in profiles if p not in PROFILES]
    if unknown or not profiles:
        raise ValueError(f"check {check_id!r}: unknown or no profiles {unknown or profiles}")

    def deco(func: Callable[..., None]) -> Callable[..., None]:
        # the docstring's first paragraph, on one line
        title = " ".join((func.__doc__ or check_id).strip().split("\n\n")[0].split())

        def wrapper(impl: Any = None, ctx: Context | None = None) -> None:
            from .impl import Implementation, load_implementation

            implementation = load_implementation(impl)
            try:
                reason = registered.applicable(implementation)
                if reason is not None:
                    raise CheckSkipped(reason)
                if "substitute" in parts and not implementation.has("substitute"):
                    raise AssertionError(
                        f"{check_id}: SPEC §15 requires substitute(embeddings, t) and "
                        f"{implementation.spec} does not provide it ({implementation.missing_reasons.get('substitute')})"
                    )
                context = ctx if ctx is not None else Context()
                context.reset()
                try:
                    func(implementation, context)
                except CheckSkipped:
                    raise
                except Exception as exc:
                    _after_failure(exc, registered, implementation, context)
                    raise
            finally:
                if not isinstance(impl, Implementation):  # loaded here (e.g. an exec server): release it
                    implementation.close()

        registered = Check(
            check_id, claim, spec, parts, title, wrapper, complete_only, tuple(shown_to_fail_on), tuple(profiles), heavy
        )
        previous = REGISTRY.get(check_id)
        if previous is not None and previous.func.__qualname__ != func.__qualname__:
            raise ValueError(f"check id {check_id!r} registered twice ({previous.func.__qualname__}, {func.__qualname__})")
        REGISTRY[check_id] = registered
        wrapper.__name__ = func.__name__
        wrapper.__qualname__ = func.__qualname__
        wrapper.__doc__ = func.__doc__
        wrapper.__module__ = func.__module__
        wrapper.check = registered  # type: ignore[attr-defined]
        return wrapper

    return deco


def _after_failure(exc: Exception, registered: Check, impl: Any, context: Context) -> None:
    """A resource exhaustion becomes a ``RESOURCE`` skip (:mod:`lam_ref.conformance.verdicts`); any
    other failure gets its diagnosis (:mod:`lam_ref.conformance.diagnosis`), computed on the
    counterexample, in ``context.diagnosis`` and as a note on the exception."""
    from .diagnosis import diagnose
    from .verdicts import resource_reason

    resource = resource_reason(exc, registered.id, context.counterexample)
    if resource is not None:
        raise CheckSkipped(resource) from exc
    try:
        context.diagnosis = diagnose(impl, context.counterexample, registered.profiles)
    except Exception as err:  # noqa: BLE001 - a diagnosis never hides the failure it explains
        context.diagnosis = {"properties": ["not-reproduced"],
                             "findings": [{"property": "not-reproduced", "text": f"diagnosis failed: {type(err).__name__}: {err}"}]}
    note = getattr(exc, "add_note", None)
    if note is not None:
        note("diagnosis: " + "; ".join(f.get("text", f["property"]) + f" [{f['property']}]" for f in context.diagnosis["findings"][:3]))


def to_jsonable(obj: Any, *, max_items: int = 4096) -> Any:
    """A JSON-friendly copy of a counterexample: arrays become ``{dtype, shape, values}``."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, np.floating):
        return to_jsonable(float(obj))
    if isinstance(obj, bytes):
        return {"bytes_hex": obj[:max_items].hex(), "length": len(obj)}
    if isinstance(obj, np.ndarray):
        flat = obj.reshape(-1)
        values = [to_jsonable(v.item()) for v in flat[:max_items]]
        out: dict[str, Any] = {"dtype": str(obj.dtype), "shape": list(obj.shape), "values": values}
        if flat.size > max_items:
            out["truncated"] = True
        elif obj.ndim > 1:
            out["values"] = to_jsonable(obj.tolist())
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return repr(obj)

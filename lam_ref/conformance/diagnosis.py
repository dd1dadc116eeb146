"""The diagnosis of a failed check: which property of Algorithm 2 the implementation broke (SPEC §15.3).

A failed check's label says where the suite looked, not what went wrong. The diagnosis is
computed by running the implementation again **on the counterexample** and comparing with the
oracle (:func:`lam_ref.substitution.oracle`): the kept sets, each dropped row's witness and its
distance, the prefix property, online against batch, and the input validation. It never reads
the check's name. Every property is a word of :data:`VOCABULARY`; the report leads with a
per-property summary (:func:`summarize`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import validate_embeddings, validate_threshold
from ..substitution import oracle
from .keptset import KeptOutput, read_kept
from .precision import band_for, found_pair_findings, judge

__all__ = ["VOCABULARY", "diagnose", "summarize", "summary_lines", "vocabulary_table"]

#: Every property a diagnosis may name, with its meaning (docs/conformance.md lists them).
VOCABULARY: dict[str, str] = {
    "unrepresented-drop": "a dropped row has no kept row within δ",
    "later-row-kept": "a dropped row is represented only by a later kept row (the later duplicate kept, the earlier dropped)",
    "later-duplicate-kept": "a row was kept although an earlier kept row lies within δ (a missed merge)",
    "unsound-merge": "a dropped row names a witness beyond δ",
    "witness-not-kept": "a dropped row names a witness that is not an earlier kept row",
    "witness-differs": "the witness is a kept row within δ but not the lowest one (SPEC §5)",
    "found-pair-ignored": "a row was kept although a pair it reported names an earlier kept row within δ (SPEC §15.1)",
    "strict-threshold": "a pair exactly at sq = δ² was not merged: the comparison is strict (<), not <=",
    "threshold-precision": "the wrong decision is on a pair within the float32-cosine tie band of δ²: precision at the threshold",
    "prefix-property": "the decision on a row depends on later rows: the kept set of a prefix is not the prefix of the kept set",
    "online-differs-from-batch": "the online session's π differs from the same implementation's batch π",
    "nondeterministic": "two calls on the same input give different answers",
    "empty-input": "N = 0 (or a single row) is not handled as valid input",
    "refuses-valid-input": "valid input was refused with ValueError",
    "accepts-invalid-input": "invalid input (NaN, inf, zero or non-unit rows, t outside [-1, 1]) was accepted: validation",
    "crash": "an exception other than ValueError",
    "output-contract": "the output's type, dtype, shape or index order is wrong, or the input was modified",
    "not-reproduced": "the implementation agrees with the oracle on the counterexample as called here; the failure depends on "
    "how the check called it (layout, dtype, buffers, sessions) or on data the diagnosis does not see",
}


def _extract(case: Any) -> tuple[np.ndarray, float, list[int] | None] | None:
    """``(embeddings, t, turn lengths or None)`` from any counterexample form the checks record."""
    if isinstance(case, dict):
        e, t = case.get("embeddings"), case.get("t")
        lengths = case.get("lengths")
    elif hasattr(case, "embeddings") and hasattr(case, "t"):
        e, t, lengths = case.embeddings, case.t, None
    elif isinstance(case, tuple) and len(case) >= 2 and isinstance(case[0], np.ndarray):
        e, t = case[0], case[1]
        third = case[2] if len(case) > 2 else None
        lengths = list(third) if isinstance(third, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in third) else None
    else:
        return None
    if not isinstance(e, np.ndarray) or e.ndim != 2 or not isinstance(t, (int, float)):
        return None
    return e, float(t), lengths


def _call(impl: Any, e: np.ndarray, t: float) -> tuple[KeptOutput | None, dict[str, Any] | None]:
    """One call in the implementation's form: (answer, None) or (None, a diagnosis of the failure)."""
    try:
        if impl.has("substitute"):
            out = impl.substitute(e.copy(), t)
            pi = np.asarray(out)
            if not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.shape != (e.shape[0],):
                return None, _only("output-contract", f"substitute returned {type(out).__name__} {getattr(out, 'dtype', '')} "
                                   f"of shape {getattr(out, 'shape', '?')} for {e.shape[0]} rows")
            if e.shape[0] and (np.any(pi < 0) or np.any(pi >= e.shape[0])):
                return None, _only("witness-not-kept", f"π holds an id outside [0, {e.shape[0]})")
            mask = pi == np.arange(e.shape[0])
            return KeptOutput(mask, pi), None
        return read_kept(impl.kept(e.copy(), t), e.shape[0]), None
    except AssertionError as exc:
        return None, _only("output-contract", str(exc))
    except ValueError as exc:
        return None, _only("empty-input" if e.shape[0] <= 1 else "refuses-valid-input", f"ValueError: {exc}")
    except Exception as exc:  # noqa: BLE001 - any other exception is what the diagnosis reports
        return None, _only("empty-input" if e.shape[0] == 0 else "crash", f"{type(exc).__name__}: {exc}")


def _only(prop: str, text: str) -> dict[str, Any]:
    return {"properties": [prop], "findings": [{"property": prop, "text": text}]}


def _validation(impl: Any, e: np.ndarray, t: float) -> dict[str, Any] | None:
    """Invalid variants of the counterexample (bad rows, bad t) that the implementation accepts."""
    from .asserts import bad_rows  # the same variants validation.substitute builds

    call = impl.substitute if impl.has("substitute") else impl.kept
    row = min(1, e.shape[0] - 1)
    variants = [(what, bad, t) for what, bad, _ in bad_rows(e, row)] if e.shape[0] else []
    variants += [(f"t = {bad!r}", e, bad) for bad in (1.5, -1.5, float("nan"))]
    for what, bad, tt in variants:
        try:
            call(bad, tt)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001
            return _only("crash", f"invalid input ({what}) raised {type(exc).__name__} instead of ValueError: {exc}")
        return _only("accepts-invalid-input", f"invalid input ({what}) was accepted")
    return None


def _prefix(impl: Any, e: np.ndarray, t: float, whole: KeptOutput) -> dict[str, Any] | None:
    n = e.shape[0]
    ks = range(1, n) if n <= 12 else sorted({1, 2, n // 4, n // 2, 3 * n // 4, n - 2, n - 1})
    for k in ks:
        sub, _ = _call(impl, e[:k], t)
        if sub is None:
            continue
        diff = np.flatnonzero(sub.mask != whole.mask[:k])
        if diff.size:
            i = int(diff[0])
            return {"property": "prefix-property", "row": i,
                    "text": f"row {i} is {'kept' if sub.mask[i] else 'dropped'} among the first {k} rows and "
                    f"{'kept' if whole.mask[i] else 'dropped'} among all {n}"}
    return None


def _online(impl: Any, e: np.ndarray, t: float, lengths: list[int], batch: KeptOutput | None) -> dict[str, Any] | None:
    if not impl.has("online") or batch is None or batch.witness is None:
        return None
    session = impl.online_session(t)
    parts, start = [], 0
    for n in lengths:
        parts.append(np.asarray(session.admit(e[start:start + n].copy()), dtype=np.int64))
        start += n
    got = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    diff = np.flatnonzero(got != batch.witness)
    if diff.size:
        i = int(diff[0])
        return {"property": "online-differs-from-batch", "row": i,
                "text": f"online π[{i}] = {int(got[i])}, the same implementation's batch π[{i}] = {int(batch.witness[i])}"}
    return None


def diagnose(impl: Any, case: Any, profiles: tuple[str, ...] = ("core",)) -> dict[str, Any]:
    """The diagnosis of a failure on ``case`` (module docstring): ``properties`` (vocabulary words,
    most telling first), ``findings`` (one per departure, with rows and distances), and, where
    the kept sets could be compared, ``kept_equal``, ``witness_differs`` and ``prefix``."""
    got = _extract(case)
    if got is None:
        return _only("not-reproduced", "the counterexample holds no (embeddings, t) to run again")
    e, t, lengths = got
    try:
        e = validate_embeddings(e, name="embeddings")
        t = validate_threshold(t)
    except ValueError:
        return _validation_result(impl, case) or _only("not-reproduced", "the counterexample is invalid input")
    answer, failure = _call(impl, e, t)
    if failure is not None:
        return failure
    precision = "float32-cosine" if profiles and all(p.endswith("-f32") for p in profiles) else "float64-exact"
    # the exact profile is diagnosed with no band at all: a departure inside the generator's 1e-9 margin is
    # still named (strict-threshold, threshold-precision), it is only never a verdict on its own
    band = band_for(precision, e, exact_ties=precision == "float64-exact")
    findings = [f.to_json() for f in judge(e, t, answer.mask, answer.witness, band=band, complete=impl.complete)]
    if answer.pairs is not None:
        findings += [f.to_json() for f in found_pair_findings(e, t, answer.mask, answer.pairs, band)]
    want = oracle(e, t).pi
    out: dict[str, Any] = {
        "kept_equal": bool(np.array_equal(answer.mask, want == np.arange(e.shape[0]))),
        "witness_differs": sum(1 for f in findings if f["property"] == "witness-differs"),
        "rows": int(e.shape[0]), "dim": int(e.shape[1]), "t": t, "precision": precision,
    }
    again, _ = _call(impl, e, t)
    if again is not None and not np.array_equal(again.mask, answer.mask):
        findings.append({"property": "nondeterministic", "text": "a second call on the same input kept other rows"})
    prefix = _prefix(impl, e, t, answer) if e.shape[0] > 1 else None
    out["prefix"] = prefix is None
    if prefix is not None:
        findings.append(prefix)
    if lengths:
        online = _online(impl, e, t, lengths, answer)
        if online is not None:
            findings.append(online)
    if any(f["property"] == "strict-threshold" for f in findings) and _merges_pinned_tie(impl):
        for f in findings:  # it merges the exactly representable tie: this tie was lost to rounding, not to <
            if f["property"] == "strict-threshold":
                f["property"] = "threshold-precision"
                f["text"] += " (it does merge the pinned tie (1,0), (0,1) at t = 0, so the comparison is <=; rounding lost this one)"
    if not findings:
        findings = (_validation(impl, e, t) or _only("not-reproduced", VOCABULARY["not-reproduced"]))["findings"]
    out["findings"] = findings
    out["properties"] = list(dict.fromkeys(f["property"] for f in findings))
    return out


def _merges_pinned_tie(impl: Any) -> bool:
    """Whether the implementation merges SPEC §2.1's pinned tie (1,0), (0,1) at t = 0 (sq = 2 = δ² exactly)."""
    answer, _ = _call(impl, np.array([[1, 0], [0, 1]], dtype=np.float32), 0.0)
    return answer is not None and not bool(answer.mask[1])


def _validation_result(impl: Any, case: Any) -> dict[str, Any] | None:
    got = _extract(case)
    if got is None:
        return None
    e, t, _ = got
    call = impl.substitute if impl.has("substitute") else impl.kept
    try:
        call(e, t)
    except ValueError:
        return None
    except Exception as exc:  # noqa: BLE001
        return _only("crash", f"invalid input raised {type(exc).__name__} instead of ValueError")
    return _only("accepts-invalid-input", "the counterexample is invalid input and was accepted")


def summarize(tests: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's per-property summary over the failed checks' diagnoses (module docstring)."""
    diagnosed = [t for t in tests if t.get("diagnosis")]
    props: dict[str, dict[str, Any]] = {}
    for t in diagnosed:
        for p in t["diagnosis"].get("properties", []):
            entry = props.setdefault(p, {"meaning": VOCABULARY.get(p, p), "checks": []})
            entry["checks"].append(t["id"])
    compared = [t["diagnosis"] for t in diagnosed if "kept_equal" in t["diagnosis"]]
    by_outcome = {k: [t["id"] for t in tests if t.get("outcome") == k] for k in ("resource", "not_run", "not_applicable")}
    return {
        "diagnosed": len(diagnosed),
        "compared": len(compared),
        "kept_equal": sum(1 for d in compared if d["kept_equal"]),
        "witness_differs": sum(1 for d in compared if d.get("witness_differs")),
        "prefix_broken": sum(1 for d in compared if d.get("prefix") is False),
        "properties": props,
        **by_outcome,
    }


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The per-property summary in words, one line each (the text report's first lines)."""
    lines = []
    if summary["compared"]:
        lines.append(
            f"kept set equal to the oracle's in {summary['kept_equal']}/{summary['compared']} diagnosed counterexamples; "
            f"witness differs in {summary['witness_differs']}; prefix property broken in {summary['prefix_broken']}"
        )
    for prop, entry in sorted(summary["properties"].items(), key=lambda kv: -len(kv[1]["checks"])):
        lines.append(f"{prop} ({entry['meaning']}): {len(entry['checks'])} check(s): {', '.join(entry['checks'])}")
    for outcome in ("resource", "not_run", "not_applicable"):
        if summary.get(outcome):
            lines.append(f"{outcome.replace('_', ' ')}: {', '.join(summary[outcome])}")
    return lines


def vocabulary_table() -> str:
    """The markdown table of :data:`VOCABULARY` (docs/conformance.md, block ``vocabulary-table``)."""
    rows = ["| property | meaning |", "|---|---|"]
    rows += [f"| `{word}` | {meaning} |" for word, meaning in VOCABULARY.items()]
    return "\n".join(rows)

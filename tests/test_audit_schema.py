"""The audit report's schema (issue 36 §5; :mod:`lam_ref.schemas`): every report ``lam_ref.audit``
writes, with the kept set or π, with and without violations, differences and exact optima, and as
``lam-ref audit --json`` writes it (``files``, ``--ids``), is valid; a report that departs from it
is refused in one line naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lam_ref import schemas
from lam_ref.audit import SCHEMA, audit_output

T30 = float(np.cos(np.pi / 6))


def _chain() -> np.ndarray:
    """Five unit rows on a circle 25° apart (within δ of t = cos 30° of each neighbour only)."""
    a = np.deg2rad(np.arange(5) * 25.0)
    return np.stack([np.cos(a), np.sin(a), np.zeros(5)], axis=1).astype(np.float32)


REPORTS = {
    "kept, premise holds": lambda: audit_output(_chain(), T30, kept=[1, 3]),
    "kept, a violation": lambda: audit_output(_chain(), T30, kept=[0]),
    "pi, map violations": lambda: audit_output(_chain(), T30, pi=[0, 0, 0, 2, 4]),
    "two trajectories, no exact": lambda: audit_output(_chain(), T30, kept=[0, 2, 4], boundaries=[(0, 2), (2, 5)],
                                                       max_exact=0),
    "boolean mask": lambda: audit_output(_chain(), T30, kept=np.array([1, 0, 1, 0, 1], bool)),
}


@pytest.mark.parametrize("case", sorted(REPORTS))
def test_every_audit_report_is_valid(case):
    report = REPORTS[case]()
    assert report["schema"] == SCHEMA == "lam_ref.audit.report", report["schema"]
    assert schemas.errors(report, SCHEMA) == [], f"{case}: {schemas.errors(report, SCHEMA)}"


def test_the_cases_cover_every_optional_shape():
    """The cases are not vacuous: violations, map violations, a first difference and no exact part all occur."""
    reps = {k: f() for k, f in REPORTS.items()}
    assert reps["kept, a violation"]["violations"], "a deleted row with no witness"
    assert reps["pi, map violations"]["map_violations"], "a representative farther than δ"
    assert any(r["first_difference"] is not None for r in reps.values()), "an output that differs from Algorithm 2"
    assert reps["two trajectories, no exact"]["exact"] is None, "no trajectory small enough (max_exact=0)"
    assert reps["kept, premise holds"]["exact"] is not None, "the exact optimum on a small trajectory"


def test_the_command_writes_a_valid_report(tmp_path: Path):
    """``lam-ref audit --json`` adds the input files and, with ``--ids``, each violation's ids."""
    from lam_ref.cli import main

    np.save(tmp_path / "e.npy", _chain())
    (tmp_path / "kept.json").write_text(json.dumps([10]))
    (tmp_path / "ids.json").write_text(json.dumps([10, 11, 12, 13, 14]))
    out = tmp_path / "audit.json"
    code = main(["audit", str(tmp_path / "e.npy"), "--kept", str(tmp_path / "kept.json"), "--ids",
                 str(tmp_path / "ids.json"), "-t", str(T30), "--json", str(out)])
    doc = json.loads(out.read_text())
    assert code == 1 and doc["violations"] and "id" in doc["violations"][0], (code, doc["violations"])
    assert schemas.errors(doc, SCHEMA) == [], schemas.errors(doc, SCHEMA)


@pytest.mark.parametrize(("change", "fragment"), [
    (lambda r: r.pop("delta_hat_nearest"), "missing key 'delta_hat_nearest'"),
    (lambda r: r.update(input="mask"), "input: 'mask' is not one of 'kept', 'pi'"),
    (lambda r: r.update(kept=-1), "kept: -1 fails minimum 0"),
    (lambda r: r["per_trajectory"][0].update(rows="5"), "per_trajectory[0].rows: has type str, expected integer"),
    (lambda r: r.update(extra=1), "unknown key 'extra'"),
    (lambda r: r.update(schema_version=2), "schema_version: 2 is not 1"),
])
def test_a_report_that_departs_is_refused(change, fragment):
    report = audit_output(_chain(), T30, kept=[1, 3])
    change(report)
    with pytest.raises(schemas.SchemaError) as exc:
        schemas.validate(report, SCHEMA, where="report 'a.json'")
    msg = str(exc.value)
    assert "\n" not in msg and fragment in msg, f"got {msg!r}, expected {fragment!r} in it"

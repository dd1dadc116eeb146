"""Committed determinism reports (``determinism/reports/*.json``): every one is a valid report, every
pair with the same input identity agrees (digests per threshold; codec bytes wherever the
embeddings are byte-identical), and this machine's fresh probe agrees with each committed report
of its input. Adding a machine = dropping its report in the folder and running this suite
(determinism/README.md)."""

from __future__ import annotations

import itertools
import json

import pytest

from lam_ref.determinism import compare, identity, load_report

from .conftest import REPORTS

#: Every committed report: the top-level ones and those of a kernel matrix (``<folder>/<configuration>.json``;
#: ``matrix.json`` is the matrix's summary, not a report).
FILES = sorted(p for p in REPORTS.rglob("*.json") if p.name != "matrix.json" and "embeddings" not in p.parts)


def test_reports_are_committed():
    """This CPU's reports of the shared trajectories and of the demo agent's trajectory are present."""
    names = {p.name for p in FILES}
    assert any(n.startswith("cpu-shared-") for n in names), f"no shared-trajectories report in {sorted(names)}"
    assert any(n.startswith("cpu-demo-") for n in names), f"no demo-trajectory report in {sorted(names)}"


IDS = [p.relative_to(REPORTS).as_posix() for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_committed_report_is_valid_and_self_consistent(path):
    """Each report loads (schema, keys, digests vs its deletion list) and agrees with itself across batch sizes
    wherever its margins certify it."""
    doc = load_report(path)
    res = compare([doc])
    for g in res.groups:
        for d in g["divergences"]:
            assert d["at_risk"], f"{path.name}: divergence at chunk {d['first_chunk']} was not flagged at risk"


PAIRS = [(a, b) for a, b in itertools.combinations(FILES, 2)]


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a.relative_to(REPORTS).as_posix()}~{b.relative_to(REPORTS).as_posix()}"
                                            for a, b in PAIRS])
def test_committed_reports_with_the_same_input_agree(a, b):
    """Reports of the same input identity (windows, encoder weights, scope, window size) agree on every
    digest per threshold and on codec bytes for identical embeddings; other pairs are not compared."""
    da, db = load_report(a), load_report(b)
    if identity(da) != identity(db):
        return
    res = compare([da, db])
    bad = [g for g in res.groups if not g["agree"]]
    assert not bad and not res.codec_mismatches, f"{a.name} vs {b.name}: {bad or res.codec_mismatches}"


@pytest.mark.data
def test_this_machine_agrees_with_committed_reports(minilm_probe, tmp_path):
    """The session's fresh probe of the shared trajectories agrees with every committed report of the
    same input identity (on a new machine, this is the check its own report must pass)."""
    report, _ = minilm_probe
    here = tmp_path / "this-machine.json"
    here.write_text(json.dumps(report))
    mine = load_report(here)
    same = [load_report(p) for p in FILES if identity(load_report(p)) == identity(mine)]
    assert same, "no committed report of the shared trajectories with this encoder's weights"
    res = compare([mine] + same)
    bad = [g for g in res.groups if not g["agree"]]
    assert not bad and not res.codec_mismatches, f"disagreement with committed reports: {bad or res.codec_mismatches}"

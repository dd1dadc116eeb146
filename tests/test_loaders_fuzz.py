"""Malformed-input fuzzing of every loader (spec §1.1): a clear error, never a crash, never a
partial result."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.text.loaders import MalformedEvidenceWarning, load_file
from lam_ref.text.records import Trajectory, TrajectoryFormatError

VALID = {
    "run.traj": {
        "trajectory": [{"action": "ls", "observation": "a\nb", "thought": "t", "state": {"x": 1}},
                       {"action": "cat", "observation": None, "thought": "u"}],
        "history": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "i"}]},
                    {"role": "assistant", "content": "x"}],
    },
    "hist.traj": {"history": [{"role": "system", "content": "s"}, {"role": "assistant", "thought": "t", "action": "a"},
                              {"role": "tool", "content": "out"}, {"role": "user", "message_type": "observation",
                                                                  "content": "o2"}]},
    "run.traj.json": {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                                   {"role": "assistant", "content": "c"}, {"role": "user", "content": "o"}],
                      "info": {"exit_status": "x"}},
    "locomo10.json": [{"sample_id": "s", "conversation": {
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}, {"speaker": "B", "dia_id": "D1:2", "text": "yo"}],
        "session_1_date_time": "now"},
        "qa": [{"question": "q", "answer": "a", "evidence": ["D1:2", "D1:3"]}]}],
    "t.jsonl": [{"role": "user", "text": "x"}, {"role": "observation", "text": "y", "turn": 1}],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _slots(obj, out):
    """Every (container, key) pair of a JSON document, depth first."""
    if isinstance(obj, dict):
        for k in list(obj):
            out.append((obj, k))
            _slots(obj[k], out)
    elif isinstance(obj, list):
        for i in range(len(obj)):
            out.append((obj, i))
            _slots(obj[i], out)
    return out


def _serialise(name: str, doc) -> bytes:
    if name.endswith(".jsonl"):
        return "\n".join(json.dumps(x) for x in doc).encode() if isinstance(doc, list) else json.dumps(doc).encode()
    return json.dumps(doc).encode()


def _check(path: Path) -> None:
    """The property: either whole trajectories with string texts, or a TrajectoryFormatError naming the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MalformedEvidenceWarning)
            out = load_file(path)
    except TrajectoryFormatError as exc:
        assert str(path) in str(exc), f"the error must name the file: {exc}"
        assert exc.json_path and exc.problem, f"the error must carry a JSON path and a problem: {exc!r}"
        return
    assert out and all(isinstance(t, Trajectory) for t in out), "a successful load returns trajectories"
    for t in out:
        for r in t.records:
            assert isinstance(r.text, str) and isinstance(r.role, str) and r.role, f"bad record {r!r}"
            assert isinstance(r.turn, int) and r.turn >= 0, f"bad turn in {r!r}"
            r.text.encode("utf-8")  # valid Unicode, no lone surrogates


@given(name=st.sampled_from(sorted(VALID)), value=json_values)
def test_structural_mutations_give_clear_errors(tmp_path_factory, name, value):
    """Claim: replacing any node of a valid document of any format by an arbitrary JSON value, or
    deleting any node, gives either a complete, well-typed load or one TrajectoryFormatError naming
    the file and the JSON path (every node is mutated in turn, for each drawn value).
    Shown to fail on a deliberately wrong loader whose string check returned any value unchecked
    (a list in an ``action`` field came back as a record text) and on one that read a step without
    the object check (a non-object step raised AttributeError instead of the format error)."""
    base = tmp_path_factory.mktemp("fuzz")
    n_slots = len(_slots(json.loads(json.dumps(VALID[name])), []))
    for k in range(n_slots):
        for action in ("replace", "delete"):
            doc = json.loads(json.dumps(VALID[name]))
            container, key = _slots(doc, [])[k]
            if action == "delete":
                del container[key]
            else:
                container[key] = value
            path = base / f"{k}_{action}" / name
            path.parent.mkdir()
            path.write_bytes(_serialise(name, doc))
            _check(path)


@given(
    name=st.sampled_from(sorted(VALID)),
    cut=st.integers(0, 400),
    junk=st.binary(min_size=0, max_size=4),
    at=st.integers(0, 400),
)
def test_byte_mutations_give_clear_errors(tmp_path_factory, name, cut, junk, at):
    """Claim: truncated files and files with arbitrary bytes spliced in (invalid UTF-8, broken JSON)
    never crash a loader or return part of a file. Shown to fail on a deliberately wrong reader that
    decoded with ``errors="replace"`` instead of refusing non-UTF-8 bytes (the U+FFFD text loaded)."""
    data = _serialise(name, VALID[name])
    data = data[: max(1, len(data) - cut % len(data))]
    pos = at % (len(data) + 1)
    data = data[:pos] + junk + data[pos:]
    path = tmp_path_factory.mktemp("bytes") / name
    path.write_bytes(data)
    try:
        data.decode("utf-8")
        valid_utf8 = True
    except UnicodeDecodeError:
        valid_utf8 = False
    if not valid_utf8:
        try:
            load_file(path)
        except TrajectoryFormatError as exc:
            assert "not valid UTF-8" in str(exc), f"non-UTF-8 input must be refused as such: {exc}"
        else:
            raise AssertionError("non-UTF-8 bytes were accepted")
    else:
        _check(path)


#: The arrays of each valid document whose items must be objects (steps, messages, turns, lines).
ITEM_ARRAYS = {"run.traj": [("trajectory",), ("history",)], "hist.traj": [("history",)],
               "run.traj.json": [("messages",)], "locomo10.json": [(0, "conversation", "session_1"), (0, "qa")],
               "t.jsonl": [()]}


@pytest.mark.parametrize("bad", [1, "x", [], None, True], ids=repr)
@pytest.mark.parametrize("name", sorted(ITEM_ARRAYS))
def test_non_object_items_are_refused(tmp_path, name, bad):
    """Claim (no partial result): a step, message, dialogue turn, QA item or JSONL line that is not
    an object makes the whole file fail with a TrajectoryFormatError naming it, never a load that
    skips it. Shown to fail on a mini-swe-agent loader that skipped non-object messages (which
    the structural fuzz above accepts, since a skipping load is still well typed)."""
    for where in ITEM_ARRAYS[name]:
        for i in range(len(_get(VALID[name], where))):
            doc = json.loads(json.dumps(VALID[name]))
            _get(doc, where)[i] = bad
            path = tmp_path / f"{'_'.join(map(str, where))}_{i}" / name
            path.parent.mkdir(parents=True)
            path.write_bytes(_serialise(name, doc))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MalformedEvidenceWarning)
                with pytest.raises(TrajectoryFormatError) as exc:
                    load_file(path)
            assert str(path) in str(exc.value), f"the error names the file: {exc.value}"


def _get(doc, where):
    for k in where:
        doc = doc[k]
    return doc

"""The fuzz corpus of issue 24 (docs/reliability.md): malformed inputs from a fixed seed, each run
through ``lam-ref compact`` (hash encoder, in process) next to two good files, then ``lam-ref
restore``; and malformed residual and audit stores run through ``restore``.

Every case is classified by what the user would see:

* **clean error**: exit 1, exactly one ``lam-ref compact: failed: <bad file>: ...`` line (or, for a
  restore case, one ``lam-ref restore: failed:`` line), every stderr line one of ours;
* **ok**: exit 0 for an input that is valid after all (line separators, odd but legal ids), and
  it restores byte for byte;
* **traceback**: an exception escaped ``main`` or a traceback reached stderr;
* **hang**: the case ran past its deadline (``SIGALRM``);
* **silent garbage**: exit 0 for a bad input that left no failure, or an exit status outside 0/1/2,
  or an error line that is not ours;
* **data lost**: an input changed, or a good file next to the bad one was not processed and
  restored byte for byte.

``python -m tests.fuzz [--all] [--count N]`` prints the counts (the table of the reliability page).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SEED = 24
#: Cases run on every change (``make test``); the whole set under ``make thorough``.
QUICK = 48
ALL = 320
DEADLINE_S = 30

_OBS = "collected 3 items\n\ntest_a.py ..F\n\nFAILED test_a.py::test_x - AssertionError\n" * 3


def good_traj(code: int) -> dict:
    return {"trajectory": [
        {"action": "pytest", "observation": _OBS, "thought": "run"},
        {"action": "cat x.py", "observation": f"def f{code}():\n    return {code}\n" * 3, "thought": "read"},
        {"action": "pytest", "observation": _OBS + "\nextra", "thought": "again"},
    ]}


@dataclass(frozen=True)
class Case:
    """One fuzz input: ``name`` (its file name: the suffix picks the loader), ``data`` (bytes, or
    ``None`` for a FIFO), ``valid`` (``True``: must compact and restore; ``False``: must fail
    cleanly; ``None``: either), ``stage`` (``"compact"``, or ``"residual"``/``"audit"``: the bytes
    replace that file of a good run before ``restore``)."""

    kind: str
    name: str
    data: bytes | None
    valid: bool | None = False
    stage: str = "compact"
    #: given as a PATH argument (not found by scanning the folder); an absolute ``name`` is used as it is
    direct: bool = False


def _dump(obj) -> bytes:
    return json.dumps(obj).encode()


def _surrogate_json(obj) -> bytes:
    """JSON text with the marker ``"@S@"`` replaced by an escaped lone surrogate."""
    return json.dumps(obj).replace("@S@", "\\ud800").encode()


def _locomo(sample_id="s1", text="hello there") -> dict:
    return [{"sample_id": sample_id, "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
        {"speaker": "A", "dia_id": "D1:1", "text": text}, {"speaker": "B", "dia_id": "D1:2", "text": text + " too"}]},
        "qa": []}]


def _generators(rng: random.Random) -> list[Callable[[int], Case]]:
    good = _dump(good_traj(9))

    def truncated(i: int) -> Case:
        return Case("truncated JSON", f"f{i}.traj", good[: rng.randrange(1, len(good) - 1)])

    def huge_int(i: int) -> Case:
        digits = "9" * rng.choice([4301, 5000, 20000])
        where = rng.choice(["obs", "turn", "top", "jsonl"])
        if where == "jsonl":
            return Case("huge integer", f"f{i}.jsonl", ('{"role": "observation", "text": "x", "turn": ' + digits + "}\n").encode())
        if where == "turn":
            return Case("huge integer", f"f{i}.traj", good[:-3] + b', "extra": ' + digits.encode() + b"}]}")
        body = b'{"trajectory": [{"observation": "x", "n": ' + digits.encode() + b"}]}"
        return Case("huge integer", f"f{i}.traj", body if where == "obs" else digits.encode())

    def deep(i: int) -> Case:
        n = rng.choice([2000, 100000])
        sfx = rng.choice([".traj", ".jsonl", ".traj.json"])
        return Case("deep nesting", f"f{i}{sfx}", b"[" * n + b"]" * n)

    def surrogate(i: int) -> Case:
        where = rng.choice(["obs", "action", "locomo-id", "jsonl-name", "jsonl-role"])
        if where == "obs":
            return Case("lone surrogate", f"f{i}.traj", _surrogate_json({"trajectory": [{"observation": "a@S@b"}]}))
        if where == "action":
            return Case("lone surrogate", f"f{i}.traj", _surrogate_json({"trajectory": [{"observation": "a", "action": "@S@"}]}))
        if where == "locomo-id":
            return Case("lone surrogate", f"locomo{i}.json", _surrogate_json(_locomo(sample_id="x@S@")), valid=None)
        field = "name" if where == "jsonl-name" else "role"
        rec = {"role": "observation", "text": "hi", "turn": 0, field: "@S@"}
        return Case("lone surrogate", f"f{i}.jsonl", _surrogate_json(rec) + b"\n", valid=None)

    def separators(i: int) -> Case:
        sep = rng.choice(["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\r", "\r\n"])
        fmt = rng.choice(["traj", "jsonl", "locomo"])
        if fmt == "traj":
            traj = good_traj(i)
            traj["trajectory"][2]["observation"] += f"ex{sep}tra{sep}"
            return Case("line separator", f"f{i}.traj", json.dumps(traj, ensure_ascii=False).encode(), valid=True)
        if fmt == "locomo":
            return Case("line separator", f"locomo{i}.json", json.dumps(_locomo(text=f"a{sep}b"), ensure_ascii=False).encode(),
                        valid=True)
        lines = [{"role": "user", "text": f"task{sep}"}, {"role": "observation", "text": f"x{sep}y{sep}"}]
        return Case("line separator", f"f{i}.jsonl", "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
                    .encode(), valid=True)

    def junk(i: int) -> Case:
        return Case("binary junk", f"f{i}." + rng.choice(["traj", "jsonl", "traj.json"]),
                    bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))

    def empty(i: int) -> Case:
        return Case("empty file", f"f{i}." + rng.choice(["traj", "jsonl"]), rng.choice([b"", b"   \n\n", b"\xef\xbb\xbf"]))

    def wrong_type(i: int) -> Case:
        top = rng.choice([b"3", b'"text"', b"null", b"[1, 2]", b"{}", b'{"trajectory": 5}', b'{"trajectory": [5]}',
                          b'{"trajectory": [{"observation": 5}]}', b'{"messages": [{"content": "x"}]}',
                          b'{"history": [{"role": 3}]}', b'[{"conversation": 5}]'])
        name = f"f{i}.traj" if not top.startswith(b"[{\"conv") else f"locomo{i}.json"
        if b"messages" in top:
            name = f"f{i}.traj.json"
        return Case("wrong top-level type", name, top)

    def jsonl_fields(i: int) -> Case:
        line = rng.choice(['{"role": "observation"}', '{"text": "x"}', '{"role": "observation", "text": 3}',
                           '{"role": "observation", "text": "x", "turn": -1}', '{"role": "", "text": "x"}',
                           '{"role": "observation", "text": "x", "turn": "1"}', '[1]', '{"role": "observation", '])
        return Case("JSONL field", f"f{i}.jsonl", (line + "\n").encode())

    def bad_utf8(i: int) -> Case:
        raw = bytearray(good)
        raw[rng.randrange(len(raw))] = rng.choice([0xff, 0xc3, 0x80, 0xed])
        return Case("invalid UTF-8", f"f{i}.traj", bytes(raw), valid=None)

    def no_obs(i: int) -> Case:
        return Case("no observation text", f"f{i}.jsonl", b'{"role": "user", "text": "task"}\n', valid=True)

    def fifo(i: int) -> Case:
        if rng.random() < 0.3:
            return Case("FIFO or device", rng.choice(["/dev/zero", "/dev/null"]), None, direct=True)
        return Case("FIFO or device", f"f{i}." + rng.choice(["traj", "jsonl"]), None, direct=rng.random() < 0.5)

    def bad_residual(i: int) -> Case:
        data = rng.choice([b"[" * 100000 + b"]" * 100000 + b"\n", b'{"text": ' + b"9" * 5000 + b"}\n", b"\xff\xfe\n",
                           b'{"text": "x"}\n', b"", b'{"role": "observation"}\n' * 3])
        return Case("bad residual", "", data, stage="residual")

    def bad_audit(i: int) -> Case:
        data = rng.choice([b"[" * 100000 + b"]" * 100000, b'{"format": "lam_ref.audit", "version": ' + b"9" * 5000 + b"}",
                           b"\x00\x01", b"{}", b'{"format": "lam_ref.audit", "version": 3, "body": 1, "body_sha256": 2}', b""])
        return Case("bad audit store", "", data, stage="audit")

    return [truncated, huge_int, deep, surrogate, separators, junk, empty, wrong_type, jsonl_fields, bad_utf8, no_obs,
            fifo, bad_residual, bad_audit]


def corpus(count: int, seed: int = SEED) -> list[Case]:
    """``count`` cases from ``seed``: the generators in turn (so every kind is in a short run too)."""
    rng = random.Random(seed)
    gens = _generators(rng)
    return [gens[i % len(gens)](i) for i in range(count)]


class _Deadline(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def fire(signum, frame):
        raise _Deadline()

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _main(argv: list[str]) -> tuple[int | None, str, str, str | None]:
    """``lam-ref`` in process: (exit status, stdout, stderr, traceback text if one escaped)."""
    from lam_ref.cli import main

    out, err = io.StringIO(), io.StringIO()
    tb = None
    rc: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
        except _Deadline:
            raise
        except BaseException:  # noqa: BLE001 - the point is to see it
            tb = traceback.format_exc()
    return rc, out.getvalue(), err.getvalue(), tb


def _ours(line: str, command: str) -> bool:
    return line.startswith(f"lam-ref {command}: ") or line.startswith(f"{command}: ") or not line.strip() \
        or "│" in line or line.startswith(("trajectory", "TOTAL", "encoder ", "columns:", "-", "t0", "t1", "good"))


def _restored_equal(res: Path, sources: dict[str, Path], work: Path) -> str | None:
    """``restore`` of ``res`` writes, for every good source, the records its loader reads."""
    from lam_ref.text.loaders import load_file

    rc, out, err, tb = _main(["restore", str(res), "--out", str(work / "orig"), "--mkdir"])
    if tb:
        return f"restore traceback: {tb.splitlines()[-1]}"
    for name, src in sources.items():
        f = work / "orig" / f"{name}.original.jsonl"
        if not f.is_file():
            return f"{name}: not restored ({err.strip()[:200]})"
        got = [json.loads(x) for x in f.read_text(encoding="utf-8").split("\n") if x]
        want = [r.to_json() for t in load_file(src) for r in t.records]
        if got != want:
            return f"{name}: restored records differ"
    return None


def run_case(case: Case, work: Path) -> tuple[str, str]:
    """Run one case in the empty folder ``work``; its outcome (one of :data:`OUTCOMES`) and a note."""
    d = work / "in"
    d.mkdir()
    goods = {"good_a": d / "good_a.traj", "good_b": d / "good_b.traj"}
    for k, p in enumerate(goods.values()):
        p.write_bytes(_dump(good_traj(k + 1)))
    res = work / "res"
    try:
        with _deadline(DEADLINE_S):
            if case.stage != "compact":
                rc, _, err, tb = _main(["compact", str(d), "--encoder", "hash", "--no-progress", "--no-l2",
                                        "--residual-dir", str(res), "--mkdir"])
                if rc != 0 or tb:
                    return "data lost", f"the good run failed: {err[-300:]} {tb or ''}"
                target = res / ("good_a.residual.jsonl" if case.stage == "residual" else "good_a.audit.json")
                target.write_bytes(case.data or b"")
                rc, out, err, tb = _main(["restore", str(res)])
                if tb or "Traceback" in err:
                    return "traceback", (tb or err).strip().splitlines()[-1]
                failed = [x for x in err.splitlines() if x.startswith("lam-ref restore: failed: ")]
                if rc != 1 or len(failed) != 1 or "good_a" not in failed[0]:
                    return "silent garbage", f"restore rc {rc}, stderr {err[-300:]!r}"
                if "1 of 2 trajectories restored" not in out:
                    return "data lost", f"the other store did not restore: {out[-300:]}"
                return "clean error", failed[0][:200]
            bad = Path(case.name) if os.path.isabs(case.name) else d / case.name
            if case.data is None:
                if not bad.exists():
                    os.mkfifo(bad)
            else:
                bad.write_bytes(case.data)
            before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_fifo()}
            rep = work / "report.json"
            inputs = [str(goods["good_a"]), str(goods["good_b"]), str(bad)] if case.direct else [str(d)]
            rc, out, err, tb = _main(["compact", *inputs, "--encoder", "hash", "--no-progress", "--no-l2",
                                      "--residual-dir", str(res), "--mkdir", "--json", str(rep)])
            if tb or "Traceback" in err:
                return "traceback", (tb or err).strip().splitlines()[-1]
            if rc not in (0, 1, 2):
                return "silent garbage", f"exit status {rc!r}"
            if {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_fifo()} != before:
                return "data lost", "an input changed"
            foreign = [x for x in err.splitlines() if not _ours(x, "compact")]
            if foreign:
                return "silent garbage", f"a stderr line that is not ours: {foreign[0][:200]!r}"
            if rc == 2:
                return "silent garbage", f"the whole run refused for one bad file: {err.strip()[-300:]!r}"
            report = json.loads(rep.read_text())
            ids = {t["id"] for t in report["trajectories"]}
            if not {"good_a", "good_b"} <= ids:
                return "data lost", f"the good files were not all processed: {sorted(ids)}"
            failed = [x for x in err.splitlines() if x.startswith("lam-ref compact: failed: ")]
            sources = dict(goods)
            if rc == 1:
                if case.valid is True:
                    return "silent garbage", f"a valid input failed: {failed[:1]}"
                if len(failed) != 1 or case.name not in failed[0] or len(report["failures"]) != 1:
                    return "silent garbage", f"not one clean line naming the file: {failed!r}"
                outcome, note = "clean error", failed[0].split(": failed: ", 1)[1][:200]
            else:
                skipped = [x for x in err.splitlines() if ": warning: " in x and case.name in x and "skipped" in x]
                if case.data is None and len(skipped) == 1 and ids == {"good_a", "good_b"}:
                    return "clean error", skipped[0].split(": warning: ", 1)[1][:200]  # a reported skip (D10)
                if case.valid is False:
                    return "silent garbage", "exit 0 for a malformed input"
                extra = sorted(ids - {"good_a", "good_b"})
                if not extra:
                    return "silent garbage", "exit 0, but the input is neither processed nor reported"
                for name in {r for r in report.get("residual_files", {}) if r not in ("good_a", "good_b")}:
                    sources[name] = bad
                outcome, note = "ok", f"valid: {extra[0]!r}"
            problem = _restored_equal(res, sources, work)
            if problem:
                return "data lost", problem
            return outcome, note
    except _Deadline:
        return "hang", f"past {DEADLINE_S} s"


OUTCOMES = ("clean error", "ok", "traceback", "hang", "silent garbage", "data lost")


def campaign(count: int, seed: int = SEED) -> tuple[dict[str, int], list[tuple[Case, str, str]]]:
    """Run ``count`` cases; the counts per outcome and every case's ``(case, outcome, note)``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    counts = dict.fromkeys(OUTCOMES, 0)
    results = []
    for case in corpus(count, seed):
        work = Path(tempfile.mkdtemp(prefix="lam-fuzz."))
        try:
            outcome, note = run_case(case, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        counts[outcome] += 1
        results.append((case, outcome, note))
    return counts, results


if __name__ == "__main__":  # pragma: no cover - the reliability page's command
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help=f"the whole set ({ALL} cases; default {QUICK})")
    ap.add_argument("--count", type=int)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    n = a.count or (ALL if a.all else QUICK)
    counts, results = campaign(n)
    if a.verbose:
        for case, outcome, note in results:
            print(f"{case.kind:22} {case.stage:8} {outcome:15} {note[:110]!r}")
    print(f"inputs tried {n}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    sys.exit(0 if counts["traceback"] + counts["hang"] + counts["silent garbage"] + counts["data lost"] == 0 else 1)

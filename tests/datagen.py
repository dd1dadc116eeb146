"""Seeded numpy generators for the foundation's unit tests (Hypothesis draws the seed and sizes),
and the small trajectory files the command and text tests write (:func:`swe_agent_traj`,
:func:`write_jsonl_trajectory`, :func:`write_locomo`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: A pytest run's output: the observation the small trajectories repeat (L0 and L1 have work).
PYTEST_OBS = "collected 2 items\n\ntest_x.py ..  [100%]\n2 passed in 0.01s"


def swe_agent_traj(code: int, *, repeats: int = 3, tail: str = "\nextra line") -> dict:
    """A three-step SWE-agent ``.traj`` object: ``pytest`` (:data:`PYTEST_OBS`), ``cat x.py``
    (``def f<code>(): return <code>`` repeated ``repeats`` times, so two trajectories differ only
    where their ``code`` does), and ``pytest`` again (:data:`PYTEST_OBS` + ``tail``)."""
    return {"trajectory": [
        {"action": "pytest", "observation": PYTEST_OBS, "thought": "run"},
        {"action": "cat x.py", "observation": f"def f{code}():\n    return {code}\n" * repeats, "thought": "read"},
        {"action": "pytest", "observation": PYTEST_OBS + tail, "thought": "again"},
    ]}


def write_file(path: Path, content: object) -> Path:
    """Write ``content`` to ``path`` (parent folders created): a ``str`` as UTF-8 text, ``bytes`` as
    they are, anything else as JSON. Returns ``path``. The one file writer of the tests."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def generic_jsonl(observations: Sequence[str]) -> str:
    """The text of a generic-JSONL trajectory: per observation, an ``action`` record carrying an
    ``extra`` field (``{"kept": true}``) and the ``observation`` record (no turn numbers)."""
    rows = []
    for i, o in enumerate(observations):
        rows.append({"role": "action", "text": f"cmd {i}", "extra": {"kept": True}})
        rows.append({"role": "observation", "text": o})
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def write_jsonl_trajectory(path: Path, steps: Sequence[tuple[str, str]],
                           head: Sequence[tuple[str, str]] = ()) -> Path:
    """Write a generic-JSONL trajectory to ``path`` (parent folders created): the ``head`` records
    ``(role, text)`` at turn 0, then one ``action`` and one ``observation`` record per step
    ``(action, observation)``, turn by turn. Returns ``path``."""
    lines = [json.dumps({"role": role, "text": text, "turn": 0}) for role, text in head]
    for turn, (action, obs) in enumerate(steps):
        lines.append(json.dumps({"role": "action", "text": action, "turn": turn}))
        lines.append(json.dumps({"role": "observation", "text": obs, "turn": turn}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_locomo(path: Path, conversations: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]]) -> Path:
    """Write a LoCoMo-like file (``locomo10.json``'s shape) to ``path``: one sample
    ``conv-<n>`` per ``(turns, evidence)``; ``turns`` are the texts of one session's dialogue turns
    (ids ``D1:1``, ``D1:2``, ..., speakers alternating Ann and Bo), ``evidence`` one list of
    evidence ids per QA item. Returns ``path``."""
    doc = []
    for n, (turns, evidence) in enumerate(conversations, start=1):
        session = [{"speaker": ("Ann", "Bo")[i % 2], "dia_id": f"D1:{i + 1}", "text": t} for i, t in enumerate(turns)]
        doc.append({"sample_id": f"conv-{n}",
                    "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1 pm",
                                     "session_1": session},
                    "qa": [{"question": f"question {q}?", "answer": "x", "evidence": list(ev), "category": 1}
                           for q, ev in enumerate(evidence)]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, n: int, d: int, dup: float = 0.3, spread: tuple[float, float] = (0.02, 0.45)) -> np.ndarray:
    """``n`` unit rows in which about ``dup·n`` are noisy copies of others (distance spread by ``spread``)."""
    base = rng.standard_normal((n, d))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    k = int(n * dup)
    if k and n - k > 0:
        src = rng.integers(0, n - k, size=k)
        noise = rng.standard_normal((k, d))
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        amt = rng.uniform(*spread, size=k)[:, None]
        x = base[src] + amt * noise
        base[n - k :] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return base[rng.permutation(n)].astype(np.float32)


def definition_pi(e: np.ndarray, t: float, keys: np.ndarray | None = None) -> tuple[list[int], int]:
    """Algorithm 2 by its definition (SPEC §5), one arrival at a time, for the tests to compare
    against: the candidates of arrival ``i`` are the retained ``y < i`` (only those sharing a band
    key with ``i`` when ``keys``, one row of band keys per arrival, is given); ``π[i]`` is the
    lowest candidate whose float64 squared distance is ``<= 2 - 2t``, else ``i``. Returns ``π``
    as a list and the number of candidates looked at (the pairs the exact rule verifies)."""
    e64 = np.asarray(e, dtype=np.float64)
    d2 = 2.0 - 2.0 * t
    kept: list[int] = []
    pi: list[int] = []
    looked = 0
    for i in range(e64.shape[0]):
        cand = np.asarray(kept, dtype=np.int64)
        if keys is not None and cand.size:
            cand = cand[(keys[cand] == keys[i]).any(axis=1)]
        looked += int(cand.size)
        within = cand[((e64[cand] - e64[i]) ** 2).sum(axis=1) <= d2]
        pi.append(int(within[0]) if within.size else i)
        if pi[-1] == i:
            kept.append(i)
    return pi, looked


class GenericNumpy:
    """numpy under another identity: :mod:`lam_ref.codec` then takes its array-module-generic
    branches (its own bit packing instead of ``np.packbits``), exactly the code CuPy runs."""

    def __getattr__(self, name: str):
        return getattr(np, name)


#: Report keys that say how a run was done, not what it found: the timings, and the encoded and
#: reused window counts, which depend on the reuse scope (a serial run shares one encoding cache;
#: a Dask task reuses only within its file: SPEC §4.4).
RUN_KEYS = frozenset({"timings_s", "windows_encoded", "windows_reused", "encoding"})


def outcome(report):
    """``report`` (JSON-like) without the :data:`RUN_KEYS`, at any depth: what a run found."""
    if isinstance(report, dict):
        return {k: outcome(v) for k, v in report.items() if k not in RUN_KEYS}
    if isinstance(report, list):
        return [outcome(v) for v in report]
    return report


def outcome_lines(text: str) -> list[str]:
    """A command's printed lines without the one that counts encoded and reused windows."""
    return [ln for ln in text.splitlines() if not ln.startswith("encoding: ")]


#: The text SWE-agent 0.x puts after each observation in ``history`` (its ``next_step_template``).
SWE0_PROMPT = "\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"


def swe_agent_0x_file(observations: Sequence[str], *, last_in_history: bool = False) -> dict:
    """A SWE-agent 0.x ``.traj`` object as the agent writes it: ``trajectory`` steps and the
    ``history`` sent to the model (system prompt, issue, then per step the assistant message and a
    ``user`` message holding the observation inside the 0.x template, :data:`SWE0_PROMPT`; the last
    step's output is not in ``history`` unless ``last_in_history``)."""
    history: list[dict] = [{"role": "system", "content": "SETTING: you are an agent", "agent": "primary"},
                           {"role": "user", "content": "ISSUE: fix it" + SWE0_PROMPT, "agent": "primary"}]
    steps = []
    for i, obs in enumerate(observations):
        action = f"cmd {i}\n"
        history.append({"role": "assistant", "content": f"look\n```\n{action}```", "thought": "look",
                        "action": action, "agent": "primary"})
        if i < len(observations) - 1 or last_in_history:
            history.append({"role": "user", "content": obs + SWE0_PROMPT, "agent": "primary"})
        steps.append({"action": action, "observation": obs, "response": f"look\n```\n{action}```",
                      "state": "{\"open_file\": \"n/a\"}", "thought": "look"})
    return {"environment": "swe_main", "trajectory": steps, "history": history,
            "info": {"exit_status": "submitted", "submission": "diff"}}


def swe_agent_1x_file(observations: Sequence[str]) -> dict:
    """A SWE-agent 1.x ``.traj`` object: ``history`` with ``message_type`` and ``tool`` messages
    holding ``OBSERVATION:\\n<observation>``, and in every step ``messages``, the history the model
    was sent at that step (the outputs of the steps before it)."""
    history: list[dict] = [
        {"role": "system", "content": "SETTING: you are an agent", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "ISSUE: fix it", "agent": "main", "message_type": "observation"}]
    steps = []
    for i, obs in enumerate(observations):
        action = f"cmd {i}"
        steps.append({"action": action, "observation": obs, "response": "look", "thought": "look",
                      "execution_time": 0.5, "state": {"open_file": "n/a"}, "messages": [dict(m) for m in history]})
        history.append({"role": "assistant", "content": "look", "thought": "look", "action": action, "agent": "main",
                        "tool_calls": [{"id": f"call_{i}", "type": "function",
                                        "function": {"name": "bash", "arguments": json.dumps({"command": action})}}],
                        "message_type": "action"})
        history.append({"role": "tool", "content": "OBSERVATION:\n" + obs, "agent": "main",
                        "message_type": "observation", "tool_call_ids": [f"call_{i}"]})
    return {"trajectory": steps, "history": history, "info": {"exit_status": "submitted"},
            "replay_config": None, "environment": "main"}


def mini_swe_agent_file(observations: Sequence[str], *, cached_parts: int = 2) -> dict:
    """A mini-swe-agent ``.traj.json`` object: ``messages`` (system, task, then per step the
    assistant's command and the ``user`` message with ``<returncode>``/``<output>``); the last
    ``cached_parts`` messages hold their content as one text part with ``cache_control``, as
    mini-swe-agent writes them for Anthropic models."""
    msgs: list[dict] = [{"role": "system", "content": "You are a helpful assistant."},
                        {"role": "user", "content": "<pr_description>fix it</pr_description>"}]
    for i, obs in enumerate(observations):
        msgs.append({"role": "assistant", "content": f"THOUGHT: look\n\n```bash\ncmd {i}\n```"})
        msgs.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{obs}</output>"})
    for m in msgs[len(msgs) - cached_parts:]:
        m["content"] = [{"type": "text", "text": m["content"], "cache_control": {"type": "ephemeral"}}]
    return {"info": {"exit_status": "Submitted", "submission": ""}, "messages": msgs,
            "trajectory_format": "mini-swe-agent-1"}


def arc(*angles):
    """Unit rows on the first quarter circle at the given angles (radians), float64."""
    a = np.asarray(angles, dtype=np.float64)
    return np.stack([np.cos(a), np.sin(a)], axis=1)


#: Three rows at angles 0, 0.1, 0.2 and ``δ = 0.15``: neighbours are ``2 sin(0.05) ≈ 0.09996``
#: apart (within δ), the ends ``2 sin(0.1) ≈ 0.19967`` (beyond δ, within 2δ). Greedy keeps rows 0
#: and 2; the middle row covers all three (``N(δ) = 1``); at ``2δ`` greedy keeps row 0 alone.
CHAIN_T = 1.0 - 0.15**2 / 2


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``lam-ref ARGV`` in this process: (exit status, stdout, stderr)."""
    from lam_ref.cli import main

    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def swe_corpus(tmp_path: Path, n: int = 2) -> Path:
    """A folder ``runs/`` of ``n`` small SWE-agent trajectories (``t0.traj``, ...)."""
    d = tmp_path / "runs"
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (d / f"t{i}.traj").write_text(json.dumps(swe_agent_traj(i)))
    return d


def one_error_line(err: str) -> str:
    """The one ``: error: `` line of ``err`` (the hashing encoder's note aside); fails otherwise."""
    lines = [x for x in err.splitlines() if x.strip() and "hashing encoder" not in x.lower()]
    assert len(lines) == 1 and ": error: " in lines[0], f"one error line expected, got {err!r}"
    return lines[0]

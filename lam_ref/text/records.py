"""Records and trajectories: what every loader returns (SPEC §1; paper §2.2, App. B).

A **trajectory** is an ordered tuple of :class:`Record` s; a record has a role, its exact text, the
turn (agent step) it belongs to and its source location (file and JSON path). Only records whose
role is :data:`OBSERVATION` are compacted; all matching happens within one trajectory.

Loading errors are :class:`TrajectoryFormatError` (a :class:`~lam_ref.geometry.LamValueError`)
naming the file, the JSON path and the problem, so a batch run can report them per file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..geometry import LamValueError

__all__ = ["OBSERVATION", "Record", "Trajectory", "TrajectoryFormatError"]

#: The role of tool observations, the only records LAM compacts (SPEC §1).
OBSERVATION = "observation"


class TrajectoryFormatError(LamValueError):
    """A trajectory file that cannot be read: names the file, the JSON path and the problem.

    ``str(err)`` is ``"<path>: <json path>: <problem>"``, or ``"<path>: <problem>"`` when the
    problem is the whole file (JSON path ``$``); the parts are kept as attributes.
    """

    def __init__(self, path: str, json_path: str, problem: str) -> None:
        self.path = str(path)
        self.json_path = json_path
        self.problem = problem
        where = "" if json_path in ("$", "") else f"{json_path}: "
        super().__init__(f"{self.path}: {where}{problem}")


@dataclass(frozen=True)
class Record:
    """One message of a trajectory (SPEC §1).

    ``role``: ``"observation"`` for tool output (the only compacted role), else ``"system"``,
    ``"user"``, ``"thought"``, ``"action"``, ``"assistant"``, ...; ``text``: the exact text (a
    missing or null observation is ``""``, SPEC §3); ``turn``: the 0-based agent step whose
    arrivals the record belongs to; ``source``: ``"<file>:<json path>"``; ``name``: an optional
    speaker name (LoCoMo).
    """

    role: str
    text: str
    turn: int
    source: str
    name: str | None = None

    @property
    def is_observation(self) -> bool:
        return self.role == OBSERVATION

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "text": self.text, "turn": self.turn, "source": self.source}
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(frozen=True)
class Trajectory:
    """A loaded trajectory: ``id``, ``format`` (loader name), ``path`` and its ``records`` in order.

    ``meta`` holds format-specific extras (LoCoMo QA items with evidence record indices);
    ``warnings`` lists tolerated problems (LoCoMo's malformed evidence ids).
    """

    id: str
    format: str
    path: str
    records: tuple[Record, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def observation_indices(self) -> list[int]:
        """Indices of the observation records, in order."""
        return [i for i, r in enumerate(self.records) if r.is_observation]

    @property
    def observation_count(self) -> int:
        return sum(1 for r in self.records if r.is_observation)

    @property
    def turns(self) -> int:
        """Number of distinct turns (``max turn + 1``; 0 for an empty trajectory)."""
        return max((r.turn for r in self.records), default=-1) + 1

    def __len__(self) -> int:
        return len(self.records)

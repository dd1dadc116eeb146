"""Mutant: L0's seen-set is a plain map that already holds its prototype's names (``const seen = {}``
in JavaScript, ``hasattr`` in Python), so a line such as 'constructor' or '__init__' is dropped on its
first occurrence (SPEC §7.1: only lines kept earlier are dropped)."""

from __future__ import annotations

from ...hazards import PROTOTYPE_NAMES
from ._base2 import Base2, export

BUG = "seen-set is a plain object: prototype names count as seen"
VIOLATES = "L0"
CLASS = "key collision"
IDIOM = "JavaScript: const seen = {}; if (seen[line]) drop(); else seen[line] = true"
NEEDS = "a line equal to an Object.prototype or dunder name"
CAUGHT_BY: tuple[str, ...] = ("lines.key_collisions",)


class PlainObject(Base2):
    def new_seen(self):
        return {name.encode("utf-8") for name in PROTOTYPE_NAMES}


export(PlainObject(), globals())

r"""The Context Selection and Context Generation games (Context Compaction Theory, §3, Defs. 1–3).

A **game** fixes, before play, the possible item universes ``X`` (the *inputs*), the size of each
item, the query space ``Q``, a finite output space ``Out`` and the value function
``value(X, q, answer) ∈ [0, 1]``; the error of an answer is ``1 - value``. The budget ``B`` is a
separate argument of every function that plays or solves a game.

Conventions (the paper leaves them loose; these are ours, used everywhere in :mod:`lam_ref.cct`):

* **Inputs are tuples** of items in arrival order. A repeated item is a repeated entry, so a
  multiset universe (the same chunk seen twice) is expressible.
* **SELECT** (Definition 1, class ``SELECT``): a *selector* maps ``X`` to positions of ``X`` whose
  total size is at most ``B``; the *decoder* sees only the **unordered retained values** — the
  sorted tuple of retained items (a multiset: multiplicity kept, order and positions lost) — and
  the query. The decoder never sees ``X``, the positions, or anything else the selector knew.
* **GEN** (Definition 3, class ``GEN``): a *condenser* maps ``X`` to a message in
  ``{0,1}^{<=B}`` — every bit string of length at most ``B``, the empty string included, so
  ``2^{B+1} - 1`` messages — and the *interpreter* maps ``(message, q)`` to an answer. The
  interpreter is part of the algorithm object, built before any ``X`` is revealed, and
  :func:`play_gen` hands it only the message and the query. Budgets are in bits
  (``Σ = {0,1}``, the identification of §4.1).
* **Randomized** algorithms are finite mixtures of deterministic ones over public coins
  (:class:`Mixture`); their error on an input is the weighted mean of the components' errors.
* **Budgets** are integers ``>= 0`` for GEN (message length) and reals ``>= 0`` for SELECT (sum of
  sizes). A negative budget is a :class:`~lam_ref.geometry.LamValueError`.

Claims ``CCT-THM1`` (GEN ≡ one-way communication) and ``CCT-COR2`` (SELECT ≡ subset-encoding
protocols) are checked by playing these objects against the solvers of :mod:`lam_ref.cct.solvers`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..geometry import LamValueError

__all__ = [
    "Game",
    "GenAlgorithm",
    "Mixture",
    "SelectAlgorithm",
    "count_game",
    "function_game",
    "membership_game",
    "message_count",
    "message_from_index",
    "message_index",
    "messages",
    "output_set_game",
    "play_gen",
    "play_select",
    "retained_values",
    "validate_budget",
    "validate_bits_budget",
]

Item = Hashable
Input = tuple


def validate_budget(budget: Any, name: str = "budget") -> float:
    """A SELECT budget: a finite real ``>= 0`` (Definition 1 asks ``B > 0``; ``B = 0`` keeps nothing)."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float, np.integer, np.floating)):
        raise LamValueError(f"{name} must be a number >= 0, got {budget!r}")
    b = float(budget)
    if not math.isfinite(b) or b < 0:
        raise LamValueError(f"{name} must be a finite number >= 0, got {budget!r}")
    return b


def validate_bits_budget(budget: Any, name: str = "budget") -> int:
    """A GEN budget in bits: an integer ``>= 0`` (the message lies in ``{0,1}^{<=B}``)."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise LamValueError(f"{name} must be an integer number of bits >= 0, got {budget!r}")
    if int(budget) < 0:
        raise LamValueError(f"{name} must be >= 0 bits, got {int(budget)}")
    return int(budget)


# ---------------------------------------------------------------------------------------------
# messages: {0,1}^{<=B}
# ---------------------------------------------------------------------------------------------
def message_count(budget: int) -> int:
    """``|{0,1}^{<=B}| = 2^{B+1} - 1`` (the empty message included)."""
    b = validate_bits_budget(budget)
    return (1 << (b + 1)) - 1


def messages(budget: int) -> list[str]:
    """Every message of at most ``budget`` bits, shortest first: ``"", "0", "1", "00", ...``."""
    b = validate_bits_budget(budget)
    out = [""]
    for length in range(1, b + 1):
        out.extend("".join(bits) for bits in itertools.product("01", repeat=length))
    return out


def message_index(message: str) -> int:
    """The position of ``message`` in :func:`messages` order: ``2^len - 1 + int(message, 2)``."""
    if not isinstance(message, str) or any(c not in "01" for c in message):
        raise LamValueError(f"message must be a string of 0/1 characters, got {message!r}")
    return (1 << len(message)) - 1 + (int(message, 2) if message else 0)


def message_from_index(index: int) -> str:
    """Inverse of :func:`message_index`."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise LamValueError(f"index must be an integer >= 0, got {index!r}")
    length = (int(index) + 1).bit_length() - 1
    offset = int(index) - ((1 << length) - 1)
    return format(offset, f"0{length}b") if length else ""


# ---------------------------------------------------------------------------------------------
# games
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Game:
    """A finite game: possible inputs, item sizes, queries, outputs and the value function.

    Attributes:
        inputs: the possible item universes ``X`` (tuples of hashable items, arrival order).
        queries: the query space ``Q``.
        outputs: the finite output space ``Out`` the exact solvers search over.
        value: ``value(X, q, answer) -> [0, 1]`` (``v_q`` of Definitions 1 and 3).
        sizes: ``s(x) > 0`` per item (a mapping); items not listed have size ``default_size``.
        name: a label for tables and errors.
    """

    inputs: tuple[Input, ...]
    queries: tuple[Any, ...]
    outputs: tuple[Any, ...]
    value: Callable[[Input, Any, Any], float]
    sizes: dict[Any, float] = field(default_factory=dict)
    default_size: float = 1.0
    name: str = "game"

    def __post_init__(self) -> None:
        if not self.inputs:
            raise LamValueError(f"{self.name}: inputs must not be empty")
        if not self.queries:
            raise LamValueError(f"{self.name}: queries must not be empty")
        if not self.outputs:
            raise LamValueError(f"{self.name}: outputs must not be empty")
        for x, s in self.sizes.items():
            if not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0):
                raise LamValueError(f"{self.name}: size of item {x!r} must be a finite number > 0, got {s!r}")

    def size(self, item: Any) -> float:
        """``s(item)``."""
        return float(self.sizes.get(item, self.default_size))

    def cost(self, values: Sequence[Any]) -> float:
        """``Σ s(x)`` over retained values (sizes are additive, §3.1)."""
        return float(sum(self.size(v) for v in values))

    def value_table(self) -> np.ndarray:
        """``V[i, j, k] = value(inputs[i], queries[j], outputs[k])`` as float64, checked in [0, 1]."""
        v = np.empty((len(self.inputs), len(self.queries), len(self.outputs)), dtype=np.float64)
        for i, x in enumerate(self.inputs):
            for j, q in enumerate(self.queries):
                for k, a in enumerate(self.outputs):
                    v[i, j, k] = float(self.value(x, q, a))
        if not np.all(np.isfinite(v)) or v.min() < 0 or v.max() > 1:
            raise LamValueError(f"{self.name}: value must lie in [0, 1] for every (X, q, answer)")
        return v


def function_game(table: Any, *, name: str = "function") -> Game:
    """The game of a function ``f: [r] × [c] → [a]`` given as an integer table ``(r, c)``.

    Input ``i`` is the one-item universe ``("x{i}",)`` of size 1; query ``j`` is ``j``; the answer
    ``k`` has value 1 iff ``k == f[i, j]``. The induced one-way problem is ``f`` itself.
    """
    f = np.asarray(table)
    if f.ndim != 2 or f.size == 0 or f.dtype.kind not in "iu" or f.min() < 0:
        raise LamValueError(f"table must be a non-empty 2-D array of integers >= 0, got shape {f.shape} dtype {f.dtype}")
    r, c = f.shape
    lookup = {(f"x{i}",): i for i in range(r)}
    outs = tuple(range(int(f.max()) + 1))
    return Game(
        inputs=tuple((f"x{i}",) for i in range(r)),
        queries=tuple(range(c)),
        outputs=outs,
        value=lambda x, q, a: 1.0 if a == int(f[lookup[x], q]) else 0.0,
        name=name,
    )


def _power_set(n: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(i for i in range(n) if mask >> i & 1) for mask in range(1 << n))


def _check_n(n: Any, limit: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise LamValueError(f"n must be an integer >= 1, got {n!r}")
    if n > limit:
        raise LamValueError(
            f"n = {n} is too large for an explicit game (2^n inputs; limit n <= {limit}); "
            "use the closed forms of lam_ref.cct.theorems or the LP bounds instead"
        )
    return int(n)


def output_set_game(n: int, sizes: Sequence[float] | None = None) -> Game:
    """Theorem 3's game: ``Y = {0..n-1}``, ``X`` any subset of ``Y``, one query "output X".

    An answer (a frozenset) has value 1 iff it equals ``X``. Item sizes default to ``log2 n`` bits
    (Theorem 3); pass ``sizes`` for other encodings (claim ``CCT-KRAFT``). ``n <= 10``.
    """
    n = _check_n(n, 10)
    if sizes is None:
        sizes = [math.log2(n) if n > 1 else 1.0] * n
    if len(sizes) != n:
        raise LamValueError(f"sizes must have n = {n} entries, got {len(sizes)}")
    subsets = _power_set(n)
    return Game(
        inputs=subsets,
        queries=("X",),
        outputs=tuple(frozenset(s) for s in subsets),
        value=lambda x, q, a: 1.0 if a == frozenset(x) else 0.0,
        sizes={i: float(s) for i, s in enumerate(sizes)},
        name=f"output-set n={n}",
    )


def count_game(n: int, sizes: Sequence[float] | None = None) -> Game:
    """The "count ``|X|``" query over subsets of ``Y = {0..n-1}`` (answers ``0..n``; ``n <= 8``).

    Item sizes default to ``log2 n`` bits (as in Theorem 3; 1 bit when ``n = 1``)."""
    n = _check_n(n, 8)
    if sizes is None:
        sizes = [math.log2(n) if n > 1 else 1.0] * n
    if len(sizes) != n:
        raise LamValueError(f"sizes must have n = {n} entries, got {len(sizes)}")
    return Game(
        inputs=_power_set(n),
        queries=("count",),
        outputs=tuple(range(n + 1)),
        value=lambda x, q, a: 1.0 if a == len(x) else 0.0,
        sizes={i: float(s) for i, s in enumerate(sizes)},
        name=f"count n={n}",
    )


def membership_game(u: int, members: int) -> Game:
    """Membership at toy scale: ``X`` any ``members``-subset of ``U = {0..u-1}``, ``q ∈ U``,
    answer ``q ∈ X`` (booleans). Items have size 1; at most 24 inputs are allowed."""
    if isinstance(u, bool) or not isinstance(u, (int, np.integer)) or u < 1:
        raise LamValueError(f"u must be an integer >= 1, got {u!r}")
    if isinstance(members, bool) or not isinstance(members, (int, np.integer)) or not 0 <= members <= u:
        raise LamValueError(f"members must be an integer in [0, u = {u}], got {members!r}")
    if math.comb(u, members) > 24:
        raise LamValueError(
            f"membership_game: C({u}, {members}) = {math.comb(u, members)} inputs exceeds the toy limit 24"
        )
    return Game(
        inputs=tuple(itertools.combinations(range(u), members)),
        queries=tuple(range(u)),
        outputs=(False, True),
        value=lambda x, q, a: 1.0 if a == (q in x) else 0.0,
        name=f"membership u={u} N={members}",
    )


# ---------------------------------------------------------------------------------------------
# algorithms and play
# ---------------------------------------------------------------------------------------------
def retained_values(x: Input, positions: Sequence[int]) -> tuple:
    """The unordered retained values the SELECT decoder sees: ``sorted(X[p] for p in positions)``
    (by ``repr``, so any hashable items sort), multiplicity kept."""
    return tuple(sorted((x[p] for p in positions), key=repr))


@dataclass(frozen=True)
class SelectAlgorithm:
    """A SELECT algorithm: ``selector(X) -> positions of X``; ``decoder(values, q) -> answer``."""

    selector: Callable[[Input], Sequence[int]]
    decoder: Callable[[tuple, Any], Any]
    name: str = "select"


@dataclass(frozen=True)
class GenAlgorithm:
    """A GEN algorithm: ``condenser(X) -> bit string``; ``interpreter(message, q) -> answer``."""

    condenser: Callable[[Input], str]
    interpreter: Callable[[str, Any], Any]
    name: str = "gen"


@dataclass(frozen=True)
class Mixture:
    """A public-coin randomized algorithm: ``components`` are ``(weight, algorithm)`` pairs."""

    components: tuple[tuple[float, Any], ...]

    def __post_init__(self) -> None:
        w = [float(p) for p, _ in self.components]
        if not w or min(w) < 0 or not math.isclose(sum(w), 1.0, abs_tol=1e-9):
            raise LamValueError(f"Mixture weights must be >= 0 and sum to 1, got {w}")


def play_select(game: Game, alg: SelectAlgorithm, budget: float, x: Input, q: Any) -> float:
    """One round of the Context Selection Game; returns the error ``1 - v_q``.

    Raises :class:`LamValueError` when the selector returns positions outside ``X``, repeats a
    position, or exceeds the budget.
    """
    b = validate_budget(budget)
    pos = list(alg.selector(x))
    if len(set(pos)) != len(pos) or any(not (0 <= int(p) < len(x)) for p in pos):
        raise LamValueError(f"{alg.name}: selector returned invalid positions {pos} for an input of {len(x)} items")
    values = retained_values(x, pos)
    if game.cost(values) > b + 1e-9:
        raise LamValueError(f"{alg.name}: retained size {game.cost(values):g} exceeds the budget {b:g}")
    return 1.0 - float(game.value(x, q, alg.decoder(values, q)))


def play_gen(game: Game, alg: GenAlgorithm, budget: int, x: Input, q: Any) -> float:
    """One round of the Context Generation Game; returns the error ``1 - v_q``.

    The interpreter receives only the message and the query. Raises :class:`LamValueError` when
    the message is not a 0/1 string of at most ``budget`` bits.
    """
    b = validate_bits_budget(budget)
    msg = alg.condenser(x)
    if not isinstance(msg, str) or any(c not in "01" for c in msg):
        raise LamValueError(f"{alg.name}: the condenser must return a 0/1 string, got {msg!r}")
    if len(msg) > b:
        raise LamValueError(f"{alg.name}: message of {len(msg)} bits exceeds the budget {b}")
    return 1.0 - float(game.value(x, q, alg.interpreter(msg, q)))


def error_table(game: Game, alg: Any, budget: float) -> np.ndarray:
    """``err[i, j]`` of a SELECT, GEN or :class:`Mixture` algorithm on every (input, query)."""
    if isinstance(alg, Mixture):
        return sum(float(w) * error_table(game, a, budget) for w, a in alg.components)
    play = play_select if isinstance(alg, SelectAlgorithm) else play_gen
    if not isinstance(alg, (SelectAlgorithm, GenAlgorithm)):
        raise LamValueError(f"alg must be a SelectAlgorithm, GenAlgorithm or Mixture, got {type(alg).__name__}")
    return np.array([[play(game, alg, budget, x, q) for q in game.queries] for x in game.inputs], dtype=np.float64)


__all__ += ["error_table"]


#: Most (first-stage × second-stage) algorithm pairs :func:`best_by_play` enumerates.
PLAY_LIMIT = 60_000


def best_by_play(game: Game, mu: Any, budget: float, kind: str, *, limit: int = PLAY_LIMIT) -> tuple[float, Any]:
    """The game optimum by brute force: every deterministic algorithm of ``kind`` is built as a
    :class:`GenAlgorithm` (every condenser map ``X ↦ message`` and every interpreter table
    ``(message, q) ↦ answer``) or :class:`SelectAlgorithm` (every selector and every decoder
    table), played on every (input, query), and the least ``μ``-expected error is returned with
    its algorithm. This is the *game* side of Theorem 1 / Corollary 2 (claims ``CCT-THM1``,
    ``CCT-COR2``); :mod:`lam_ref.cct.solvers` computes the *protocol* side.

    Raises:
        LamValueError: more than ``limit`` algorithm pairs (use the solvers instead).
    """
    r, c = len(game.inputs), len(game.queries)
    w = np.full((r, c), 1.0 / (r * c)) if mu is None else np.asarray(mu, dtype=np.float64)
    if kind == "gen":
        b = validate_bits_budget(budget)
        msgs = messages(b)
        firsts = list(itertools.product(msgs, repeat=r))
        keys = msgs
    elif kind == "select":
        bud = validate_budget(budget)
        per_input = []
        for x in game.inputs:
            opts = [pos for k in range(len(x) + 1) for pos in itertools.combinations(range(len(x)), k)
                    if game.cost(retained_values(x, pos)) <= bud + 1e-9]
            per_input.append(opts)
        firsts = list(itertools.product(*per_input))
        keys = sorted({retained_values(x, pos) for x, opts in zip(game.inputs, per_input) for pos in opts}, key=repr)
    else:
        raise LamValueError(f"kind must be 'gen' or 'select', got {kind!r}")
    tables = list(itertools.product(range(len(game.outputs)), repeat=len(keys) * c))
    if len(firsts) * len(tables) > limit:
        raise LamValueError(
            f"{game.name}: {len(firsts)} x {len(tables)} algorithms exceed the play limit {limit}; "
            "use lam_ref.cct.solvers (exhaustive partitions or milp) instead"
        )
    kidx = {k: i for i, k in enumerate(keys)}
    best, best_alg = math.inf, None
    for first in firsts:
        for tab in tables:
            def decode(key, q, tab=tab):
                return game.outputs[tab[kidx[key] * c + game.queries.index(q)]]

            if kind == "gen":
                cmap = dict(zip(game.inputs, first))
                alg: Any = GenAlgorithm(lambda x, cmap=cmap: cmap[x], decode)
            else:
                smap = dict(zip(game.inputs, first))
                alg = SelectAlgorithm(lambda x, smap=smap: smap[x], decode)
            err = float((error_table(game, alg, budget) * w).sum())
            if err < best - 1e-12:
                best, best_alg = err, alg
    return best, best_alg


__all__ += ["PLAY_LIMIT", "best_by_play"]

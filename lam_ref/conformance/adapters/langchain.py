"""langchain-community's ``EmbeddingsRedundantFilter`` in the kept-set form (SPEC §15.5).

The filter takes an ``Embeddings`` object and documents; a document whose ``state`` already holds
``"embedded_doc"`` is not embedded again (the library's own reuse path, used when transformers
are chained). The adapter gives it a real encoder (lam_ref's test encoder as ``Embeddings``) and
documents carrying the suite's rows in that state, runs ``transform_documents`` with
``similarity_threshold = t`` and returns the rows it keeps. It names no witness. The similarity
matrix is exhaustive, so the adapter declares ``COMPLETE = True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import TestEncoder, require, version_of

_filters = require("langchain_community.document_transformers.embeddings_redundant_filter", "langchain-community",
                   "langchain")
_embeddings = require("langchain_core.embeddings", "langchain-core", "langchain")

NAME = "langchain-community EmbeddingsRedundantFilter"
__version__ = version_of("langchain-community")
COMPLETE = True
PROFILES = {"kept-set", "kept-set-f32"}


class TestEmbeddings(_embeddings.Embeddings):
    """lam_ref's deterministic test encoder (SPEC §4.3) as a langchain ``Embeddings``."""

    def __init__(self) -> None:
        self._encoder = TestEncoder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encoder.encode(texts).astype(np.float64).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def kept(embeddings: Any, t: float) -> np.ndarray:
    """SPEC §15.5 kept-set form: the rows ``EmbeddingsRedundantFilter`` keeps at ``similarity_threshold = t``."""
    e = np.asarray(embeddings)
    docs = [_filters._DocumentWithState(page_content=str(i), state={"embedded_doc": e[i].tolist()}) for i in range(e.shape[0])]
    flt = _filters.EmbeddingsRedundantFilter(embeddings=TestEmbeddings(), similarity_threshold=float(t))
    out = flt.transform_documents(docs)
    return np.array(sorted(int(d.page_content) for d in out), dtype=np.int64)

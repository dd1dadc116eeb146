"""Shipped adapters: the conformance suite run against the semantic-deduplication libraries people use.

Each adapter wraps one library in the kept-set form (SPEC §15.5): ``kept(embeddings, t)`` feeds
the suite's rows to the library as precomputed embeddings (each library's own way of taking
them) and returns the rows it keeps, with the witness it names where it names one. The library
still gets a real encoder object where its API needs one (lam_ref's deterministic test encoder,
SPEC §4.3); it is never asked to encode the suite's rows.

``lam-ref conform --impl NAME`` accepts the short names of :data:`ADAPTERS`. A library that is not
installed stops the run before any check with one line naming the package (exit 2).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import types
from typing import Any

from ...geometry import LamValueError

__all__ = ["ADAPTERS", "MissingLibrary", "TestEncoder", "require", "resolve_adapter"]

#: Short name -> (module, the pip package it needs, the lam_ref extra that installs it).
ADAPTERS: dict[str, tuple[str, str, str]] = {
    "semhash": ("lam_ref.conformance.adapters.semhash", "semhash", "semhash"),
    "semhash-ann": ("lam_ref.conformance.adapters.semhash_ann", "semhash", "semhash"),
    "langchain": ("lam_ref.conformance.adapters.langchain", "langchain-community", "langchain"),
}


class MissingLibrary(LamValueError):
    """The library an adapter wraps is not installed (a usage error: exit 2, one line)."""


def require(module: str, package: str, extra: str) -> types.ModuleType:
    """Import ``module`` or raise :class:`MissingLibrary` naming ``package`` in one line."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingLibrary(
            f"this adapter needs the package {package!r}, which is not installed ({exc.name or module} cannot be "
            f"imported): pip install {package}, or install lam_ref with the [{extra}] extra"
        ) from None


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def resolve_adapter(spec: str) -> str:
    """The module of a short adapter name (``semhash`` -> ``lam_ref.conformance.adapters.semhash``); other specs unchanged."""
    entry = ADAPTERS.get(spec)
    return entry[0] if entry is not None else spec


class TestEncoder:
    """lam_ref's deterministic test encoder (SPEC §4.3) with the ``encode(texts) -> float32[n, D]``
    method both libraries' encoder protocols call (semhash's ``Encoder``; wrapped for langchain)."""

    __test__ = False  # not a pytest test class

    def __init__(self, dim: int = 256) -> None:
        from ...text.encoders import HashingEncoder

        self._encoder = HashingEncoder(dim)

    def encode(self, sentences: Any, **kwargs: Any) -> Any:
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        return self._encoder.encode(texts)

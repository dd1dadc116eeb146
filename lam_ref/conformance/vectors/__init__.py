"""Language-neutral test vectors, one JSON file per profile (``docs/vectors.md``; issue 21 §4).

Each file (``core.json``, ``online.json``, ``l0.json``, ``l0-stubs.json``, ``codec-bound.json``,
``codec-v1.json``, ``session-v1.json``) is a document with ``"schema":
"lam_ref.conformance.vectors"`` and ``"schema_version": 1``, valid against ``lam_ref/schemas/lam_ref.conformance.vectors.schema.json`` (JSON
Schema draft 2020-12). Like Project Wycheproof's files, every vector has an ``id``, a
``comment``, ``flags`` naming the bug classes it targets (explained in the file's ``notes``), a
``result`` (``valid``: the expected output is required; ``invalid``: the input must be refused
with ``ValueError``; ``acceptable``: the expected output, one of the ``alternatives``, or a
refusal when ``may_reject``), the ``spec`` anchor, the ``op`` and its ``input``.

* :func:`load_vectors` reads and validates a file (a malformed file: one
  :class:`~lam_ref.geometry.LamValueError` naming it);
* :func:`run_vectors` runs a profile's vectors against an implementation and returns the failures;
* :mod:`lam_ref.conformance.checks.vectors` registers them as the conformance checks ``vectors.<profile>``;
* :mod:`.generate` writes the files from the exact definitions;
* ``consumer.mjs`` runs the ``core`` and ``l0`` files in JavaScript, without Python.
"""

from __future__ import annotations

from .run import (
    PROFILE_CHECKS,
    PROFILES,
    VectorFailure,
    declared_profiles,
    load_vectors,
    run_vector,
    run_vectors,
    vector_path,
)

__all__ = [
    "PROFILES",
    "PROFILE_CHECKS",
    "VectorFailure",
    "declared_profiles",
    "load_vectors",
    "run_vector",
    "run_vectors",
    "vector_path",
]

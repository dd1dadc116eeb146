"""JSON documents lam_ref writes and reads: one schema mechanism, one id convention (SPEC §10, §15).

Every JSON document lam_ref writes for others to read carries two keys at its top level::

    {"schema": "<name>", "schema_version": <int>, ...}

and is described by a JSON Schema (draft 2020-12) shipped in this package as
``lam_ref/schemas/<name>.schema.json``, validated with the ``jsonschema`` package. Today:

| name | written by | contract |
|---|---|---|
| ``lam_ref.conformance.report`` | ``lam-ref conform --json``, ``pytest --lam-report`` | docs/conformance.md |
| ``lam_ref.determinism.report`` | ``lam-ref determinism probe`` / ``matrix`` | docs/determinism.md |
| ``lam_ref.conformance.vectors`` | ``python -m lam_ref.conformance.vectors.generate`` (the test-vector files) | docs/vectors.md |
| ``lam_ref.audit.report`` | ``lam-ref audit --json`` (:func:`lam_ref.audit.audit_output`) | docs/audit.md |

A schema file's ``properties.schema`` is ``{"const": "<name>"}`` and its
``properties.schema_version`` lists the versions it describes (``const`` or ``enum``).
Compatible additions keep the version; anything else bumps it, and the reader of the old version
migrates it before validating (e.g. :func:`lam_ref.determinism.report.load_report`).

API (for new document kinds, e.g. conformance test vectors: drop ``<name>.schema.json`` here)::

    from lam_ref import schemas
    schemas.names()                       # the shipped schema names
    schemas.load("lam_ref.conformance.report")       # the schema as a dict (cached; do not mutate)
    schemas.errors(doc, name)             # every violation, one line each ([] when valid)
    schemas.validate(doc, name, where="report 'r.json'")   # raises SchemaError on the first one

Messages are one line, ``<where>: <field>: <problem>`` (``<where>: <problem>`` at the top level), with the field as a path
(``runs[3].deleted``) and values shortened, e.g.
``report 'r.json': runs[0]: missing key 'map_digest'`` or
``report 'r.json': schema: 'x' is not 'lam_ref.determinism.report'``, or
``report 'r.json': missing key 'runs'``. :class:`SchemaError` is a
:class:`lam_ref.geometry.LamValueError`, so the command line reports it as a usage error (exit 2).
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from ..geometry import LamValueError, short_repr

__all__ = ["SUFFIX", "SchemaError", "errors", "load", "names", "validate"]

#: File name suffix of a shipped schema (``<name>.schema.json``).
SUFFIX = ".schema.json"
_MAX_VALUE = 60


class SchemaError(LamValueError):
    """A document departs from its schema (one line naming the document and the field)."""


def names() -> list[str]:
    """The names of the shipped schemas, sorted."""
    return sorted(f.name[: -len(SUFFIX)] for f in resources.files(__name__).iterdir() if f.name.endswith(SUFFIX))


@functools.cache
def _load(name: str) -> dict[str, Any]:
    f = resources.files(__name__) / f"{name}{SUFFIX}"
    if not f.is_file():
        raise LamValueError(f"schema {name!r} is not one of lam_ref's schemas ({', '.join(names())})")
    doc = json.loads(f.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(doc)  # a broken shipped schema fails loudly, not as a pass
    return doc


def load(name: str) -> dict[str, Any]:
    """The schema ``name`` as a dict (a copy: callers may change it)."""
    return copy.deepcopy(_load(name))


@functools.cache
def _validator(name: str) -> Any:
    return Draft202012Validator(_load(name))


def _field(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _message(err: Any) -> str:
    """One line for a jsonschema error, without the whole offending value."""
    v, kind, arg = err.instance, err.validator, err.validator_value
    if kind == "required":
        missing = [k for k in arg if isinstance(v, dict) and k not in v]
        return f"missing key {missing[0]!r}" if missing else err.message
    if kind in ("additionalProperties", "unevaluatedProperties") and isinstance(v, dict):
        known = set(err.schema.get("properties", {}))
        extra = sorted(k for k in v if k not in known)
        return f"unknown key {extra[0]!r}" if extra else "unknown key"
    if kind == "type":
        want = "/".join(arg) if isinstance(arg, list) else arg
        return f"has type {type(v).__name__}, expected {want}"
    if kind == "const":
        return f"{short_repr(v, _MAX_VALUE)} is not {arg!r}"
    if kind == "not":
        return f"{short_repr(v, _MAX_VALUE)} is refused: {err.schema.get('description', 'a value this schema excludes')}"
    if kind == "enum":
        return f"{short_repr(v, _MAX_VALUE)} is not one of {', '.join(map(repr, arg))}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "minItems", "maxItems",
                "minLength", "maxLength", "pattern"):
        return f"{short_repr(v, _MAX_VALUE)} fails {kind} {arg!r}"
    msg = " ".join(str(err.message).split())
    return msg if len(msg) <= 160 else msg[:157] + "..."


def _sort_key(err: Any) -> tuple[int, list[str]]:
    # the id keys first (a foreign document says so before anything else), then document order
    top = str(err.absolute_path[0]) if err.absolute_path else ""
    if not err.absolute_path and err.validator == "required" and isinstance(err.instance, dict):
        top = next((k for k in err.validator_value if k not in err.instance), "")
    return (0 if top in ("schema", "schema_version") else 1, [str(p) for p in err.absolute_path])


def errors(doc: Any, name: str) -> list[str]:
    """Every way ``doc`` departs from schema ``name``, one line each (``field: problem``); ``[]`` when valid."""
    found = sorted(_validator(name).iter_errors(doc), key=_sort_key)
    return [f"{_field(e.absolute_path)}: {_message(e)}" if e.absolute_path else _message(e) for e in found]


def validate(doc: Any, name: str, *, where: str = "document") -> None:
    """Raise :class:`SchemaError` (``<where>: <field>: <problem>``) at the first departure from schema ``name``."""
    errs = errors(doc, name)
    if errs:
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        raise SchemaError(f"{where}: {errs[0]}{more}")

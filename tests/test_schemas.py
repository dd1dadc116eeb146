"""lam_ref.schemas: the one schema mechanism (issue 20 item 3): the shipped JSON Schemas and their id
convention, and validation errors as one line naming the document and the field."""

from __future__ import annotations

import pytest

from lam_ref import schemas


def test_every_shipped_schema_is_a_valid_draft_2020_12_schema_with_the_id_convention():
    """Each ``lam_ref/schemas/*.schema.json`` is a valid JSON Schema whose ``schema`` property is the
    file's name and whose ``schema_version`` is an integer const/enum (one id convention)."""
    from jsonschema import Draft202012Validator

    names = schemas.names()
    assert {"lam_ref.conformance.report", "lam_ref.determinism.report", "lam_ref.determinism.matrix"} <= set(names), names
    for name in names:
        s = schemas.load(name)
        Draft202012Validator.check_schema(s)
        assert s["properties"]["schema"] == {"const": name}, f"{name}: properties.schema must be const {name!r}"
        ver = s["properties"]["schema_version"]
        vals = [ver["const"]] if "const" in ver else ver.get("enum", [])
        assert vals and all(isinstance(v, int) for v in vals), f"{name}: schema_version must list integers, got {ver}"
        assert {"schema", "schema_version"} <= set(s["required"]), f"{name}: the id keys must be required"


@pytest.mark.parametrize(
    "doc, fragment",
    [
        ({"schema": "lam_ref.determinism.matrix"}, "doc 'x.json': missing key 'schema_version'"),
        ({"schema": "other", "schema_version": 1}, "doc 'x.json': schema: 'other' is not 'lam_ref.determinism.matrix'"),
        ([1, 2], "doc 'x.json': has type list, expected object"),
    ],
)
def test_validate_raises_one_line_naming_the_document_and_field(doc, fragment):
    """schemas.validate: one line ``<where>: <field>: <problem>``, the id keys reported first."""
    with pytest.raises(schemas.SchemaError) as exc:
        schemas.validate(doc, "lam_ref.determinism.matrix", where="doc 'x.json'")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(fragment), f"got {msg!r}, expected it to start with {fragment!r}"


def test_unknown_schema_name_is_refused():
    with pytest.raises(schemas.SchemaError.__mro__[1], match="schema 'nope' is not one of lam_ref's schemas"):
        schemas.validate({}, "nope")


def test_long_values_are_shortened_in_messages():
    """A wrong value is quoted at most ~60 characters long: the message stays one readable line."""
    errs = schemas.errors({"schema": "x" * 500, "schema_version": 1}, "lam_ref.determinism.matrix")
    assert errs and len(errs[0]) < 200 and "..." in errs[0], errs[:1]

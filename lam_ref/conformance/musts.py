"""Every MUST has a check, by construction (issue 38 §1): the MUST table of docs/spec.md and docs/codec.md.

:func:`extract` reads the two pages and returns every normative sentence — one holding ``MUST``,
``MUST NOT``, ``refuses`` or ``is/are refused`` — with the anchor of its section. The table
``lam_ref/conformance/musts.json`` gives each sentence (verbatim) an ``id`` and what can fail on it:

* ``checks``: conformance check ids (:data:`lam_ref.conformance.registry.CHECKS`);
* ``vectors``: ``profile:Flag`` (every vector of ``profile.json`` carrying the flag) or
  ``profile#id`` (one vector);
* ``tests``: for rules that bind lam_ref itself rather than an implementation under test (the
  pipeline, the CLI, reports), ``tests/file.py::test_name`` of lam_ref's own suite.

:func:`problems` lists, one line each, a sentence of the pages without an entry or with an entry
that names nothing, an entry whose sentence no longer exists (matched by :func:`normalise`), and a
check, vector or test that does not exist; ``tests/conformance/test_outsider.py`` requires none.
``python -m lam_ref.conformance.musts --write`` adds the new sentences (their candidates: the
checks and vectors citing their section) and drops the stale ones; ``--check`` prints the problems.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["DOCS", "TABLE", "Sentence", "extract", "load_table", "normalise", "problems", "write_table"]

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose MUST sentences the table covers.
DOCS = ("docs/spec.md", "docs/codec.md")
TABLE = Path(__file__).resolve().parent / "musts.json"
#: What makes a sentence normative here.
KEYWORDS = re.compile(r"\bMUST\b|\brefuses\b|\b(?:is|are) refused\b")
_ANCHOR = re.compile(r"\{#([a-z0-9-]+)\}\s*$")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|App|eq|Fig|Sec|resp)\.$")

Sentence = tuple[str, str, str]  # (doc, anchor, sentence)


def normalise(text: str) -> str:
    """The form sentences are matched by: no markdown emphasis or link targets, one space, lowercase."""
    t = re.sub(r"\]\([^)]*\)", "]", text)
    t = re.sub(r"[*_`\[\]]", "", t)
    return " ".join(t.split()).strip(" .;:").lower()


def _blocks(text: str) -> list[tuple[str, str]]:
    """(anchor, text) of each paragraph, list item and table row outside code fences."""
    out: list[tuple[str, str]] = []
    anchor, cur, fence = "", [], False

    def flush() -> None:
        if cur:
            out.append((anchor, " ".join(s.strip() for s in cur)))
            cur.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            flush()
            fence = not fence
            continue
        if fence:
            continue
        if line.startswith("#"):
            flush()
            m = _ANCHOR.search(line)
            # an explicit {#anchor}, else the heading's slug as the docs build makes it
            anchor = m.group(1) if m else re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", line.lstrip("#").strip().lower()))
            continue
        stripped = line.strip()
        if not stripped:
            flush()
        elif stripped.startswith("|"):
            flush()
            out.append((anchor, stripped))
        elif re.match(r"([-*]|\d+\.)\s", stripped):
            flush()
            cur.append(re.sub(r"^([-*]|\d+\.)\s+", "", stripped))
        else:
            cur.append(stripped)
    flush()
    return out


def _sentences(block: str) -> list[str]:
    """Split at '. ', '! ', '? ' or ': ' ending a clause before a capital or a markdown start, not after an abbreviation."""
    parts, start = [], 0
    for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z`(*\[\\])", block):
        head = block[start : m.start()]
        if _ABBREV.search(head) or re.search(r"(?:^|\s)[A-Z]\.$|\d\.$|§\d+(\.\d+)*\.$", head):
            continue
        parts.append(head.strip())
        start = m.end()
    parts.append(block[start:].strip())
    return [p for p in parts if p]


def extract(root: Path = ROOT) -> list[Sentence]:
    """Every normative sentence of :data:`DOCS`, in page order, with its section anchor."""
    found: list[Sentence] = []
    for doc in DOCS:
        for anchor, block in _blocks((root / doc).read_text(encoding="utf-8")):
            for s in _sentences(block):
                if KEYWORDS.search(s):
                    found.append((doc, anchor, s))
    return found


def sentence_id(doc: str, anchor: str, sentence: str) -> str:
    """A stable id: the page, the section anchor and a hash of the normalised sentence."""
    page = Path(doc).stem
    return f"{page}#{anchor or 'top'}/{hashlib.sha1(normalise(sentence).encode()).hexdigest()[:6]}"


def load_table(path: Path = TABLE) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["musts"]


# ------------------------------------------------------------------------------------------------
# what exists: checks, vectors, tests
# ------------------------------------------------------------------------------------------------
def _check_ids() -> set[str]:
    from .registry import CHECKS

    return {c.id for c in CHECKS}


def _vector_refs() -> set[str]:
    from .vectors.run import PROFILES, load_vectors

    refs: set[str] = set()
    for p in PROFILES:
        for v in load_vectors(p)["vectors"]:
            refs.add(f"{p}#{v['id']}")
            refs.update(f"{p}:{f}" for f in v["flags"])
    return refs


def _test_exists(ref: str, root: Path) -> bool:
    file, _, name = ref.partition("::")
    path = root / file
    if not name or not path.is_file():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name.split("[")[0] for n in ast.walk(tree))


def problems(root: Path = ROOT, table: list[dict[str, Any]] | None = None) -> list[str]:
    """Every way the table and the pages disagree, one line each; ``[]`` when every MUST has a check."""
    table = load_table() if table is None else table
    sentences = extract(root)
    by_norm = {normalise(s): (d, a, s) for d, a, s in sentences}
    entries = {normalise(e["sentence"]): e for e in table}
    checks, vectors = _check_ids(), _vector_refs()
    out: list[str] = []
    for d, a, s in sentences:
        e = entries.get(normalise(s))
        if e is None:
            out.append(f"{d}#{a}: no entry for the sentence {s[:100]!r} (run python -m lam_ref.conformance.musts --write)")
        elif not (e.get("checks") or e.get("vectors") or e.get("tests")):
            out.append(f"{e['id']}: no check, vector or test can fail on {s[:100]!r}")
    seen_ids: set[str] = set()
    for e in table:
        if e["id"] in seen_ids:
            out.append(f"{e['id']}: duplicate id")
        seen_ids.add(e["id"])
        if normalise(e["sentence"]) not in by_norm:
            out.append(f"{e['id']}: its sentence no longer exists in {e['doc']}: {e['sentence'][:100]!r}")
        out += [f"{e['id']}: unknown check {c!r}" for c in e.get("checks", []) if c not in checks]
        out += [f"{e['id']}: unknown vector {v!r} (profile:Flag or profile#id)" for v in e.get("vectors", []) if v not in vectors]
        out += [f"{e['id']}: unknown test {t!r}" for t in e.get("tests", []) if not _test_exists(t, ROOT)]
    return out


def _candidates(anchor: str) -> tuple[list[str], list[str]]:
    """The checks whose spec item cites the section of ``anchor`` and the flags of its vectors."""
    from .registry import CHECKS
    from .vectors.run import PROFILES, load_vectors

    num = re.match(r"s(\d+)", anchor or "")
    checks = []
    if num:
        sec = num.group(1)
        checks = [c.id for c in CHECKS if re.search(rf"§{sec}(?![\d])", c.spec)]
    flags = sorted({f"{p}:{f}" for p in PROFILES for v in load_vectors(p)["vectors"]
                    if v["spec"] == f"docs/spec.md#{anchor}" for f in v["flags"]})
    return checks, flags


def write_table(path: Path = TABLE, root: Path = ROOT) -> tuple[int, int]:
    """Keep the entries whose sentence still exists, add the new sentences with their candidates;
    returns (added, dropped)."""
    old = {normalise(e["sentence"]): e for e in (load_table(path) if path.exists() else [])}
    rows, added = [], 0
    for d, a, s in extract(root):
        e = old.pop(normalise(s), None)
        if e is None:
            checks, vectors = _candidates(a)
            e = {"id": sentence_id(d, a, s), "checks": checks, "vectors": vectors, "tests": []}
            added += 1
        rows.append({"id": e["id"], "doc": d, "anchor": a, "sentence": s, "checks": e.get("checks", []),
                     "vectors": e.get("vectors", []), "tests": e.get("tests", [])})
    doc = {"schema": "lam_ref.conformance.musts", "generator": "python -m lam_ref.conformance.musts --write",
           "docs": list(DOCS), "musts": rows}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return added, len(old)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        added, dropped = write_table()
        print(f"{TABLE.name}: {added} sentence(s) added, {dropped} stale entr{'y' if dropped == 1 else 'ies'} dropped")
        return 0
    if args in ([], ["--check"]):
        found = problems()
        for line in found:
            print(line)
        print(f"{len(load_table())} MUST sentences; {len(found)} problem(s)")
        return 1 if found else 0
    print("usage: python -m lam_ref.conformance.musts [--check | --write]", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

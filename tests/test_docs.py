"""The docs site: the rules live in the repository (docs/spec.md), formulas render, every page is
in the navigation once (spec §1–§16 are the sections of docs/spec.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", "site", "node_modules", "__pycache__", ".hypothesis", "build", "dist", "mutants"}
TEXT_SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".txt", ".c", ".h", ".cfg", ".in", ".js", ".css", ""}
#: ``../shared`` followed by anything but its data folder, or the external spec file by name.
RULE_REF = re.compile(r"\.\./shared(?!/data)|\bshared/SPEC|\bSPEC\.md\b|shared/seeds")


def _repo_files():
    """The repository's text files: in a git checkout those git tracks or would track (so build
    outputs it ignores, such as mutmut's ``mutants/`` copy, are not read); elsewhere a walk."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
        names = [Path(ROOT, n) for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
            names.extend(Path(dirpath, name) for name in filenames)
    for p in names:
        if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name == "Makefile"):
            yield p


def test_no_rule_reference_outside_the_repository():
    """Nothing in the repository sends a reader to ``../shared`` (or the external SPEC.md) for a
    rule; only the default location of the shared *data* (``../shared/data``) may be named."""
    me = Path(__file__).resolve()
    hits = []
    for p in _repo_files():
        if p.resolve() == me:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if RULE_REF.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "rule references outside the repository (link docs/spec.md instead):\n" + "\n".join(hits)


def test_the_pattern_catches_rule_references_and_spares_data_paths():
    """The grep above is not vacuous: it flags the forms a rule reference takes and passes data paths."""
    for bad in ("see ../shared/SPEC.md §7", "(`../shared/SPEC.md`)", "the paper ../shared/seeds/000.txt", "SPEC.md §2"):
        assert RULE_REF.search(bad), f"pattern misses {bad!r}"
    for ok in ("../shared/data/swe-agent-trajectories", "SPEC §7", "docs/spec.md#s7"):
        assert not RULE_REF.search(ok), f"pattern flags {ok!r}"


def test_spec_has_every_section_anchor():
    """docs/spec.md carries sections §1–§16 with the anchors ``#s1``…``#s16`` that code and docs cite."""
    text = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
    for n in range(1, 17):
        assert re.search(rf"^## {n}\. .*\{{#s{n}\}}\s*$", text, re.M), f"docs/spec.md lacks section {n} with anchor #s{n}"


def test_doc_links_to_spec_anchors_exist():
    """Every ``spec.md#anchor`` link in docs/ and README.md names an anchor docs/spec.md defines."""
    spec = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r"\{#([A-Za-z0-9_-]+)\}", spec))
    assert len(anchors) > 30, f"docs/spec.md defines only {len(anchors)} anchors"
    bad = []
    for p in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        for m in re.finditer(r"spec\.md#([A-Za-z0-9_-]+)", p.read_text(encoding="utf-8")):
            if m.group(1) not in anchors:
                bad.append(f"{p.name}: #{m.group(1)}")
    assert not bad, f"links to anchors docs/spec.md does not define: {bad}"


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for v in item.values():
                out.extend(_nav_pages(v) if isinstance(v, list) else [v])
    return out


def test_every_page_is_in_the_navigation_once():
    """One navigation entry per page: each page under docs/ (and the generated claims and API
    pages) is listed exactly once; the per-test-file pages are reached from the claims page."""
    cfg = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    pages = _nav_pages(cfg["nav"])
    dupes = {p for p in pages if pages.count(p) > 1}
    assert not dupes, f"pages listed twice in the navigation: {dupes}"
    want = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")} | {"claims.md", "reference/api.md"}
    missing = want - set(pages)
    assert not missing, f"pages missing from mkdocs.yml nav: {sorted(missing)}"
    titles = [next(iter(i)) for i in cfg["nav"] if isinstance(i, dict)]
    assert len(titles) == len(set(titles)), f"repeated navigation titles: {titles}"


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The strictly built site: ``$LAM_DOCS_SITE`` when ``make test`` has just built it (so the
    suite does not build it twice), else a fresh build into a temporary folder."""
    given = os.environ.get("LAM_DOCS_SITE")
    if given and (Path(given) / "claims" / "index.html").is_file():
        return Path(given)
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs is not installed (pip install -e .[docs])")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    # this interpreter runs mkdocs (a console script's shebang may name another environment)
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-3000:]}"
    return out


def test_built_pages_load_mathjax_and_mark_math(built_site):
    """The claims page's formulas are marked for MathJax and the page loads MathJax and its
    settings (the formulas would otherwise show as raw ``\\[ ... \\]``)."""
    html = (built_site / "claims" / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
    assert any(re.search(r"mathjax@3/es5/tex-mml-chtml\.js$", s) for s in scripts), f"no MathJax script: {scripts}"
    assert any(s.endswith("javascripts/mathjax.js") for s in scripts), f"no MathJax settings script: {scripts}"
    assert html.count('class="arithmatex"') >= 10, "the claims' statements are not marked as math"
    assert 'href="../spec/#s2-merge"' in html, "the claims page must link each claim to its rule in docs/spec.md"
    assert "SPEC §" not in re.sub(r"<[^>]+>", "", html).replace("spec §", ""), "a bare SPEC § reference is left unlinked"
    settings = (built_site / "javascripts" / "mathjax.js").read_text(encoding="utf-8")
    assert 'processHtmlClass: "arithmatex"' in settings, "MathJax must typeset the arithmatex blocks"


def test_built_navigation_has_no_repeated_entry(built_site):
    """The rendered primary navigation links each page once (no second "lam_ref" or "Claims")."""
    html = (built_site / "index.html").read_text(encoding="utf-8")
    primary = html[html.index("md-nav--primary"):]
    hrefs = re.findall(r'<a href="([^"#][^"]*)" class="md-nav__link', primary)
    assert len(hrefs) >= 10, f"too few navigation links found in the built index page: {hrefs}"
    dupes = {h for h in hrefs if hrefs.count(h) > 1}
    assert not dupes, f"navigation links a page twice: {dupes}: {hrefs}"
    assert not any("claims/tests/" in h for h in hrefs), "per-test-file pages belong to the claims page, not the navigation"

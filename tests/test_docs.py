"""The docs site: the rules live in the repository (docs/spec.md), formulas render, every page is
in the navigation once (spec §1–§16 are the sections of docs/spec.md)."""

from __future__ import annotations

import os
import re
import shutil
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


_SITE: list[Path] = []


def site_dir(tmp_root: Path) -> Path:
    """The strictly built site: ``$LAM_DOCS_SITE`` when ``make test`` has just built it (so the
    suite does not build it twice), else one fresh build into ``tmp_root`` per test session
    (shared with tests/test_docs_browser.py)."""
    given = os.environ.get("LAM_DOCS_SITE")
    if given and (Path(given) / "claims.html").is_file():
        return Path(given).resolve()
    if _SITE:
        return _SITE[0]
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs is not installed (pip install -e .[docs])")
    out = tmp_root / "site"
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1")
    # this interpreter runs mkdocs (a console script's shebang may name another environment)
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-3000:]}"
    _SITE.append(out)
    return out


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """The built site (see :func:`site_dir`)."""
    return site_dir(tmp_path_factory.getbasetemp())


def test_built_pages_load_katex_offline_and_mark_math(built_site):
    """The claims page's formulas are marked for typesetting and the page loads the vendored KaTeX
    and the script that runs it, from the site itself: no CDN (issue 25: math renders offline)."""
    html = (built_site / "claims.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
    assert any(s.endswith("assets/katex/katex.min.js") for s in scripts), f"no vendored KaTeX script: {scripts}"
    assert any(s.endswith("javascripts/math.js") for s in scripts), f"no KaTeX starter script: {scripts}"
    assert not [s for s in scripts if re.match(r"(https?:)?//", s)], f"a script loads from the network: {scripts}"
    css = re.findall(r'<link[^>]+href="([^"]+\.css)"', html)
    assert any(c.endswith("assets/katex/katex.min.css") for c in css), f"no KaTeX stylesheet: {css}"
    for font in re.findall(r"url\((fonts/[^)]+)\)", (built_site / "assets/katex/katex.min.css").read_text("utf-8")):
        assert (built_site / "assets/katex" / font).is_file(), f"KaTeX stylesheet names a missing font {font}"
    assert html.count('class="arithmatex"') >= 10, "the claims' statements are not marked as math"
    assert 'href="spec.html#s2-merge"' in html, "the claims page must link each claim to its rule in docs/spec.md"
    assert "SPEC §" not in re.sub(r"<[^>]+>", "", html).replace("spec §", ""), "a bare SPEC § reference is left unlinked"
    settings = (built_site / "javascripts" / "math.js").read_text(encoding="utf-8")
    assert "katex.render" in settings and ".arithmatex" in settings, "math.js must typeset the arithmatex blocks"


_HREF = re.compile(r'<(?:a|link|img|script|source)\b[^>]*?\s(?:href|src)="([^"]*)"')
_ID = re.compile(r'\s(?:id|name)="([^"]+)"')


def _html_target(site: Path, page: Path, url: str) -> Path | None:
    path = url.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return page
    return (page.parent / path) if not path.startswith("/") else site / path.lstrip("/")


def dead_links(site: Path) -> list[str]:
    """Every internal link or asset of the built site whose file or anchor does not exist, as
    ``page: url (why)``. Root-absolute links (``/x``) and links to a folder (``x/``) are dead too:
    a copy of ``site/`` opened from disk has no server root and no server to pick ``index.html``."""
    pages = sorted(site.rglob("*.html"))
    ids: dict[Path, set[str]] = {}
    bad = []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        for url in _HREF.findall(html):
            if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
                continue  # http(s), mailto, data: not internal
            if url.startswith("/"):
                bad.append(f"{page.relative_to(site)}: {url} (root-absolute: breaks under file://)")
                continue
            target = _html_target(site, page, url)
            if target.is_dir():
                bad.append(f"{page.relative_to(site)}: {url} (a folder: breaks under file://)")
                continue
            if not target.is_file():
                bad.append(f"{page.relative_to(site)}: {url} (no file {target.relative_to(site) if target.is_relative_to(site) else target})")
                continue
            if "#" in url and target.suffix == ".html":
                frag = url.split("#", 1)[1]
                if frag:
                    if target not in ids:
                        ids[target] = set(_ID.findall(target.read_text(encoding="utf-8")))
                    if frag not in ids[target]:
                        bad.append(f"{page.relative_to(site)}: {url} (no anchor #{frag} in {target.relative_to(site)})")
    return bad


def test_link_checker_finds_dead_files_and_anchors(tmp_path):
    """The checker is not vacuous: a missing page, a missing anchor, a root-absolute path and a
    folder link are each reported; good links and an external one are not (issue 25: no dead links)."""
    (tmp_path / "b").mkdir()
    (tmp_path / "a.html").write_text('<h2 id="here">x</h2><a href="b/c.html">b</a><a href="#here">h</a>'
                                     '<a href="#gone">g</a><a href="d.html">d</a><a href="https://x.org/">x</a>'
                                     '<img src="/img/x.png"><a href="b/">folder</a>', encoding="utf-8")
    (tmp_path / "b" / "c.html").write_text('<a href="../a.html#here">a</a>', encoding="utf-8")
    bad = dead_links(tmp_path)
    assert len(bad) == 4, f"expected the missing anchor, the missing page, the root-absolute image, the folder: {bad}"
    for want in ("#gone", "d.html", "/img/x.png", "b/ (a folder"):
        assert any(want in b for b in bad), f"{want} not reported: {bad}"


def test_built_site_has_no_dead_internal_link(built_site):
    """Every internal link, anchor and asset of the built site exists (the API pages, the claims,
    the per-test anchors, 404.html opened from disk): MkDocs reports dead anchors only at INFO level."""
    bad = dead_links(built_site)
    assert not bad, f"{len(bad)} dead internal links:\n" + "\n".join(bad[:40])


def test_api_reference_is_split_per_module_and_renders_its_cross_references(built_site):
    """One API page per public module of the package tree; no raw Sphinx role (``:func:`x```) is
    left in the rendered docstrings; ``SPEC §n`` links to the spec; an object implementing a claim
    links back to it (issue 25, items 2-3)."""
    sys.path.insert(0, str(ROOT / "docs"))
    pkg = ROOT / "lam_ref"
    for mod in ("lam_ref.geometry", "lam_ref.substitution", "lam_ref.claims.thm1", "lam_ref.text.lines"):
        assert (built_site / "reference" / f"{mod}.html").is_file(), f"no API page for {mod}"
    assert (pkg / "geometry.py").is_file(), "the test names a module that moved"
    pages = sorted((built_site / "reference").glob("lam_ref*.html"))
    assert len(pages) >= 60, f"only {len(pages)} module pages"
    big = [p.stem for p in pages if p.stat().st_size > 600_000]
    assert not big, f"API pages over 600 kB: {big}"
    raw = []
    for p in pages:
        text = re.sub(r"<[^>]+>", "", p.read_text(encoding="utf-8"))
        raw += [f"{p.stem}: {m}" for m in re.findall(r":(?:func|class|mod|data|meth):`[^`]*`", text)]
    geo = (built_site / "reference" / "lam_ref.geometry.html").read_text(encoding="utf-8")
    assert not raw, f"{len(raw)} raw Sphinx roles in the API pages: {raw[:10]}"
    assert re.search(r'<a [^>]*href="../spec.html#s2[^"]*"[^>]*>SPEC §2</a>', geo), "SPEC §2 in geometry's docstrings is not a link"
    assert re.search(r'Implements:</strong> <a [^>]*href="../claims.html#eq1[^"]*"[^>]*>EQ1</a>', geo), \
        "lam_ref.geometry.delta_from_t implements EQ1 but its API entry does not link to the claim"
    assert 'id="lam_ref.geometry.TIE_BAND"' in geo, "a constant documented by #: comments has no API entry"


def test_built_navigation_has_no_repeated_entry(built_site):
    """The rendered primary navigation links each page once (no second "lam_ref" or "Claims")."""
    html = (built_site / "index.html").read_text(encoding="utf-8")
    primary = html[html.index("md-nav--primary"):]
    hrefs = re.findall(r'<a href="([^"#][^"]*)" class="md-nav__link', primary)
    assert len(hrefs) >= 10, f"too few navigation links found in the built index page: {hrefs}"
    dupes = {h for h in hrefs if hrefs.count(h) > 1}
    assert not dupes, f"navigation links a page twice: {dupes}: {hrefs}"
    assert not any("claims/tests/" in h for h in hrefs), "per-test-file pages belong to the claims page, not the navigation"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE") != "thorough",
                    reason="slow (about a minute): runs in the thorough profile, `make thorough`")
def test_the_wheel_builds_and_installs_into_a_fresh_venv(tmp_path):
    """The home page's second install route works: ``python -m build --wheel`` on the tracked files
    gives a wheel that installs into a fresh venv, where ``import lam_ref`` comes from that venv
    and ``lam-ref --help`` runs (docs/index.md#install). The dependencies are lent from this
    interpreter's site-packages (no network here)."""
    pytest.importorskip("build", reason="the build package is not installed (pip install -e .[dev])")
    import site
    import sysconfig
    import zipfile

    src = tmp_path / "src"
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    for name in out.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist")],
                          cwd=src, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"python -m build --wheel failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    wheels = list((tmp_path / "dist").glob("lam_ref-*.whl"))
    assert len(wheels) == 1, f"expected one wheel, found {wheels}"
    names = zipfile.ZipFile(wheels[0]).namelist()
    for want in ("lam_ref/__init__.py", "lam_ref/cli.py", "lam_ref/claims/__init__.py"):
        assert want in names, f"the wheel lacks {want}"
    if shutil.which("gcc") or shutil.which("cc"):
        assert any(re.match(r"lam_ref/text/_l0\..*\.so$", n) for n in names), "the wheel lacks L0's compiled C pass"
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    py = env / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    lend = [p for p in [*site.getsitepackages(), sysconfig.get_paths()["purelib"]] if Path(p).is_dir()]
    (purelib / "_lam_deps.pth").write_text("\n".join(lend) + "\n", encoding="utf-8")
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"pip install of the wheel failed:\n{proc.stderr[-2000:]}"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    where = subprocess.run([str(py), "-c", "import lam_ref; print(lam_ref.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, env=clean)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(env), \
        f"import lam_ref in the fresh venv came from {where.stdout.strip()!r} ({where.stderr[-500:]})"
    helped = subprocess.run([str(env / "bin" / "lam-ref"), "--help"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=clean)
    assert helped.returncode == 0 and "compact" in helped.stdout, f"lam-ref --help from the wheel failed: {helped.stderr[-500:]}"


def test_peers_figure_labels_do_not_overprint_and_the_evidence_axis_ends_at_100(tmp_path):
    """docs/peers.md's figure (``lam-ref compare --plot``): operating points that share the top of
    the evidence axis (100 %) get labels that do not overlap, the axis stops at 100 %, and the x
    axis names the column it plots (``removed (ev. set)``), not the net removal (issue 25, item 6)."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lam_ref.peers import compare

    rows = [{"method": m, "label": lab, "prefix_stable": m == "lam", "seeds": 1,
             "evidence": {"micro": 1.0, "removal_net": x, "removal_net_range": [x, x], "micro_range": [1.0, 1.0]}}
            for m, lab, x in [("lam", "t=0.99", 0.382), ("lam", "t=0.95", 0.39), ("lam", "t=0.9", 0.41),
                              ("l0", "—", 0.384), ("lre", "budget=512", 0.4886), ("masking", "k=5", 0.5018)]]
    drawn = {}
    real_close = plt.close

    def keep(fig=None):
        drawn["fig"] = fig

    plt.close = keep
    try:
        compare.plot(rows, str(tmp_path / "c.png"))
    finally:
        plt.close = real_close
    fig = drawn["fig"]
    ax = fig.axes[0]
    assert ax.get_ylim()[1] == 100.0, f"the evidence axis ends at {ax.get_ylim()[1]}, not 100 %"
    assert "ev. set" in ax.get_xlabel(), f"the x axis does not name the column it plots: {ax.get_xlabel()!r}"
    fig.canvas.draw()
    boxes = [(t.get_text(), t.get_window_extent()) for t in ax.texts]
    assert len(boxes) == len(rows), f"{len(boxes)} labels for {len(rows)} points"
    overlaps = [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]
    assert not overlaps, f"labels overprint each other: {overlaps}"
    real_close(fig)


def test_hooks_link_test_spans_and_old_api_links_but_not_code_blocks():
    """docs/hooks.py: a test-file code span becomes a link to its generated page (at the test's
    anchor for ``path::name``), an old single-page API link becomes a cross-reference, and
    neither a fenced block, a span already inside a link, nor a file without a page changes."""
    sys.path.insert(0, str(ROOT / "docs"))
    import hooks

    pages = {"claims/tests/tests/test_codec.md", "spec.md"}
    md = ("See `tests/test_codec.py` and `tests/test_codec.py::test_round_half_up_ties`, "
          "[`tests/test_codec.py`](x.md), `tests/test_nothing.py`, [`TIE_BAND`](reference/api.md#lam_ref.geometry.TIE_BAND).\n"
          "```text\n`tests/test_codec.py`\n```\n")
    out = hooks.link_markdown(md, "spec.md", pages)
    assert "[`tests/test_codec.py`](claims/tests/tests/test_codec.md)" in out, out
    assert "(claims/tests/tests/test_codec.md#test_round_half_up_ties)" in out, out
    assert "[`tests/test_codec.py`](x.md)" in out and "[[`" not in out, f"a span inside a link was linked again: {out}"
    assert "`tests/test_nothing.py`," in out and "test_nothing.md" not in out, "a file without a page got a link"
    assert "[`TIE_BAND`][lam_ref.geometry.TIE_BAND]" in out, "the old API link is not a cross-reference"
    assert out.endswith("```text\n`tests/test_codec.py`\n```\n"), "a fenced block was changed"
    deeper = hooks.link_markdown("`tests/test_codec.py`", "reference/x.md", pages)
    assert deeper == "[`tests/test_codec.py`](../claims/tests/tests/test_codec.md)", f"not relative to the page: {deeper}"


def test_griffe_extension_reads_spec_sections_and_roles():
    """docs/griffe_lam.py: the spec's headings give the anchors ``SPEC §n`` and ``SPEC §n.m`` link
    to, and all of Sphinx's role forms are recognised (``:func:`x```, ``~``, ``text <target>``)."""
    sys.path.insert(0, str(ROOT / "docs"))
    import griffe_lam

    anchors = griffe_lam.spec_anchors((ROOT / "docs" / "spec.md").read_text(encoding="utf-8"))
    assert anchors.get("2") == "s2" and anchors.get("7") == "s7", f"section anchors: {sorted(anchors.items())[:6]}"
    assert anchors.get("2.1") == "s2-merge", f"subsection 2.1 is {anchors.get('2.1')!r}, the spec says s2-merge"
    forms = [m.groups() for m in griffe_lam.ROLE.finditer(
        ":func:`substitute` :class:`~lam_ref.online.OnlineSession` :meth:`the admit step <OnlineSession.admit>`")]
    assert forms == [("func", "", "substitute", None), ("class", "~", "lam_ref.online.OnlineSession", None),
                     ("meth", "", "the admit step", "OnlineSession.admit")], forms


def test_every_implementing_object_links_back_to_its_claims(built_site):
    """Each name a registered claim lists in ``implements`` has an API entry whose text (up to the
    next object's heading) links to that claim: the claims → code map works both ways."""
    from lam_ref.claims import CLAIMS

    pages = {p: p.read_text(encoding="utf-8") for p in (built_site / "reference").glob("lam_ref*.html")}
    heading = re.compile(r'<h[1-6] id="[^"]+" class="doc doc-heading')
    missing = []
    for c in CLAIMS:
        for name in c.implements:
            found = False
            for html in pages.values():
                at = html.find(f'id="{name}"')
                if at >= 0:
                    nxt = heading.search(html, at + len(name) + 5)
                    found = f">{c.id}</a>" in html[at:nxt.start() if nxt else None]
                    break
            if not found:
                missing.append(f"{name} -> {c.id}")
    assert not missing, f"API entries without a link to the claim they implement: {missing}"


def _where_things_live() -> list[str]:
    """The first column of docs/spec-decisions.md's "Where things live" table, in order."""
    page = (ROOT / "docs" / "spec-decisions.md").read_text(encoding="utf-8")
    m = re.search(r"^## Where things live\b.*?$(.*?)^## ", page, re.M | re.S)
    assert m, "docs/spec-decisions.md has no '## Where things live' section"
    return re.findall(r"^\| `(lam_ref[\w.]*(?:\.\*)?)` \|", m.group(1), re.M)


def test_where_things_live_names_every_module():
    """Issue 36 §6: the "Where things live" table of docs/spec-decisions.md covers every module of
    ``lam_ref`` (walking the package, compiled extensions included): each module is a row, or is
    the package of a row ``pkg.*`` or lies below it; and every row names a module or package that
    exists, once."""
    import importlib.util
    import pkgutil

    import lam_ref

    rows = _where_things_live()
    assert len(rows) > 50, f"the table looks cut short: {len(rows)} rows"
    assert len(rows) == len(set(rows)), f"rows named twice: {sorted(r for r in rows if rows.count(r) > 1)}"
    modules = {"lam_ref"} | {m.name for m in pkgutil.walk_packages(lam_ref.__path__, "lam_ref.")}
    exact = {r for r in rows if not r.endswith(".*")}
    exact |= {r[:-2] for r in rows if r.endswith(".*")}  # "pkg.*" covers pkg itself
    below = tuple(r[:-1] for r in rows if r.endswith(".*"))  # ... and every module below it ("pkg.")
    missing = sorted(m for m in modules if m not in exact and not m.startswith(below))
    assert not missing, f"modules missing from docs/spec-decisions.md's 'Where things live': {missing}"
    stale = sorted(r for r in rows if not r.endswith(".*") and r not in modules)
    assert not stale, f"rows naming no module of lam_ref: {stale}"
    for r in rows:
        if r.endswith(".*"):
            spec = importlib.util.find_spec(r[:-2])
            assert spec is not None and spec.submodule_search_locations, f"row {r}: {r[:-2]} is not a package"

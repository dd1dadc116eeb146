"""MkDocs hooks (``mkdocs.yml`` → ``hooks``): links the hand-written pages do not spell out.

- A code span naming a test file (``tests/test_x.py``, or ``tests/test_x.py::test_name`` for one
  test) links to the file's generated page (``docs/claims_page.py``), at the test's anchor.
- A link into the former single API page (``reference/api.md#lam_ref.x.y``) becomes a
  cross-reference to ``lam_ref.x.y`` wherever its module page puts it (a dead one fails the
  strict build, as autorefs reports it).
- ``404.html`` is served from any depth, so MkDocs writes its asset paths root-absolute
  (``/assets/...``) when no ``site_url`` is set; that breaks a copy of ``site/`` opened from disk.
  The hook makes them relative to the site root, where the file lies.
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claims_page import test_anchor, test_page  # noqa: E402

FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)
TEST_SPAN = re.compile(r"(?<![\[`])`((?:tests|property_tests|proofs)/[A-Za-z0-9_/]+\.py)(?:::([A-Za-z0-9_]+))?`(?![\]`(])")
API_LINK = re.compile(r"\[([^\]]+)\]\((?:\.\./)*reference/api\.md#(lam_ref[A-Za-z0-9_.]*)\)")


def _outside_fences(markdown: str, fn) -> str:
    out, pos = [], 0
    for m in FENCE.finditer(markdown):
        out.append(fn(markdown[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(fn(markdown[pos:]))
    return "".join(out)


def link_markdown(markdown: str, src_uri: str, pages: set[str]) -> str:
    """The page's markdown with test-file code spans and old API-page links turned into links
    (``pages``: the site's page paths; ``src_uri``: this page's)."""
    here = posixpath.dirname(src_uri) or "."

    def spans(text: str) -> str:
        def one(m: re.Match) -> str:
            page = test_page(m.group(1))
            if page not in pages:
                return m.group(0)
            url = posixpath.relpath(page, here)
            if m.group(2):
                url += f"#{test_anchor(m.group(2))}"
            return f"[{m.group(0)}]({url})"

        text = TEST_SPAN.sub(one, text)
        return API_LINK.sub(lambda m: f"[{m.group(1)}][{m.group(2)}]", text)

    return _outside_fences(markdown, spans)


def on_page_markdown(markdown, page, config, files, **kwargs):  # noqa: ARG001 - MkDocs' signature
    pages = {f.src_uri for f in files if f.src_uri.endswith(".md")}
    return link_markdown(markdown, page.file.src_uri, pages)


ROOT_ABSOLUTE = re.compile(r'(\b(?:href|src)=")/(?!/)')


def on_post_build(config, **kwargs):  # noqa: ARG001 - MkDocs' signature
    if config.get("site_url"):
        return
    page = Path(config["site_dir"]) / "404.html"
    if page.is_file():
        html = page.read_text(encoding="utf-8")
        page.write_text(ROOT_ABSOLUTE.sub(r"\1", html).replace('href=""', 'href="index.html"'), encoding="utf-8")


def on_startup(command, dirty=False, **kwargs):  # noqa: ARG001 - MkDocs' signature
    """``mkdocs build -q`` sets MkDocs' logger to ERROR, so plugin warnings (an unresolved
    cross-reference from autorefs) were dropped before ``--strict`` could count them: keep warnings."""
    log = logging.getLogger("mkdocs")
    if log.level > logging.WARNING:
        log.setLevel(logging.WARNING)

"""The built docs in a real browser, offline (issue 25): headless Chromium (the system one, driven
by Playwright; never a downloaded browser) opens pages of the built site from disk with every
non-``file:`` request refused, and checks what a reader sees: the formulas are typeset (no raw TeX
left), every image loads, no console error, and the two cross-links of the map (claim → its test,
API object → its claim) land on the right anchor.

Runs where Chromium exists (``$LAM_CHROMIUM``, else ``chromium`` / ``chromium-browser`` on PATH)
and Playwright imports; skips with the reason elsewhere. ``.ci/run``'s ``make test`` installs
Chromium first (Makefile target ``chromium``). Set ``LAM_DOCS_SCREENSHOTS=DIR`` to save the
screenshots the home page shows (``docs/img/screenshot-*.png``).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.test_docs import built_site  # noqa: F401 - the shared fixture

#: Pages a reader opens, with the least number of typeset formulas each must show.
PAGES = {
    "index.html": 0,
    "claims.html": 20,
    "theory.html": 1,
    "spec.html": 1,
    "determinism.html": 1,
    "cct.html": 1,
    "codec.html": 1,
    "peers.html": 0,
    "costmodel.html": 0,
    "reference/lam_ref.geometry.html": 0,
    "claims/tests/property_tests/test_thm1.html": 0,
    "404.html": 0,
}


def _chromium() -> str | None:
    for cand in (os.environ.get("LAM_CHROMIUM"), "chromium", "chromium-browser"):
        if cand and (path := shutil.which(cand)):
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium, or set LAM_CHROMIUM); `make test` installs it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e .[dev])")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True,
                              args=["--proxy-server=127.0.0.1:9", "--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


class Tab:
    """One browser page with the network refused and its console errors recorded."""

    def __init__(self, browser, site: Path):
        self.site = site
        self.ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        self.ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))

    def open(self, rel: str) -> None:
        self.errors.clear()
        # "load": the scripts have run (KaTeX typesets on DOMContentLoaded) and the images are in
        self.page.goto((self.site / rel).as_uri(), wait_until="load")

    def close(self) -> None:
        self.ctx.close()


@pytest.fixture
def tab(browser, built_site):  # noqa: F811 - the fixture imported above
    t = Tab(browser, built_site)
    yield t
    t.close()


@pytest.mark.parametrize("rel", sorted(PAGES))
def test_page_reads_offline(tab, rel):
    """Each page opened from disk with no network: every formula typeset by KaTeX (no raw ``\\[``,
    ``\\(`` or ``$$`` in the visible text, no KaTeX error), every image loaded (natural width > 0),
    no console error. A failure names the page and the element."""
    tab.open(rel)
    state = tab.page.evaluate("""() => ({
        marked: document.querySelectorAll('.arithmatex').length,
        typeset: document.querySelectorAll('.arithmatex .katex').length,
        untypeset: [...document.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('.katex'))
                   .map(e => e.textContent.trim().slice(0, 80)),
        katexErrors: [...document.querySelectorAll('.katex-error')].map(e => e.textContent.slice(0, 80)),
        text: document.body.innerText,
        badImages: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src')),
        images: document.images.length,
    })""")
    assert state["typeset"] >= PAGES[rel], f"{rel}: {state['typeset']} typeset formulas, want at least {PAGES[rel]}"
    assert not state["untypeset"], f"{rel}: formulas left as TeX: {state['untypeset'][:5]}"
    assert not state["katexErrors"], f"{rel}: KaTeX errors: {state['katexErrors'][:5]}"
    for raw in ("\\[", "\\(", "$$"):
        at = state["text"].find(raw)
        assert at < 0, f"{rel}: raw {raw!r} in the visible text: ...{state['text'][max(0, at - 60):at + 60]!r}"
    assert not state["badImages"], f"{rel}: images that did not load: {state['badImages']}"
    assert not tab.errors, f"{rel}: console errors: {tab.errors[:5]}"
    if rel == "index.html":
        assert state["images"] >= 2, f"{rel}: the home page shows the pipeline and the screenshots, found {state['images']} images"
    if shots := os.environ.get("LAM_DOCS_SCREENSHOTS"):
        name = {"index.html": "home", "claims.html": "claims",
                "reference/lam_ref.geometry.html": "api"}.get(rel)
        if name:
            Path(shots).mkdir(parents=True, exist_ok=True)
            if name == "api":  # an object with its claim back-link, at the top of the view
                tab.page.evaluate("document.getElementById('lam_ref.geometry.delta_from_t').scrollIntoView(); window.scrollBy(0, -80)")
            tab.page.screenshot(path=str(Path(shots) / f"screenshot-{name}.png"))


def _landed(tab, want_page: str, want_anchor: str) -> None:
    url = tab.page.url
    assert url.split("#")[0].endswith(want_page), f"the click went to {url}, want the page {want_page}"
    assert url.endswith("#" + want_anchor), f"the click went to {url}, want the anchor #{want_anchor}"
    found = tab.page.evaluate("""(id) => { const e = document.getElementById(id);
        if (!e) return null; const r = e.getBoundingClientRect(); return [r.top, window.innerHeight]; }""", want_anchor)
    assert found is not None, f"{want_page}: no element with id {want_anchor!r}"
    top, height = found
    assert -5 <= top <= height, f"{want_page}#{want_anchor}: the anchor is not in view after the click (top {top:.0f} px)"


def test_click_from_a_claim_to_its_test(tab):
    """On the claims page, THM1's first "Checked by" test link opens the test file's page at that
    test's own anchor (issue 25: a claim links to the exact test)."""
    tab.open("claims.html")
    link = tab.page.locator("h2[id^='thm1-'] ~ ul a[href*='claims/tests/'], h2[id^='thm1-'] ~ ul a[href^='tests/']").first
    href = link.get_attribute("href")
    assert href and "#" in href, f"claims.html: THM1's first test link {href!r} names no test anchor"
    page, anchor = href.split("#")
    link.click()
    tab.page.wait_for_load_state("load")
    _landed(tab, page, anchor)
    code = tab.page.evaluate("""(id) => { const a = document.getElementById(id);
        const blocks = [...document.querySelectorAll('div.highlight')];
        const next = blocks.find(b => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
        return next ? next.innerText : null; }""", anchor)
    assert code and re.search(r"def " + re.escape(anchor) + r"\b", code), \
        f"{page}#{anchor}: the code after the anchor is not the test {anchor}: {(code or '')[:200]!r}"


def test_click_from_an_api_object_to_its_claim(tab):
    """On lam_ref.geometry's API page, delta_from_t's "Implements" link opens the claims page at
    EQ1 (issue 25: an API object links back to the claims it implements)."""
    tab.open("reference/lam_ref.geometry.html")
    section = tab.page.locator("[id='lam_ref.geometry.delta_from_t'] ~ div").first
    link = section.locator("a", has_text=re.compile(r"^EQ1$")).first
    assert link.count() == 1, "reference/lam_ref.geometry: delta_from_t has no link to EQ1"
    href = link.get_attribute("href")
    link.click()
    tab.page.wait_for_load_state("load")
    _landed(tab, "claims.html", href.split("#")[1])
    heading = tab.page.locator(f"[id='{href.split('#')[1]}']").inner_text()
    assert heading.startswith("EQ1"), f"claims.html#{href.split('#')[1]}: lands on {heading!r}, not EQ1"

// Typesets the formulas pymdownx.arithmatex marks (generic mode: <span class="arithmatex">\(...\)</span>
// and <div class="arithmatex">\[...\]</div>) with the vendored KaTeX (docs/assets/katex): no network.
function lamRenderMath() {
  if (typeof katex === "undefined") {
    console.error("KaTeX did not load: formulas stay as TeX");
    return;
  }
  document.querySelectorAll(".arithmatex").forEach((el) => {
    if (el.querySelector(".katex")) return;
    const text = el.textContent.trim();
    const display = el.tagName === "DIV";
    const tex = text.replace(/^\\[\[(]/, "").replace(/\\[\])]$/, "");
    try {
      katex.render(tex, el, { displayMode: display, throwOnError: true, strict: "ignore" });
    } catch (err) {
      // the formula stays readable as TeX, and the browser test reports the error
      console.error("KaTeX could not typeset " + JSON.stringify(tex) + ": " + err.message);
    }
  });
}

// mkdocs-material may load pages without a full reload (instant navigation): typeset each page.
if (typeof document$ !== "undefined") {
  document$.subscribe(lamRenderMath);
} else {
  document.addEventListener("DOMContentLoaded", lamRenderMath);
}

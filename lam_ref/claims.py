r"""The claim registry: every claim lam_ref checks, where the paper states it, the code that
implements it and (found by scanning) the tests that check it (SPEC §11).

A test names the claim it checks with the pytest marker ``@pytest.mark.claim("THM1")`` (or a
module-level ``pytestmark``). :func:`check_registry` fails when a registered claim has no test,
a test names an unknown claim, or an implementing name does not import; the docs build
(``docs/claims_page.py``) and ``tests/test_claims.py`` both call it.

Adding a claim is a small edit: append a :class:`Claim` to :data:`CLAIMS`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLAIMS",
    "MARKER_RE",
    "TEST_DIRS",
    "Claim",
    "Marker",
    "check_registry",
    "registry",
    "resolve",
    "scan_markers",
]


@dataclass(frozen=True)
class Claim:
    """One claim: ``id`` (as used in ``@pytest.mark.claim``), a short ``title``, the
    ``statement`` in LaTeX (math mode, without delimiters), the ``location`` in the paper (or
    ``SPEC §n`` / "beyond the paper"), and ``implements``: dotted names of the functions or
    classes that realise or check it."""

    id: str
    title: str
    statement: str
    location: str
    implements: tuple[str, ...]
    origin: str = "paper"
    note: str = ""


CLAIMS: list[Claim] = [
    Claim(
        "EQ1",
        "Merge threshold and substitution bound fix each other",
        r"\|a-b\|_2^2 = 2 - 2\cos(a,b)\ \text{for unit } a,b,\qquad \cos(a,b)\ge t \iff \|a-b\|_2\le\delta=\sqrt{2-2t}",
        "§2.1, eq. (1)",
        ("lam_ref.geometry.delta_from_t", "lam_ref.geometry.delta_sq", "lam_ref.geometry.merges", "lam_ref.verify.eq1_residuals"),
    ),
    Claim(
        "DEF1",
        "δ-substitution",
        r"(R,\pi)\ \text{with}\ R\subseteq S,\ \pi:S\to R,\ \pi|_R=\mathrm{id},\ \|x-\pi(x)\|_2\le\delta\ \ \forall x\in S",
        "§2.4, Definition 1",
        ("lam_ref.substitution.oracle", "lam_ref.substitution.substitute", "lam_ref.verify.check_substitution"),
    ),
    Claim(
        "THM1",
        "Score deficit",
        r"0\le\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\le\hat\delta\le\delta\ \ \forall\,\|q\|_2=1,\ \text{both ends tight}",
        "§2.4, Theorem 1; proof App. C.2; δ̂ in App. C.5",
        ("lam_ref.verify.score_deficits", "lam_ref.verify.adversarial_queries", "lam_ref.substitution.SubstitutionResult"),
    ),
    Claim(
        "COR1",
        "Top-k δ-cover",
        r"\forall q,k,\ \forall x\in\mathrm{top}_k(S,q):\ \pi(x)\in R,\ \|x-\pi(x)\|_2\le\delta,\ |q\cdot x-q\cdot\pi(x)|\le\delta",
        "App. C.2, Corollary 1",
        ("lam_ref.verify.top_k_cover",),
    ),
    Claim(
        "PROP1",
        "Rank-wise deficit",
        r"\pi\ \text{injective on}\ \mathrm{top}_k\Rightarrow 0\le s_j-r_j\le\delta\ (j\le k);\ \text{else}\ \pi(x)=\pi(y)\Rightarrow\|x-y\|_2\le2\delta",
        "App. C.2, Proposition 1",
        ("lam_ref.verify.rank_deficits",),
    ),
    Claim(
        "COR2",
        "Distribution-free rate–distortion bound",
        r"R_P(\delta)\le I(X;\pi(X))=H(\pi(X))\le\log_2|R|\ \ \text{for every}\ P\ \text{on}\ S",
        "App. C.2, Corollary 2, eq. (3); proof App. I",
        ("lam_ref.verify.map_entropy",),
    ),
    Claim(
        "COR3",
        "Measured bracket on the rate and the δ-entropy",
        r"\log_2|R_{\mathrm{greedy}}(2\delta)|\le\sup_P R^{\mathrm{as}}_P(\delta)\le H_\delta(S)=\log_2N(S,\delta)\le\log_2|R_{\mathrm{greedy}}(\delta)|",
        "App. C.2, Corollary 3, eq. (4); eq. (5) for T(δ); proof App. I",
        ("lam_ref.covering.bracket_bits", "lam_ref.covering.covering_number", "lam_ref.covering.token_weighted_optimum"),
    ),
    Claim(
        "PROP2",
        "Greedy is simultaneously a cover and a packing",
        r"N(S,\delta)\le|R_{\mathrm{greedy}}(\delta)|\le M(S,\delta)\le N(S,\delta/2)",
        "App. C.3, Proposition 2",
        ("lam_ref.covering.covering_number", "lam_ref.covering.packing_number", "lam_ref.covering.greedy_kept", "lam_ref.covering.t_half"),
        note="The packing half needs complete candidate generation (SPEC §5); see BAND.",
    ),
    Claim(
        "THM2",
        "Removal ceiling",
        r"\rho^*(\delta)=1-\frac{N(S,\delta)}{|S|}\le\rho_{\mathrm{greedy}}(2\delta),\qquad \sqrt{2-2t'}=2\sqrt{2-2t}\iff t'=4t-3",
        "App. C.3, Theorem 2, eq. (6)–(7); Table 6",
        ("lam_ref.covering.greedy_ceiling", "lam_ref.geometry.t_prime", "lam_ref.covering.covering_number"),
    ),
    Claim(
        "C4",
        "Connected components are not a δ-substitution",
        r"\exists\,a\sim b,\ b\sim c,\ a\not\sim c:\ \text{one representative per component violates}\ \|x-\pi(x)\|_2\le\delta",
        "App. C.4, Figure 5",
        ("lam_ref.covering.connected_components_map",),
    ),
    Claim(
        "BAND",
        "Banded candidate generation is sound at any (r, rel)",
        r"\pi_{\mathrm{band}}\ \text{is a}\ \delta\text{-substitution for every}\ (r,\mathrm{rel});\ \pi_{\mathrm{band}}=\pi_{\mathrm{oracle}}\ \text{when recall}=1",
        "§2.2 (L1), App. K.2; SPEC §5",
        ("lam_ref.bands.band_keys", "lam_ref.bands.band_recall", "lam_ref.substitution.substitute"),
        origin="SPEC",
    ),
    Claim(
        "ONLINE",
        "Online ≡ batch",
        r"\mathrm{concat}_{\text{turns}}\ \pi_{\mathrm{Alg.1}}=\pi_{\mathrm{Alg.2}}\ \text{for every split into turns};\ \hat\delta_{\mathrm{run}}=\max_{\text{turns}}\hat\delta",
        "§2.3, Algorithm 1; §3.3 (600/600 byte-identical); SPEC §6",
        ("lam_ref.online.OnlineSession", "lam_ref.substitution.Matcher"),
        origin="SPEC",
    ),
    Claim(
        "AMDAHL",
        "Amdahl ceiling of context reduction",
        r"\text{speedup}\le\frac{1}{1-\varphi},\ \varphi=\text{context-scaling share of turn latency}",
        "§2.6, App. E.1, Table 7",
        (),
        note="Checked symbolically against Table 7 (proofs/test_amdahl_sympy.py); the cost model that "
        "computes φ lives in its own module.",
    ),
    Claim(
        "ETA",
        "Net reduction after repair turns",
        r"\eta(\kappa)=\rho-\frac{\text{repairs}\cdot\kappa\cdot\Delta}{T},\qquad \kappa_{\text{break-even}}=\frac{\rho_m-\rho_o}{(n_m-n_o)\,\Delta/T}",
        "App. F.5, eq. (9), Table 18",
        ("lam_ref.metrics.eta", "lam_ref.metrics.break_even_kappa"),
    ),
    Claim(
        "HULL",
        "The exact worst-case deficit is the distance to the hull",
        r"\sup_{\|q\|_2=1}\Big(\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\Big)=\max_{x\in S}\operatorname{dist}(x,\operatorname{conv}R)",
        "beyond the paper (refines Theorem 1)",
        ("lam_ref.verify.hull_deficit", "lam_ref.covering.hull_distance"),
        origin="beyond the paper",
        note="So a δ-cover is sufficient, not necessary: three unit vectors at ±30° around a middle one "
        "lose 1 − cos 30° ≈ 0.134 < 0.316 when the middle one goes, although ρ*(0.316) = 0.",
    ),
    Claim(
        "GEMLINK",
        "A δ-substitution captures GEM's energy",
        r"E(R)=\frac1n\sum_{i=1}^n\|Q_R^\top x_i\|_2^2\ \ge\ 1-\frac{|D|}{n}\,\hat\delta^2\ \ge\ 1-\frac{|D|}{n}\,\delta^2",
        "beyond the paper (links seed 002, GEM eq. 3)",
        ("lam_ref.verify.captured_energy", "lam_ref.verify.gem_energy_bound"),
        origin="beyond the paper",
    ),
]

#: Directories scanned for ``claim("ID")`` markers (relative to the repository root).
TEST_DIRS: tuple[str, ...] = ("tests", "property_tests", "proofs", "lam_ref/conformance")

#: A claim marker: ``claim("ID")`` / ``claim('ID')`` (as in ``@pytest.mark.claim("THM1")``).
MARKER_RE = re.compile(r"""\bclaim\(\s*["']([^"'\s]+)["']\s*\)""")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


def registry(claims: Iterable[Claim] | None = None) -> dict[str, Claim]:
    """``{id: Claim}``; raises ``ValueError`` on a duplicate or malformed id."""
    out: dict[str, Claim] = {}
    for c in CLAIMS if claims is None else claims:
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", c.id):
            raise ValueError(f"claim id {c.id!r} must be upper-case letters, digits and _")
        if c.id in out:
            raise ValueError(f"claim id {c.id!r} is registered twice")
        out[c.id] = c
    return out


@dataclass(frozen=True)
class Marker:
    """A ``claim("ID")`` marker found in a test file: ``path`` (POSIX, relative to the root),
    1-based ``line``, and the ``test`` it decorates (``None`` for a module-level ``pytestmark``)."""

    claim: str
    path: str
    line: int
    test: str | None


def scan_markers(root: str | Path, dirs: Iterable[str] = TEST_DIRS) -> list[Marker]:
    """All claim markers in ``*.py`` files under ``dirs`` (sorted by path, line)."""
    root = Path(root)
    found: list[Marker] = []
    for d in dirs:
        base = root / d
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if any(part in {".venv", "__pycache__", "site"} for part in path.parts):
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for lineno, text in enumerate(lines, start=1):
                for m in MARKER_RE.finditer(text):
                    test = None
                    if not text.lstrip().startswith("pytestmark"):
                        for follow in lines[lineno - 1 :]:
                            dm = _DEF_RE.match(follow)
                            if dm:
                                test = dm.group(1)
                                break
                    found.append(Marker(m.group(1), path.relative_to(root).as_posix(), lineno, test))
    return sorted(found, key=lambda m: (m.path, m.line, m.claim))


def resolve(dotted: str) -> object:
    """Import ``package.module.attr[.attr…]``; raises ``ImportError``/``AttributeError`` if absent."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import {dotted!r}")


def check_registry(
    root: str | Path, claims: Iterable[Claim] | None = None, dirs: Iterable[str] = TEST_DIRS
) -> list[str]:
    """Problems with the registry against the tests under ``root`` (empty list: all good):
    a claim with no test, a marker naming an unknown claim, an implementing name that does not
    import, a duplicate id."""
    try:
        reg = registry(claims)
    except ValueError as exc:
        return [str(exc)]
    markers = scan_markers(root, dirs)
    problems: list[str] = []
    for m in markers:
        if m.claim not in reg:
            problems.append(f"{m.path}:{m.line}: test {m.test or '(module)'} names unknown claim {m.claim!r}")
    tested = {m.claim for m in markers}
    for cid, c in reg.items():
        if cid not in tested:
            problems.append(f"claim {cid} has no test (no claim({cid!r}) marker under {', '.join(dirs)})")
        for name in c.implements:
            try:
                resolve(name)
            except (ImportError, AttributeError) as exc:
                problems.append(f"claim {cid}: implementing name {name!r} does not import ({exc})")
    return problems

r"""The membership case study of Context Compaction Theory's Appendix A, without an LLM.

The paper records 15,000 URLs, compacts them, and asks 100 member and 100 non-member queries,
charging the compacted context ``chars × 8`` bits. Here every compactor is an explicit algorithm:

* SELECT (the decoder sees only the retained strings): ``keep-first`` (arrival order),
  ``random-subset`` (a seeded uniform sample), ``lam-greedy`` (Algorithm 2 of LAM,
  :func:`lam_ref.substitution.substitute`, on character-trigram embeddings; retained strings
  in arrival order; the decoder answers "yes" when the query lies within δ of a retained string,
  the merge rule of :mod:`lam_ref.geometry`). ``keep-first`` and ``random-subset`` answer "yes" iff
  the query was retained — the Bayes decoder for half-member query sets.
* GEN: ``bloom`` (:class:`~lam_ref.cct.bloom.BloomFilter`, ``k = b·ln 2``), ``fingerprints``
  (the sorted set of ``f``-bit hashes of the members, gaps Golomb–Rice coded: about
  ``N·(log2(1/ε) + 1.5)`` bits for false-positive rate ``ε``), ``domains`` (a "describe the domains"
  summary: the most frequent host names with their counts — the kind of summary the paper's LLM
  produced — answering "yes" iff the query's host is listed), ``always-no`` (the empty message).

**Budgets** are bits of the compacted *text*: ``chars`` mode charges ``8 × len(text)`` (the
paper's convention), ``gzip`` mode ``8 × len(gzip(text))`` (level 9, no timestamp; the empty text costs 0 in both). A GEN payload
is put in the text as unpadded base64 of its packed bits (6 bits per character), so in ``chars``
mode a Bloom filter of budget ``B`` has ``≈ 0.75·B`` bits; the analytic curves use raw bits.
Every compactor is sized to the largest content that fits the budget in the chosen mode.

Errors count false positives and false negatives over all queries (the paper's error rate) with
95 % Wilson intervals. Claims ``CCT-APPA`` and ``CCT-BLOOM``.
"""

from __future__ import annotations

import base64
import gzip
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import xxhash

from ..geometry import LamValueError, delta_sq, sq_dist_rows, validate_positive_int, validate_threshold
from ..substitution import substitute
from .bloom import BloomFilter, item_hashes

__all__ = [
    "COMPACTORS",
    "MODES",
    "Compacted",
    "Outcome",
    "Workload",
    "compact",
    "evaluate",
    "host",
    "ngram_embeddings",
    "rice_decode",
    "rice_encode",
    "run_case_study",
    "text_bits",
    "url_like_strings",
    "wilson",
    "workload",
]

MODES = ("chars", "gzip")
SELECT_COMPACTORS = ("keep-first", "random-subset", "lam-greedy")
GEN_COMPACTORS = ("bloom", "fingerprints", "domains", "always-no")
COMPACTORS = SELECT_COMPACTORS + GEN_COMPACTORS

_SYL = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "fu", "gi", "ho", "ju", "be", "ct", "ex", "ar",
        "on", "in", "qu", "tr", "st", "pl")
_TLD = ("com", "com", "com", "net", "org", "io", "ru", "de", "info", "co.uk", "cn", "br")
_WORDS = ("login", "index", "account", "update", "secure", "images", "wp-content", "admin", "docs", "api", "v1",
          "user", "download", "files", "static", "blog", "news", "search", "cart", "product", "item", "verify",
          "paypal", "bank", "signin", "webscr", "cmd", "media", "uploads", "js", "css", "home", "page")
_EXT = ("", "", "", ".html", ".php", ".htm", ".asp", ".js", ".png")


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
def url_like_strings(count: int, seed: int = 0, *, domains: int = 400) -> list[str]:
    """``count`` distinct URL-like strings from a seeded generator (no dataset needed).

    Host names are drawn Zipf-like from ``domains`` random names (so URLs share hosts and path
    words, as real URL lists do); paths have 0–4 segments from a small vocabulary, an optional
    extension and an optional numeric query parameter.
    """
    count = validate_positive_int(count, "count")
    domains = validate_positive_int(domains, "domains")
    rng = np.random.default_rng(seed)
    hosts = []
    for _ in range(domains):
        name = "".join(rng.choice(_SYL, size=int(rng.integers(2, 5))))
        sub = rng.choice(("", "", "www.", "m.", "mail.", "cdn."))
        hosts.append(f"{sub}{name}.{rng.choice(_TLD)}")
    weights = 1.0 / np.arange(1, domains + 1) ** 1.1
    weights /= weights.sum()
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        batch = 2 * (count - len(out)) + 16
        hs = rng.choice(domains, size=batch, p=weights)
        nseg = rng.integers(0, 5, size=batch)
        words = rng.integers(0, len(_WORDS), size=(batch, 4))
        ext = rng.integers(0, len(_EXT), size=batch)
        has_id = rng.random(batch) < 0.4
        ids = rng.integers(0, 10_000, size=batch)
        scheme = rng.integers(0, 3, size=batch)
        for b in range(batch):
            path = "/".join(_WORDS[w] for w in words[b, : nseg[b]])
            if path:
                path = "/" + path + _EXT[ext[b]]
            if has_id[b]:
                path += f"?id={int(ids[b])}"
            url = f"{('http://', 'https://', '')[scheme[b]]}{hosts[hs[b]]}{path}"
            if url not in seen:
                seen.add(url)
                out.append(url)
                if len(out) == count:
                    break
    return out


def host(url: str) -> str:
    """The host name of a URL-like string (scheme stripped, up to the first ``/`` or ``?``)."""
    s = url.split("://", 1)[-1]
    for sep in "/?":
        s = s.split(sep, 1)[0]
    return s


@dataclass(frozen=True)
class Workload:
    """Members in arrival order and the queries with their truth (``True`` = member)."""

    members: list[str]
    queries: list[str]
    truth: np.ndarray
    seed: int


def workload(n_members: int = 15_000, n_queries: int = 100, seed: int = 0) -> Workload:
    """``n_members`` members plus ``n_queries`` member and ``n_queries`` non-member queries, each
    sampled uniformly without replacement (non-members from the same generator, never members)."""
    n_members = validate_positive_int(n_members, "n_members")
    n_queries = validate_positive_int(n_queries, "n_queries")
    if n_queries > n_members:
        raise LamValueError(f"n_queries must be <= n_members = {n_members}, got {n_queries}")
    pool = url_like_strings(n_members + n_queries, seed)
    rng = np.random.default_rng([seed, 1])
    order = rng.permutation(len(pool))
    members = [pool[i] for i in order[:n_members]]
    outsiders = [pool[i] for i in order[n_members:]]
    pos = [members[i] for i in rng.choice(n_members, size=n_queries, replace=False)]
    queries = pos + outsiders
    truth = np.array([True] * n_queries + [False] * len(outsiders))
    return Workload(members, queries, truth, seed)


def ngram_embeddings(texts: Sequence[str], dim: int = 256, n: int = 3) -> np.ndarray:
    """Unit rows from signed feature hashing of character ``n``-grams (XXH3-64; deterministic)."""
    dim = validate_positive_int(dim, "dim")
    out = np.zeros((len(texts), dim), dtype=np.float64)
    cache: dict[str, tuple[int, float]] = {}
    for r, t in enumerate(texts):
        padded = f"^{t}$"
        for i in range(max(1, len(padded) - n + 1)):
            g = padded[i : i + n]
            hit = cache.get(g)
            if hit is None:
                h = xxhash.xxh3_64_intdigest(g.encode("utf-8", errors="surrogatepass"))
                hit = cache[g] = (h % dim, -1.0 if h >> 63 else 1.0)
            out[r, hit[0]] += hit[1]
    norms = np.sqrt((out * out).sum(axis=1))
    norms[norms == 0] = 1.0
    out /= norms[:, None]
    out[(out * out).sum(axis=1) == 0, 0] = 1.0
    return out.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# compactors
# ---------------------------------------------------------------------------------------------
def text_bits(text: str, mode: str) -> int:
    """Bits charged for a compacted text: ``8·len(text)`` (``chars``) or ``8·len(gzip(text))``;
    the empty text costs 0 bits in both modes (nothing is sent)."""
    if mode in MODES and not text:
        return 0
    if mode == "chars":
        return 8 * len(text)
    if mode == "gzip":
        return 8 * len(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    raise LamValueError(f"mode must be one of {MODES}, got {mode!r}")


def _b64(bits: np.ndarray) -> str:
    return base64.b64encode(np.packbits(bits).tobytes()).decode("ascii").rstrip("=")


@dataclass
class Compacted:
    """A compacted context: its ``text``, the ``bits`` charged, and the decoder ``answer``."""

    name: str
    kind: str
    text: str
    bits: int
    answer: Callable[[list[str]], np.ndarray] = field(repr=False)
    detail: dict[str, Any] = field(default_factory=dict)


def _largest(fits: Callable[[int], bool], hi: int) -> int:
    """Largest ``n`` in ``[0, hi]`` with ``fits(n)`` (assumes monotone; ``fits(0)`` is true)."""
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _select(name: str, ordered: list[str], budget: int, mode: str, decoder) -> Compacted:
    n = _largest(lambda k: text_bits("\n".join(ordered[:k]), mode) <= budget, len(ordered))
    kept = ordered[:n]
    text = "\n".join(kept)
    return Compacted(name, "SELECT", text, text_bits(text, mode), decoder(kept), {"retained": n})


def _exact_decoder(kept: list[str]):
    s = set(kept)
    return lambda qs: np.array([q in s for q in qs], dtype=bool)


def _delta_decoder(t: float):
    d2 = delta_sq(t)

    def make(kept: list[str]):
        emb = ngram_embeddings(kept) if kept else np.zeros((0, 256), np.float32)
        exact = set(kept)

        def answer(qs: list[str]) -> np.ndarray:
            out = np.array([q in exact for q in qs], dtype=bool)
            if emb.shape[0] == 0:
                return out
            qe = ngram_embeddings(qs)
            for s in range(0, len(qs), 512):
                g = qe[s : s + 512] @ emb.T
                best = g.argmax(axis=1)
                sq = sq_dist_rows(emb, best, qe[s : s + 512])  # nearest by dot = nearest by distance
                out[s : s + 512] |= sq <= d2
            return out

        return answer

    return make


_LAM_CACHE: dict[tuple[str, float], tuple[np.ndarray, float]] = {}


def compact(name: str, members: list[str], budget: int, mode: str = "chars", *, seed: int = 0,
            t: float = 0.9) -> Compacted:
    """Run compactor ``name`` on ``members`` within ``budget`` bits (accounting ``mode``).

    Raises:
        LamValueError: an unknown compactor or mode, a negative budget, or ``t`` outside [-1, 1].
    """
    if name not in COMPACTORS:
        raise LamValueError(f"compactor must be one of {COMPACTORS}, got {name!r}")
    if mode not in MODES:
        raise LamValueError(f"mode must be one of {MODES}, got {mode!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise LamValueError(f"budget must be an integer number of bits >= 0, got {budget!r}")
    budget = int(budget)
    n = len(members)
    if name == "keep-first":
        return _select(name, list(members), budget, mode, _exact_decoder)
    if name == "random-subset":
        rng = np.random.default_rng([seed, 2])
        return _select(name, [members[i] for i in rng.permutation(n)], budget, mode, _exact_decoder)
    if name == "lam-greedy":
        t = validate_threshold(t)
        key = (xxhash.xxh3_128_hexdigest("\n".join(members).encode("utf-8", errors="surrogatepass")), t)
        if key not in _LAM_CACHE:  # Algorithm 2 does not depend on the budget: run it once per set
            res = substitute(ngram_embeddings(members), t, exhaustive=True)
            _LAM_CACHE.clear()
            _LAM_CACHE[key] = (np.flatnonzero(res.kept), res.delta_hat)
        idx, delta_hat = _LAM_CACHE[key]
        kept = [members[i] for i in idx]
        out = _select(name, kept, budget, mode, _delta_decoder(t))
        out.detail.update({"t": t, "lam_retained": len(kept), "lam_delta_hat": delta_hat})
        return out
    if name == "always-no":
        return Compacted(name, "GEN", "", text_bits("", mode), lambda qs: np.zeros(len(qs), dtype=bool))
    if name == "domains":
        counts = Counter(host(u) for u in members).most_common()
        lines = [f"{h} ({c})" for h, c in counts]
        header = "hosts of the recorded URLs, most frequent first:\n"
        k = _largest(lambda j: text_bits(header + "\n".join(lines[:j]), mode) <= budget, len(lines))
        text = header + "\n".join(lines[:k]) if k else ""
        listed = {h for h, _ in counts[:k]}
        return Compacted(name, "GEN", text, text_bits(text, mode),
                         lambda qs: np.array([host(q) in listed for q in qs], dtype=bool), {"hosts": k})
    h1, h2 = item_hashes(members, seed)
    if name == "bloom":
        def build(m: int) -> tuple[BloomFilter, str]:
            f = BloomFilter.for_budget(m, n, seed).add_hashes(h1, h2)
            return f, _b64(f.bits)

        m = _largest(lambda j: j == 0 or text_bits(build(j)[1], mode) <= budget, max(budget, 0))
        if m == 0:
            return Compacted(name, "GEN", "", text_bits("", mode), lambda qs: np.zeros(len(qs), dtype=bool), {"m": 0})
        f, text = build(m)
        return Compacted(name, "GEN", text, text_bits(text, mode),
                         lambda qs: f.contains_hashes(*item_hashes(qs, seed)), {"m": m, "k": f.k})
    # fingerprints: the sorted set of f-bit prefixes of h1, gaps Golomb–Rice coded
    def fp_text(f: int) -> tuple[np.ndarray, str]:
        fps = np.unique(h1 >> np.uint64(64 - f))
        return fps, _b64(rice_encode(fps, f, n))

    f = _largest(lambda j: j == 0 or text_bits(fp_text(j)[1], mode) <= budget, 64)
    if f == 0:
        return Compacted(name, "GEN", "", text_bits("", mode), lambda qs: np.zeros(len(qs), dtype=bool), {"f": 0})
    fps, text = fp_text(f)
    return Compacted(name, "GEN", text, text_bits(text, mode),
                     lambda qs: np.isin(item_hashes(qs, seed)[0] >> np.uint64(64 - f), fps),
                     {"f": f, "distinct": int(fps.size)})


def rice_parameter(f: int, n: int) -> int:
    """Golomb–Rice parameter for gaps of ``n`` sorted uniform ``f``-bit values: ``⌊log2(2^f/n · ln 2)⌋``, >= 0."""
    mean_gap = 2.0**f / max(n, 1)
    return max(0, int(math.floor(math.log2(max(mean_gap * math.log(2.0), 1.0)))))


def rice_encode(values: np.ndarray, f: int, n: int) -> np.ndarray:
    """Bits (bool array) of the Golomb–Rice code of the gaps of sorted unique ``values``: per gap
    ``g``, ``g >> r`` ones, a zero, then the ``r`` low bits of ``g`` (``r`` = :func:`rice_parameter`)."""
    r = rice_parameter(f, n)
    v = np.asarray(values, dtype=np.uint64)
    gaps = np.diff(np.concatenate([np.zeros(1, np.uint64), v])) if v.size else v
    if v.size:
        gaps[0] = v[0]
    q = (gaps >> np.uint64(r)).astype(np.int64)
    lengths = q + 1 + r
    out = np.zeros(int(lengths.sum()), dtype=bool)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ones = np.repeat(starts, q) + (np.arange(int(q.sum())) - np.repeat(np.cumsum(q) - q, q))
    out[ones] = True
    if r:
        low = gaps & np.uint64((1 << r) - 1)
        shifts = np.arange(r - 1, -1, -1, dtype=np.uint64)
        bits = ((low[:, None] >> shifts[None, :]) & np.uint64(1)).astype(bool)
        pos = (starts + q + 1)[:, None] + np.arange(r)[None, :]
        out[pos.ravel()] = bits.ravel()
    return out


def rice_decode(bits: np.ndarray, f: int, n: int, count: int) -> np.ndarray:
    """Inverse of :func:`rice_encode` (``count`` values)."""
    r = rice_parameter(f, n)
    out = np.zeros(count, dtype=np.uint64)
    pos, acc = 0, 0
    b = np.asarray(bits, dtype=bool)
    for i in range(count):
        q = 0
        while b[pos]:
            q += 1
            pos += 1
        pos += 1
        low = 0
        for _ in range(r):
            low = (low << 1) | int(b[pos])
            pos += 1
        acc += (q << r) | low
        out[i] = acc
    return out


# ---------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------
def wilson(errors: int, total: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95 % Wilson score interval for a binomial proportion."""
    if total <= 0:
        raise LamValueError(f"total must be > 0, got {total}")
    p = errors / total
    den = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / den
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Outcome:
    """Errors of one compactor at one budget, pooled over seeds: rates, counts and the CI."""

    compactor: str
    kind: str
    mode: str
    budget: int
    bits_used: float
    bits_per_item: float
    queries: int
    false_positives: int
    false_negatives: int
    error: float
    ci_low: float
    ci_high: float
    seeds: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["seeds"] = list(self.seeds)
        return out


def evaluate(c: Compacted, w: Workload) -> tuple[int, int]:
    """``(false positives, false negatives)`` of a compacted context on the workload's queries."""
    ans = np.asarray(c.answer(w.queries), dtype=bool)
    return int((ans & ~w.truth).sum()), int((~ans & w.truth).sum())


def run_case_study(
    *,
    n_members: int = 15_000,
    n_queries: int = 100,
    seeds: Sequence[int] = (42, 43, 44),
    bits_per_item: Sequence[float] = (0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256),
    compactors: Sequence[str] = COMPACTORS,
    mode: str = "chars",
    t: float = 0.9,
) -> list[Outcome]:
    """Every compactor at every budget ``round(b·N)`` bits, pooled over ``seeds`` (claim ``CCT-APPA``)."""
    if mode not in MODES:
        raise LamValueError(f"mode must be one of {MODES}, got {mode!r}")
    for c in compactors:
        if c not in COMPACTORS:
            raise LamValueError(f"compactor must be one of {COMPACTORS}, got {c!r}")
    if not seeds:
        raise LamValueError("seeds must not be empty")
    for b in bits_per_item:
        if not (isinstance(b, (int, float)) and math.isfinite(b) and b >= 0):
            raise LamValueError(f"bits_per_item must be finite numbers >= 0, got {b!r}")
    loads = [workload(n_members, n_queries, s) for s in seeds]
    out: list[Outcome] = []
    for name in compactors:
        for b in bits_per_item:
            budget = int(round(b * n_members))
            fp = fn = total = 0
            used = []
            kind = ""
            for w in loads:
                c = compact(name, w.members, budget, mode, seed=w.seed, t=t)
                kind = c.kind
                p, q = evaluate(c, w)
                fp, fn, total = fp + p, fn + q, total + len(w.queries)
                used.append(c.bits)
            lo, hi = wilson(fp + fn, total)
            out.append(Outcome(name, kind, mode, budget, float(np.mean(used)), float(np.mean(used)) / n_members, total,
                               fp, fn, (fp + fn) / total, lo, hi, tuple(int(s) for s in seeds)))
    return out

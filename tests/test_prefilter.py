"""The float32 filter's scan (SPEC §5.3; claim DEF1; :func:`lam_ref.prefilter.filter_pairs`): the compiled
twin (``lam_ref/_filter.c``) and the numpy path both return exactly the definition's pairs,
``np.nonzero(g >= thr[:, None])`` in row-major order, on one thread or two; hand-edited C variants
that get a tie, a boundary or the order wrong are caught."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import geometry, prefilter
from lam_ref.geometry import LamValueError
from lam_ref.prefilter import FILTER_BACKENDS, filter_pairs

SOURCE = Path(prefilter.__file__).with_name("_filter.c")
each_backend = pytest.mark.parametrize("backend", FILTER_BACKENDS)


def definition(g: np.ndarray, thr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the filter must return: every ``g[i, j] >= thr[i]``, row-major."""
    r, c = np.nonzero(g >= thr[:, None])
    return r.astype(np.int64), c.astype(np.int64)


# Values that decide a comparison: the threshold itself, its float32 neighbours, signed zeros,
# infinities (a product never is one, but the scan must not care) and values far below.
_T = np.float32(0.5)
_VALUES = [_T, np.nextafter(_T, np.float32(1)), np.nextafter(_T, np.float32(0)), np.float32(0.0),
           np.float32(-0.0), np.float32(-1.0), np.float32(np.inf), np.float32(-np.inf), np.float32(0.25)]


@st.composite
def blocks(draw, max_rows: int = 9, max_cols: int = 40):
    """A small block of products and per-row thresholds built from :data:`_VALUES` (ties on purpose),
    so a failing example shrinks to a few values."""
    rows = draw(st.integers(0, max_rows))
    cols = draw(st.integers(0, max_cols))
    vals = draw(st.lists(st.sampled_from(range(len(_VALUES))), min_size=rows * cols, max_size=rows * cols))
    g = np.array([_VALUES[k] for k in vals], dtype=np.float32).reshape(rows, cols)
    thr = np.array([draw(st.sampled_from([_T, np.float32(0.0), np.float32(-0.0), np.float32(np.inf)]))
                    for _ in range(rows)], dtype=np.float32)
    return g, thr


def _check(scan, g, thr, label):
    want_r, want_c = definition(g, thr)
    got_r, got_c = scan(g, thr)
    assert got_r.dtype == got_c.dtype == np.int64, f"{label}: int64 indices, got {got_r.dtype} {got_c.dtype}"
    assert np.array_equal(got_r, want_r) and np.array_equal(got_c, want_c), \
        f"{label}: pairs {list(zip(got_r.tolist(), got_c.tolist()))[:8]} != definition " \
        f"{list(zip(want_r.tolist(), want_c.tolist()))[:8]} for g shape {g.shape}"


@pytest.mark.claim("DEF1")
@each_backend
@given(blocks())
def test_filter_pairs_equals_the_definition(backend, block):
    """Claim DEF1 (exhaustive mode is the definition only if its filter drops no pair), SPEC §5.3: the filter keeps exactly the pairs with ``g >= thr`` (inclusive: a product equal to
    its threshold is a candidate), rows ascending, columns ascending within a row."""
    g, thr = block
    _check(lambda a, b: filter_pairs(a, b, backend=backend), g, thr, backend)


@pytest.mark.claim("DEF1")
@pytest.mark.skipif("c" not in FILTER_BACKENDS, reason="the C extension lam_ref._filter is not built")
@given(blocks(max_rows=12), st.sampled_from([1, 2]))
def test_c_scan_threads_give_the_same_pairs(block, threads):
    """Claim DEF1, SPEC §5.3: the compiled scan on one thread and on two (the rows split in halves, the second half's pairs
    after the first's) returns the definition's pairs in its order."""
    g, thr = block
    _check(lambda a, b: _raw(prefilter._cfilter, a, b, threads), g, thr, f"threads={threads}")


def _raw(mod, g, thr, threads):
    r, c = mod.scan(np.ascontiguousarray(g), g.shape[0], g.shape[1], np.ascontiguousarray(thr), threads)
    return np.frombuffer(r, dtype=np.int64), np.frombuffer(c, dtype=np.int64)


@each_backend
def test_large_block_with_real_thresholds(backend):
    """A block the kernel sees (512 × 4,096 products of unit rows, more than the two-thread size),
    thresholds from :func:`filter_threshold`, near-duplicates planted: the definition's pairs."""
    rng = np.random.default_rng(3)
    r = rng.standard_normal((4096, 64)).astype(np.float32)
    r /= np.linalg.norm(r, axis=1, keepdims=True)
    b = r[rng.choice(4096, 512, replace=False)] + 0.01 * rng.standard_normal((512, 64)).astype(np.float32)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    g = b @ r.T
    assert g.size >= prefilter._SCAN_THREADS_MIN, "the block must take the two-thread path"
    n64 = np.einsum("ij,ij->i", b.astype(np.float64), b.astype(np.float64))
    thr = geometry.filter_threshold(n64, 1.0, geometry.delta_sq(0.95), 64)
    want = definition(g, thr)
    assert want[0].size >= 512, "every planted row must have a candidate"
    _check(lambda a, t: filter_pairs(a, t, backend=backend), g, thr, backend)


@pytest.mark.claim("DEF1")
@given(blocks())
def test_numpy_scans_both_ways(block):
    """Claim DEF1, SPEC §5.3: the numpy path scans hot rows one by one when few (≤ ``_ROW_SCAN``), with one 2-D ``nonzero``
    when many: both are the definition, ties included."""
    g, thr = block
    saved = prefilter._ROW_SCAN
    try:
        for scan in (0, 10**9):
            prefilter._ROW_SCAN = scan
            _check(lambda a, t: filter_pairs(a, t, backend="numpy"), g, thr, f"_ROW_SCAN={scan}")
    finally:
        prefilter._ROW_SCAN = saved


class _Recorder:
    """Stands in for the compiled module: records the thread count of each call, or refuses to be called."""

    def __init__(self, real, refuse: bool = False):
        self.real, self.refuse, self.threads = real, refuse, []

    def scan(self, g, rows, cols, thr, threads):
        assert not self.refuse, "backend='numpy' must not run the compiled scan"
        self.threads.append(threads)
        return self.real.scan(g, rows, cols, thr, threads)


@pytest.mark.skipif("c" not in FILTER_BACKENDS, reason="the C extension lam_ref._filter is not built")
def test_two_threads_only_for_a_large_block_and_numpy_means_numpy(monkeypatch):
    """A block below ``_SCAN_THREADS_MIN`` products is scanned on one thread, one at or above it on
    ``_THREADS``; ``backend='numpy'`` never calls the compiled scan."""
    rec = _Recorder(prefilter._cfilter)
    monkeypatch.setattr(prefilter, "_cfilter", rec)
    monkeypatch.setattr(prefilter, "_THREADS", 2)
    monkeypatch.setattr(prefilter, "_blas_limited", lambda: False)  # the BLAS rule has its own test
    small = np.zeros((2, 3), dtype=np.float32)
    edge = np.zeros((1, prefilter._SCAN_THREADS_MIN), dtype=np.float32)
    below = np.zeros((1, prefilter._SCAN_THREADS_MIN - 1), dtype=np.float32)
    for g in (small, below, edge):
        filter_pairs(g, np.ones(g.shape[0], dtype=np.float32))
    assert rec.threads == [1, 1, 2], f"threads per call: {rec.threads}"
    monkeypatch.setattr(prefilter, "_cfilter", _Recorder(None, refuse=True))
    _check(lambda a, t: filter_pairs(a, t, backend="numpy"), small, np.zeros(2, dtype=np.float32), "numpy")


@pytest.mark.parametrize(("env", "cpus", "want"), [
    ({}, 2, 2), ({}, 16, 2), ({}, 1, 1), ({"OMP_NUM_THREADS": "1"}, 2, 1), ({"OPENBLAS_NUM_THREADS": " 1 "}, 8, 1),
    ({"OMP_NUM_THREADS": "4"}, 8, 2)])
def test_scan_threads_rule(monkeypatch, env, cpus, want):
    """Two threads when at least two CPUs are ours, one when only one is or when the user limited
    OpenMP or OpenBLAS to one thread."""
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(v, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(prefilter.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    assert prefilter._scan_threads() == want, (env, cpus)


@pytest.mark.skipif("c" not in FILTER_BACKENDS, reason="the C extension lam_ref._filter is not built")
def test_a_threadpoolctl_limit_set_after_import_holds_for_the_scan(monkeypatch):
    """``threadpool_limits(1)`` on the BLAS, set after lam_ref was imported, makes a large block's scan
    one thread while it holds, and two again once it is lifted (the limit is read at each scan)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(i.get("user_api") == "blas" for i in threadpool_info()):
        pytest.skip("threadpoolctl sees no BLAS library here")
    rec = _Recorder(prefilter._cfilter)
    monkeypatch.setattr(prefilter, "_cfilter", rec)
    monkeypatch.setattr(prefilter, "_THREADS", 2)
    g = np.zeros((1, prefilter._SCAN_THREADS_MIN), dtype=np.float32)
    thr = np.ones(1, dtype=np.float32)
    with threadpool_limits(limits=2, user_api="blas"):
        if not all(i["num_threads"] == 2 for i in threadpool_info() if i.get("user_api") == "blas"):
            pytest.skip("this BLAS cannot be set to two threads here")
        filter_pairs(g, thr)
        with threadpool_limits(limits=1, user_api="blas"):
            filter_pairs(g, thr)
        filter_pairs(g, thr)
    assert rec.threads == [2, 1, 2], f"threads per call (BLAS at 2, limited to 1, back to 2): {rec.threads}"


def test_extension_is_built():
    """``pip install`` builds ``lam_ref._filter`` here; without it the exhaustive greedy misses its
    roof target (docs/performance.md). LAM_REF_PURE_PYTHON=1 runs the suite without a C compiler."""
    if os.environ.get("LAM_REF_PURE_PYTHON") == "1":
        pytest.skip("LAM_REF_PURE_PYTHON=1: the numpy filter alone is tested")
    assert "c" in FILTER_BACKENDS, "lam_ref._filter is not built: reinstall (`make venv`) with a C compiler"


def test_bad_input_named():
    """A wrong dtype or shape, an unknown backend, and ``backend='c'`` without the extension are refused
    with a message naming them."""
    g = np.zeros((2, 3), dtype=np.float32)
    t = np.zeros(2, dtype=np.float32)
    with pytest.raises(LamValueError, match="float64"):
        filter_pairs(g.astype(np.float64), t)
    with pytest.raises(LamValueError, match=r"g float32 \(2,\)"):
        filter_pairs(np.zeros(2, dtype=np.float32), t)
    with pytest.raises(LamValueError, match=r"thr float32 \(3,\)"):
        filter_pairs(g, np.zeros(3, dtype=np.float32))
    with pytest.raises(LamValueError, match="backend must be"):
        filter_pairs(g, t, backend="fortran")
    saved = prefilter._cfilter
    try:
        prefilter._cfilter = None
        with pytest.raises(LamValueError, match="lam_ref._filter is not built"):
            filter_pairs(g, t, backend="c")
    finally:
        prefilter._cfilter = saved


# -- hand-edited variants of _filter.c: each must fail the definition check -----------------------
MUTANTS = {
    "strict comparison (a tie is dropped)": ("if (r[j] >= t && push", "if (r[j] > t && push"),
    "row test misses the last column": ("for (Py_ssize_t j = 0; j < nc; j++) hit |=",
                                         "for (Py_ssize_t j = 0; j + 1 < nc; j++) hit |="),
    "second half's pairs first": ("int rc = scan_rows(g, 0, nr / 2, nc, thr, p);\n            pthread_join(t, NULL);",
                                  "pthread_join(t, NULL);\n            int rc = 0;\n"
                                  "            for (size_t k = 0; k < b.p.n; k++) rc = push(p, b.p.rows[k], b.p.cols[k]);\n"
                                  "            b.p.n = 0;\n            if (rc == 0) rc = scan_rows(g, 0, nr / 2, nc, thr, p);"),
    "threshold of the next row": ("const float t = thr[i];", "const float t = thr[i + 1 < i1 ? i + 1 : i];"),
}


def _build(tmp: Path, source: str):
    inc = sysconfig.get_paths()["include"]
    out = tmp / ("_filter" + sysconfig.get_config_var("EXT_SUFFIX"))
    (tmp / "_filter.c").write_text(source)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", f"-I{inc}", str(tmp / "_filter.c"), "-o", str(out), "-lpthread"],
                   check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location("_filter", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C variants")
@pytest.mark.parametrize("name", list(MUTANTS))
def test_c_variants_are_caught(name, tmp_path):
    """Each hand-edited _filter.c (a strict ``>``, a row test that skips the last column, the two
    halves' pairs out of order, another row's threshold) fails the checks above on the blocks they
    draw; the unedited source passes them."""
    old, new = MUTANTS[name]
    src = SOURCE.read_text()
    assert src.count(old) == 1, f"mutant {name!r}: the edited text must occur once in _filter.c"
    mod = _build(tmp_path, src.replace(old, new))
    rng = np.random.default_rng(11)
    caught = False
    for _ in range(200):
        rows, cols = int(rng.integers(2, 10)), int(rng.integers(1, 30))
        g = rng.choice(np.array(_VALUES[:6], dtype=np.float32), size=(rows, cols))
        thr = rng.choice(np.array([_T, 0.0], dtype=np.float32), size=rows)
        for threads in (1, 2):
            want = definition(g, thr)
            got = _raw(mod, g, thr, threads)
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                caught = True
    assert caught, f"the C variant {name!r} passed the definition check on 200 blocks"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C variants")
def test_unedited_source_built_here_passes(tmp_path):
    """The control of the variants above: the same build of the unedited _filter.c passes the same check."""
    mod = _build(tmp_path, SOURCE.read_text())
    rng = np.random.default_rng(11)
    for _ in range(200):
        rows, cols = int(rng.integers(2, 10)), int(rng.integers(1, 30))
        g = rng.choice(np.array(_VALUES[:6], dtype=np.float32), size=(rows, cols))
        thr = rng.choice(np.array([_T, 0.0], dtype=np.float32), size=rows)
        for threads in (1, 2):
            _check(lambda a, t, th=threads: _raw(mod, a, t, th), g, thr, f"unedited, threads={threads}")

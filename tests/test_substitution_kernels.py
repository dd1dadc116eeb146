"""The exhaustive and banded kernels of Algorithm 2 (SPEC §5): the dense banded path (band candidates
verified through blocked products) and the array-module ``device`` argument keep π exactly."""

from __future__ import annotations

import numpy as np
import pytest

from lam_ref import prefilter as _prefilter
from lam_ref import substitute
from lam_ref.bands import BandSettings, band_keys
from lam_ref.geometry import LamValueError
from lam_ref.substitution import _DENSE, Matcher

from .datagen import clustered, definition_pi


def banded_reference(e: np.ndarray, t: float, settings: BandSettings) -> np.ndarray:
    """Banded Algorithm 2 by its definition: candidates of arrival i are the retained y < i sharing
    a band key (same band, same code hash); π[i] is the lowest candidate passing the exact rule."""
    return np.asarray(definition_pi(e, t, band_keys(e, settings))[0])


@pytest.mark.claim("BAND")
@pytest.mark.parametrize(("d", "t"), [(16, 0.8), (24, 0.9)])
def test_dense_banded_path_equals_definition(d, t):
    """Claim BAND (soundness, and the candidate set is the band index's): with low-dimensional rows
    almost every pair shares a band, so blocks take the dense path; π must equal the definition."""
    e = clustered(np.random.default_rng(d), 1200, d, dup=0.3)
    s = BandSettings(r=2, rel=0.5)
    m = Matcher(t, d, settings=s)
    m.admit(e[:600])
    raw_r, _ = m._index.query(band_keys(e[600:1112], s, validated_unit=True), unique=False)
    assert raw_r.size * _DENSE >= 512 * m.n_retained, "the data must exercise the dense path"
    got = substitute(e, t, r=2, rel=0.5).pi
    assert np.array_equal(got, banded_reference(e, t, s)), "dense banded π must equal the banded definition"


@pytest.mark.claim("DEF1")
@pytest.mark.parametrize("dup", [0.05, 0.6])
def test_exhaustive_candidate_scans_equal_the_definition(dup, monkeypatch):
    """Claim DEF1 (exhaustive mode equals the definition) with every scan of the blocked products
    (:func:`lam_ref.prefilter.filter_pairs`): the compiled one, and the numpy one with hot rows
    scanned row by row when few (≤ ``_ROW_SCAN``) and with one 2-D ``nonzero`` when many. ``dup =
    0.6`` puts more than ``_ROW_SCAN`` hot rows in a block, and each scan is also forced on the
    whole input."""
    e = clustered(np.random.default_rng(7), 1100, 12, dup=dup)
    want = np.asarray(definition_pi(e, 0.9)[0])
    m = Matcher(0.9, 12, exhaustive=True)
    m.admit(e[:512])
    b = e[512:1024]
    g = b @ m.retained_embeddings.T
    from lam_ref.geometry import filter_threshold

    thr = filter_threshold(np.einsum("ij,ij->i", b.astype(np.float64), b.astype(np.float64)),
                           float(m._norms[: m.n_retained].min()), m.d2, 12)
    hot = int((g.max(axis=1) >= thr).sum())
    if dup > 0.5:
        assert hot > _prefilter._ROW_SCAN, f"the data must put more than {_prefilter._ROW_SCAN} hot rows in a block (got {hot})"
    assert np.array_equal(substitute(e, 0.9, exhaustive=True).pi, want), "exhaustive π must equal the definition"
    monkeypatch.setattr(_prefilter, "_cfilter", None)  # the numpy scans
    for scan in (0, 10**9):  # always the 2-D nonzero; always row by row
        monkeypatch.setattr(_prefilter, "_ROW_SCAN", scan)
        assert np.array_equal(substitute(e, 0.9, exhaustive=True).pi, want), \
            f"exhaustive π with the numpy scan, _ROW_SCAN = {scan}, must equal the definition"


def test_cuda_without_cupy_names_device():
    """``device='cuda'`` on a machine without cupy/CUDA is refused in one line naming ``device``."""
    try:
        import cupy  # noqa: F401

        pytest.skip("cupy is installed; the refusal needs a machine without it")
    except ImportError:
        pass
    e = clustered(np.random.default_rng(0), 10, 8)
    with pytest.raises(LamValueError, match="device 'cuda'") as err:
        substitute(e, 0.9, exhaustive=True, device="cuda")
    assert "\n" not in str(err.value), "the message is one line"


def test_unknown_device_refused():
    e = clustered(np.random.default_rng(0), 10, 8)
    with pytest.raises(LamValueError, match=r"device must be one of cpu, cuda, got 'tpu'"):
        substitute(e, 0.9, exhaustive=True, device="tpu")


@pytest.mark.gpu
def test_cuda_exhaustive_equals_cpu():
    """On a CUDA machine the float32 products run on the GPU; the exact confirmation stays on the
    host, so π, distances and pairs verified are identical to the CPU run."""
    pytest.importorskip("cupy")
    e = clustered(np.random.default_rng(3), 3000, 64, dup=0.2)
    a = substitute(e, 0.9, exhaustive=True)
    b = substitute(e, 0.9, exhaustive=True, device="cuda")
    assert np.array_equal(a.pi, b.pi), "π must not depend on the device"
    assert np.array_equal(a.distances, b.distances), "distances come from the same host rule"
    assert a.pairs_verified == b.pairs_verified, "pairs verified are counted the same way"

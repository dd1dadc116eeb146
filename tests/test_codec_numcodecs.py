"""The numcodecs codec ``lam_ref.cuszp_plain`` under numcodecs' own test helpers and in a real zarr
array (SPEC §9; issue 23 §4: the codec must be safe wherever numcodecs codecs are used).

numcodecs' ``check_encode_decode`` encodes a numpy array, its ``bytes``, ``bytearray`` and
``array.array('b')`` copies, decodes from ``bytes``, ``bytearray``, ``array.array``, a ``u1``
numpy array, into ``out=`` a numpy array and a ``bytearray``, and compares each result viewed as
the input's dtype; ``check_config`` round-trips the configuration through JSON and the registry;
``check_backwards_compatibility`` decodes the committed streams under
``tests/fixtures/numcodecs/fixture/lam_ref.cuszp_plain`` and compares them with the committed
arrays. The helpers are the installed numcodecs' (``numcodecs.tests.common``, up to 0.16) or,
for numcodecs 0.17 and later, which no longer install them, the verbatim copy of upstream's in
``tests/numcodecs_common.py``. The input rules these rest on (docstring of :class:`~lam_ref.codec.CuSZpPlain`): numpy
arrays must be native float32, raw bytes come only from bytes-like objects that are not numpy
arrays, big-endian input is refused. Precision: ``assert_array_almost_equal(decimal=d)`` allows
``1.5·10⁻ᵈ``, above each codec's bound ``eb`` (SPEC §9.3) on these arrays (``|x| ≤ 10``).
"""

from __future__ import annotations

import array
from pathlib import Path

import numpy as np
import pytest

numcodecs = pytest.importorskip("numcodecs")
from . import numcodecs_common  # noqa: E402

try:  # numcodecs <= 0.16 installs its helpers; 0.17 and later do not (tests/numcodecs_common.py)
    from numcodecs.tests import common as _installed_common  # noqa: E402
except ImportError:
    _installed_common = None

#: The helper sets run here: upstream's verbatim copy always (so it cannot rot on a numcodecs
#: that still ships its own), the installed numcodecs' own where it has them.
HELPERS = {"vendored": numcodecs_common}
if _installed_common is not None:
    HELPERS["installed"] = _installed_common

from lam_ref.codec import CODEC_ID, CuSZpPlain, codec_encode  # noqa: E402
from lam_ref.geometry import LamValueError  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "numcodecs"

#: (codec, decimal precision of the comparison): eb = 1e-3 < 1.5e-2; rel_eb·max|x| <= 1e-2 < 0.15.
#: The last three write version 2 (SPEC §9.6): plain, strict, and a fixed column count.
CODECS = [
    (CuSZpPlain(eb=1e-3), 2),
    (CuSZpPlain(rel_eb=1e-3), 1),
    (CuSZpPlain(eb=0.01, block_size=8), 1),
    (CuSZpPlain(eb=1e-3, version=2), 2),
    (CuSZpPlain(rel_eb=1e-3, version=2, strict=True), 1),
    (CuSZpPlain(eb=1e-3, version=2, strict=True, cols=1), 2),
]
IDS = ["eb", "rel_eb", "block8", "v2", "v2_strict_rel", "v2_cols1"]


def _arrays() -> dict[str, np.ndarray]:
    """1-D to 4-D, C and Fortran order, non-contiguous views and empty arrays, all float32, |x| <= 10."""
    rng = np.random.default_rng(23)
    base = rng.uniform(-10, 10, size=(3, 4, 5, 6)).astype(np.float32)
    return {
        "1d": np.linspace(-10, 10, 1000, dtype=np.float32),
        "2d_C": base.reshape(12, 30).copy(),
        "2d_F": np.asfortranarray(base.reshape(12, 30)),
        "3d_C": base.reshape(3, 20, 6).copy(),
        "3d_F": np.asfortranarray(base.reshape(3, 20, 6)),
        "4d_C": base.copy(),
        "4d_F": np.asfortranarray(base),
        "1d_strided": np.linspace(-5, 5, 301, dtype=np.float32)[::3],
        "2d_noncontiguous": base.reshape(12, 30)[:, 1::4],
        "4d_noncontiguous": base[:, ::2, 1:, ::3],
        "empty_1d": np.zeros(0, dtype=np.float32),
        "empty_3d": np.zeros((2, 0, 3), dtype=np.float32),
    }


@pytest.mark.parametrize("helpers", list(HELPERS))
@pytest.mark.parametrize("kind", list(_arrays()))
@pytest.mark.parametrize("codec,decimal", CODECS, ids=IDS)
def test_spec9_numcodecs_check_encode_decode(kind, codec, decimal, helpers):
    """SPEC §9.3 through numcodecs' own harness: every encode input kind, every decode buffer kind
    and ``out=`` (numpy and bytearray) give the array back within the bound, viewed as float32."""
    arr = _arrays()[kind]
    HELPERS[helpers].check_encode_decode(arr, codec, precision=decimal)


class _IgnoresOut(CuSZpPlain):
    """Wrong on purpose: decodes into a fresh array and leaves ``out=`` untouched."""

    def decode(self, buf, out=None):
        return super().decode(buf)


class _OffByTwoBounds(CuSZpPlain):
    """Wrong on purpose: every decoded value 2·eb off."""

    def decode(self, buf, out=None):
        dec = np.asarray(super().decode(buf)).copy()
        dec += np.float32(2 * self.eb)
        if out is not None:
            np.asarray(memoryview(out).cast("B")).view(np.float32).reshape(-1)[:] = dec.reshape(-1)
            return out
        return dec


@pytest.mark.parametrize("helpers", list(HELPERS))
@pytest.mark.parametrize("wrong", [_IgnoresOut, _OffByTwoBounds], ids=["ignores-out", "2eb-off"])
def test_the_helpers_catch_a_wrong_codec(helpers, wrong):
    """Each helper set fails a codec that is wrong on purpose (the checks above can fail)."""
    arr = _arrays()["1d"]
    with pytest.raises(AssertionError):
        HELPERS[helpers].check_encode_decode(arr, wrong(eb=0.05), precision=2)


@pytest.mark.parametrize("codec", [c for c, _ in CODECS] + [CuSZpPlain()], ids=IDS + ["default"])
@pytest.mark.parametrize("helpers", list(HELPERS))
def test_numcodecs_check_config(codec, helpers):
    """The configuration survives JSON and the registry (numcodecs ``check_config``)."""
    HELPERS[helpers].check_config(codec)
    assert numcodecs.get_codec(codec.get_config()).codec_id == CODEC_ID, "the registry must resolve our id"


def _fixture_arrays() -> list[np.ndarray]:
    a = _arrays()
    return [a["1d"], a["2d_C"], a["2d_F"], a["3d_C"], a["4d_F"], a["empty_1d"]]


@pytest.mark.parametrize("helpers", list(HELPERS))
def test_spec9_numcodecs_backwards_compatibility(monkeypatch, helpers):
    """The committed streams decode, under numcodecs' ``check_backwards_compatibility``, to the
    committed arrays within each codec's bound, and each codec's committed configuration still
    resolves to the same codec. The files must all be present first: the helper would otherwise
    write missing ones and compare them with themselves."""
    root = FIXTURES / "fixture" / CODEC_ID
    arrays = _fixture_arrays()
    expected = [root / f"array.{i:02d}.npy" for i in range(len(arrays))]
    for j in range(len(CODECS)):
        expected.append(root / f"codec.{j:02d}" / "config.json")
        expected += [root / f"codec.{j:02d}" / f"encoded.{i:02d}.dat" for i in range(len(arrays))]
    missing = [str(p.relative_to(FIXTURES)) for p in expected if not p.is_file()]
    assert not missing, f"committed numcodecs fixtures missing: {missing}"
    monkeypatch.chdir(FIXTURES)
    HELPERS[helpers].check_backwards_compatibility(CODEC_ID, arrays, [c for c, _ in CODECS],
                                                   precision=[d for _, d in CODECS])
    # the streams are pinned too: today's encoder writes the committed bytes
    for j, (codec, _) in enumerate(CODECS):
        for i, arr in enumerate(arrays):
            blob = (root / f"codec.{j:02d}" / f"encoded.{i:02d}.dat").read_bytes()
            assert codec.encode(arr) == blob, f"codec {j} array {i}: the stream format changed"


# ----------------------------------------------------------------------------------------------
# input rules (issue 23 §4)


@pytest.mark.parametrize("dtype", ["u1", "i1", "S1", "V1", "u2", "i4", "f2", "f8"])
def test_non_float32_numpy_arrays_are_refused(dtype):
    """A numpy array that is not float32 is refused with its dtype named, 1-byte arrays included
    (a zarr array of small integers must not come back as reinterpreted floats)."""
    raw = np.linspace(-1, 1, 8, dtype=np.float32).tobytes()
    buf = np.frombuffer(raw, dtype=dtype)
    with pytest.raises(LamValueError, match=rf"^buf must be a float32 numpy array, got dtype {buf.dtype}; "):
        CuSZpPlain(eb=0.01).encode(buf)


def test_raw_bytes_only_from_bytes_like_objects():
    """``bytes``, ``bytearray``, ``memoryview`` (1-byte or float32 items) and ``array.array``
    are the stream of the float32 values they hold; a memoryview of int32 items is refused."""
    x = np.array([0.25, -1.5, 3.0, 0.0, 7.5], dtype=np.float32)
    ref = codec_encode(x, 0.01)
    c = CuSZpPlain(eb=0.01)
    raw = x.tobytes()
    for buf in (raw, bytearray(raw), memoryview(raw), memoryview(x), array.array("b", raw), array.array("f", x)):
        assert c.encode(buf) == ref, f"{type(buf).__name__} ({memoryview(buf).format}) must read as the float32 values"
    with pytest.raises(LamValueError, match=r"^buf is a memoryview of item format 'i': "):
        c.encode(memoryview(np.arange(4, dtype=np.int32)))
    with pytest.raises(LamValueError, match=r"^buf must be a float32 numpy array or bytes-like .*got int$"):
        c.encode(12)


def test_big_endian_is_refused_on_encode_and_out():
    """``>f4`` input is refused (the stream cannot record byte order; a native result would be
    read back as ``>f4`` by numcodecs or zarr), and so is a ``>f4`` or integer ``out``."""
    c = CuSZpPlain(eb=1e-3)
    x = np.linspace(-1, 1, 40, dtype=np.float32)
    with pytest.raises(LamValueError, match=r"^buf has dtype >f4 \(non-native byte order\)"):
        c.encode(x.astype(">f4"))
    enc = c.encode(x)
    with pytest.raises(LamValueError, match=r"^out has dtype >f4 \(non-native byte order\)"):
        c.decode(enc, out=np.empty(40, dtype=">f4"))
    with pytest.raises(LamValueError, match=r"^out must be a float32 numpy array, got dtype uint8"):
        c.decode(enc, out=np.empty(160, dtype="u1"))
    out = bytearray(160)
    c.decode(enc, out=out)
    got = np.frombuffer(bytes(out), dtype="<f4")
    assert np.abs(got - x).max() <= 1e-3, "a bytearray out= receives the little-endian float32 bytes"


# ----------------------------------------------------------------------------------------------
# a real zarr array


zarr = pytest.importorskip("zarr")


def _zarr_array(tmp_path, dtype, codec, shape=(50, 24), chunks=(16, 24)):
    """A format-2 zarr array compressed with ``codec``: zarr 3's ``create_array``, or on zarr 2 (the
    last for Python 3.10) its ``open_array(mode="w", compressor=...)``."""
    store = str(tmp_path / "a.zarr")
    if hasattr(zarr, "create_array"):
        return zarr.create_array(store=store, shape=shape, chunks=chunks, dtype=dtype,
                                 zarr_format=2, compressors=codec, fill_value=0)
    return zarr.open_array(store, mode="w", shape=shape, chunks=chunks, dtype=dtype, compressor=codec, fill_value=0)


def _stored_compressor(tmp_path) -> dict:
    """The compressor configuration the store itself records (``.zarray``, zarr format 2)."""
    import json

    return json.loads((tmp_path / "a.zarr" / ".zarray").read_text())["compressor"]


def test_spec9_zarr_v2_round_trip(tmp_path):
    """A zarr (format 2) array with ``CuSZpPlain`` as compressor, partial edge chunks included,
    reads back within ``eb`` on every value, and the store holds our codec's configuration."""
    rng = np.random.default_rng(5)
    x = rng.normal(scale=0.1, size=(50, 24)).astype(np.float32)
    z = _zarr_array(tmp_path, "<f4", CuSZpPlain(eb=1e-3))
    z[:] = x
    back = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
    y = back[:]
    assert y.dtype == np.float32 and y.shape == x.shape, f"read back {y.dtype} {y.shape}"
    err = float(np.abs(y.astype(np.float64) - x).max())
    assert err <= 1e-3, f"zarr round trip error {err} exceeds eb = 1e-3"
    assert err > 0.0, "the codec is lossy: an exact round trip means it was not applied"
    cfg = _stored_compressor(tmp_path)
    assert cfg["id"] == CODEC_ID and cfg["eb"] == 1e-3, f"stored compressor config {cfg}"


def test_spec9_zarr_v2_round_trip_of_stream_version_2(tmp_path):
    """Stream version 2, strict, as a zarr compressor: every value read back within ``eb`` exactly
    (float64), each chunk a version-2 stream with one column per embedding dimension (24)."""
    rng = np.random.default_rng(6)
    x = rng.normal(scale=0.1, size=(50, 24)).astype(np.float32)
    x[30:40] = x[0:10]  # repeated rows: the row-repeat section
    z = _zarr_array(tmp_path, "<f4", CuSZpPlain(eb=1e-3, version=2, strict=True))
    z[:] = x
    back = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
    y = back[:]
    err = np.abs(y.astype(np.float64) - x.astype(np.float64))
    assert float(err.max()) <= 1e-3, f"strict zarr round trip error {err.max()} exceeds eb = 1e-3"
    cfg = _stored_compressor(tmp_path)
    assert (cfg["version"], cfg["strict"], cfg["cols"]) == (2, True, None), f"stored compressor config {cfg}"
    blob = (tmp_path / "a.zarr" / "0.0").read_bytes()
    assert blob[:6] == b"LSZP\x02\x01" and blob[6:8] == (24).to_bytes(2, "little"), f"chunk header {blob[:8]!r}"


def test_zarr_chunks_of_repeated_rows_read_back(tmp_path):
    """Issue 39 §2: a zarr chunk of 200 rows from 2 distinct ones is a version-2 stream with far fewer
    bits than values; the decoder used to refuse it ("cannot hold n values"): data that could never be
    read back. Every value comes back within eb (strict)."""
    rng = np.random.default_rng(39)
    rows = rng.normal(scale=0.1, size=(2, 24)).astype(np.float32)
    x = rows[rng.integers(0, 2, size=400)]
    z = _zarr_array(tmp_path, "<f4", CuSZpPlain(eb=1e-3, version=2, strict=True), shape=(400, 24), chunks=(200, 24))
    z[:] = x
    blob = (tmp_path / "a.zarr" / "0.0").read_bytes()
    assert 8 * (len(blob) - 28) < 200 * 24, f"the chunk must hold fewer bits than values ({len(blob)} bytes)"
    y = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[:]
    err = np.abs(y.astype(np.float64) - x.astype(np.float64))
    assert float(err.max()) <= 1e-3, f"zarr round trip error {err.max()} exceeds eb = 1e-3"


def test_version_2_config_round_trip_and_refusals():
    """get_config / from_config keep version, strict and cols; bad combinations are refused by name."""
    codec = CuSZpPlain(rel_eb=1e-3, version=2, strict=True, cols=384)
    cfg = codec.get_config()
    assert cfg == {"id": CODEC_ID, "block_size": 32, "rel_eb": 1e-3, "version": 2, "strict": True, "cols": 384}, cfg
    again = numcodecs.get_codec(cfg)
    assert again.get_config() == cfg and repr(again) == repr(codec), f"round trip gave {again!r}"
    assert "version" not in CuSZpPlain(eb=0.1).get_config(), "version 1's configuration must stay as committed"
    with pytest.raises(LamValueError, match="strict=True needs version=2"):
        CuSZpPlain(eb=0.1, strict=True)
    with pytest.raises(LamValueError, match="cols is a version-2 setting"):
        CuSZpPlain(eb=0.1, cols=4)
    with pytest.raises(LamValueError, match="cols must"):
        CuSZpPlain(eb=0.1, version=2, cols=4).encode(np.zeros(6, dtype=np.float32))


@pytest.mark.parametrize("dtype", ["u1", "i1", ">f4"])
def test_zarr_refuses_what_it_would_misread(tmp_path, dtype):
    """Writing a small-integer or big-endian zarr array through the codec raises our error
    instead of storing data that reads back as zeros or as byte-swapped floats."""
    z = _zarr_array(tmp_path, dtype, CuSZpPlain(eb=1e-3), shape=(8,), chunks=(8,))
    with pytest.raises(LamValueError, match=r"^buf (must be a float32 numpy array|has dtype >f4)"):
        z[:] = np.arange(8).astype(dtype)

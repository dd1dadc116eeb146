"""Golden fixtures and the independent pure-Python reference encoder (SPEC §9).

The fixture bytes in tests/fixtures/codec/ were generated once by make_fixtures.py, which writes
them only when lam_ref.codec and the slow reference (reference_codec.py, written from the spec,
no numpy) agree. Here both encoders must still reproduce them, and both decoders must agree.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.codec import codec_decode, codec_encode, relative_eb

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "codec"
_spec = importlib.util.spec_from_file_location("lam_reference_codec", FIXTURES / "reference_codec.py")
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

CASES = sorted(p.name[: -len(".json")] for p in FIXTURES.glob("*.json"))


def test_fixture_set_is_complete():
    assert len(CASES) == 9, f"expected the 9 committed cases, found {CASES}"
    for name in CASES:
        for suffix in (".input.npy", ".bin"):
            assert (FIXTURES / f"{name}{suffix}").is_file(), f"fixture {name}{suffix} is missing"


def _load(name: str) -> tuple[np.ndarray, dict, bytes]:
    x = np.load(FIXTURES / f"{name}.input.npy", allow_pickle=False)
    meta = json.loads((FIXTURES / f"{name}.json").read_text())
    return x, meta, (FIXTURES / f"{name}.bin").read_bytes()


@pytest.mark.parametrize("name", CASES)
def test_fixture_bytes_match_both_encoders(name):
    x, meta, expected = _load(name)
    assert hashlib.sha256(expected).hexdigest() == meta["sha256"], f"{name}.bin does not match its recorded sha256"
    eb = meta["eb"] if "eb" in meta else relative_eb(x, meta["rel_eb"])
    assert eb == meta["eb_used"], f"{name}: eb {eb!r} differs from the recorded {meta['eb_used']!r}"
    mine = codec_encode(x, eb, block_size=meta["block_size"])
    assert mine == expected, f"{name}: lam_ref.codec bytes differ from the fixture"
    theirs = ref.encode([float(v) for v in x], eb, meta["block_size"])
    assert theirs == expected, f"{name}: reference encoder bytes differ from the fixture"


@pytest.mark.parametrize("name", CASES)
def test_fixture_decodes_agree(name):
    x, meta, expected = _load(name)
    dec = codec_decode(expected)
    assert dec.shape == (meta["n"],), f"{name}: decoded shape {dec.shape}"
    assert [float(v) for v in dec] == ref.decode(expected), f"{name}: numpy and reference decoders disagree"


finite32 = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, width=32)


@given(
    values=st.lists(finite32, max_size=150),
    eb=st.sampled_from([1e-3, 0.01, 0.1, 0.5, 3.0]),
    block=st.sampled_from([8, 16, 32, 64]),
)
def test_numpy_encoder_equals_reference_encoder(values, eb, block):
    """Claim (SPEC §9): the vectorised encoder writes exactly the bytes of the spec's rule.

    Shown to fail on deliberately wrong implementations: a round-half-to-even quantizer
    (``np.rint``: ties such as y = 0.5 differ), bits packed least significant first within a byte
    (``np.packbits(..., bitorder="little")``), and padding slots given the delta ``0 - q_last``
    instead of 0.
    """
    x = np.array(values, dtype=np.float32)
    mine = codec_encode(x, eb, block_size=block)
    theirs = ref.encode([float(v) for v in x], eb, block)
    assert mine == theirs, f"encoders disagree on n={x.size}, eb={eb}, block={block}"
    assert [float(v) for v in codec_decode(mine)] == ref.decode(theirs), "decoders disagree"


# ----------------------------------------------------------------------------------------------
# version 2 (SPEC §9.6): tests/fixtures/codec_v2, written once by its make_fixtures.py

FIXTURES_V2 = Path(__file__).resolve().parent / "fixtures" / "codec_v2"
CASES_V2 = sorted(p.name[: -len(".json")] for p in FIXTURES_V2.glob("*.json"))


def test_v2_fixture_set_is_complete():
    assert len(CASES_V2) == 8, f"expected the 8 committed version-2 cases, found {CASES_V2}"
    for name in CASES_V2:
        for suffix in (".input.npy", ".bin"):
            assert (FIXTURES_V2 / f"{name}{suffix}").is_file(), f"fixture {name}{suffix} is missing"


@pytest.mark.parametrize("name", CASES_V2)
def test_v2_fixture_bytes_and_decodes(name):
    """The committed bytes: both encoders (C when built, and the reference) reproduce them, both
    decoders agree bit for bit, and the decode is checked against the original input alone: within
    the version-1 bound, and within ``eb`` exactly (float64) for the strict cases."""
    from lam_ref import codec as codec_mod

    x = np.load(FIXTURES_V2 / f"{name}.input.npy", allow_pickle=False)
    meta = json.loads((FIXTURES_V2 / f"{name}.json").read_text())
    expected = (FIXTURES_V2 / f"{name}.bin").read_bytes()
    assert hashlib.sha256(expected).hexdigest() == meta["sha256"], f"{name}.bin does not match its recorded sha256"
    assert expected[:5] == b"LSZP\x02", f"{name}: not a version-2 stream"
    assert expected[5] == (1 if meta["strict"] else 0), f"{name}: flags byte {expected[5]} vs strict={meta['strict']}"
    kw = {"version": 2, "cols": meta["cols"], "strict": meta["strict"]}
    backends = ["numpy"] + (["c"] if codec_mod.C_BUILT else [])
    for backend in backends:
        got = codec_encode(x, meta["eb"], backend=backend, **kw)
        assert got == expected, f"{name}: the {backend} encoder's bytes differ from the fixture"
    decs = [codec_decode(expected, backend=b) for b in backends]
    for d in decs[1:]:
        assert np.array_equal(d.view(np.uint32), decs[0].view(np.uint32)), f"{name}: decoders disagree"
    dec = decs[0].astype(np.float64)
    assert dec.shape == (meta["n"],), f"{name}: decoded shape {dec.shape}"
    err = np.abs(dec - x.astype(np.float64))
    slack = np.spacing(np.abs(decs[0])).astype(np.float64) / 2 + 2.0**-52 * (np.abs(x) + meta["eb"])
    assert (err <= meta["eb"] + slack).all(), f"{name}: error {err.max() if err.size else 0} beyond eb + slack"
    if meta["strict"]:
        assert (err <= meta["eb"]).all(), f"{name}: strict error {err.max()} > eb = {meta['eb']}"

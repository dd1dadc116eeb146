"""``lam-ref substitute`` and ``lam-ref bands``: JSON agrees with the library, errors name the input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lam_ref import band_recall, oracle
from lam_ref.cli import main

from .datagen import clustered


@pytest.fixture()
def emb_file(tmp_path):
    e = clustered(np.random.default_rng(5), 300, 16, dup=0.4)
    path = tmp_path / "e.npy"
    np.save(path, e)
    return path, e


def test_substitute_json_matches_oracle(emb_file, capsys, tmp_path):
    path, e = emb_file
    assert main(["substitute", str(path), "-t", "0.9", "--exhaustive", "--json", "-", "--map-out", str(tmp_path / "pi.npy")]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = oracle(e, 0.9)
    assert out["pi"] == ref.pi.tolist(), "CLI π must be the oracle's"
    assert out["kept"] == ref.kept_count and float(out["delta_hat"]) == ref.delta_hat, "kept and δ̂ must agree"
    assert out["deletion_digest"] == ref.deletion_digest and out["map_digest"] == ref.map_digest, "digests must agree"
    assert np.array_equal(np.load(tmp_path / "pi.npy"), ref.pi), "--map-out writes π"


def test_substitute_table_shows_digests(emb_file, capsys):
    path, e = emb_file
    assert main(["substitute", str(path), "-t", "0.9"]) == 0
    text = capsys.readouterr().out
    assert "deletion digest" in text and "δ̂" in text, f"table must name its columns: {text}"


def test_bands_json_matches_library(emb_file, capsys):
    path, e = emb_file
    assert main(["bands", str(path), "-t", "0.9", "--r", "2", "4", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["r"] for o in out] == [2, 4], "one row per band width"
    for o in out:
        ref = band_recall(e, 0.9, r=o["r"], rel=0.2)
        assert (o["recall"], o["candidate_rate"]) == (ref.recall, ref.candidate_rate), "CLI must report the library's figures"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["substitute", "MISSING.npy"], "MISSING.npy"),
        (["substitute", "{path}", "-t", "1.5"], "t must be in [-1, 1], got 1.5"),
        (["substitute", "{path}", "--rel", "0"], "rel must be a positive finite number"),
        (["bands", "{path}", "--r", "0"], "r must be a positive integer, got 0"),
        (["substitute", "{bad}"], "not a readable .npy"),
    ],
)
def test_cli_errors_name_the_input(argv, fragment, emb_file, capsys, tmp_path):
    path, _ = emb_file
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"garbage")
    argv = [a.format(path=path, bad=bad) for a in argv]
    assert main(argv) == 2, "bad input exits with status 2"
    err = capsys.readouterr().err
    assert fragment in err, f"stderr {err!r} should contain {fragment!r}"

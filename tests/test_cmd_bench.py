"""``lam-ref bench constants``: the profile it writes is complete and usable by ``lam-ref model``.

No speed is asserted here (speed lives in ``benchmarks/``); the tests check that every constant is
measured or sourced, that the file is a valid device profile, and that bad arguments are refused.
"""

from __future__ import annotations

import json
import math

import pytest

from lam_ref import costmodel as cm
from lam_ref.cli import main
from lam_ref.text.loaders import shared_data_dir

SHARED = shared_data_dir()


def test_constants_profile_roundtrip(tmp_path, capsys):
    out = tmp_path / "profile.json"
    assert main(["bench", "constants", "--quick", "--encoder", "hash-64", "--out", str(out), "--name", "t"]) == 0
    doc = json.loads(out.read_text())
    prof = cm.load_profile(out)
    assert prof.name == "t", "profile name is the one given"
    for f in cm._FIELDS:
        v = getattr(prof, f)
        assert math.isfinite(v) and v > 0, f"{f} must be positive and finite, got {v}"
        assert doc["profile"]["sources"][f], f"{f} must name its source"
    assert doc["profile"]["sources"]["encoder_tok_s"].startswith("measured"), "encoder rate is measured"
    capsys.readouterr()
    assert main(["model", "--device", str(out), "--table", "8", "--json"]) == 0, "the profile drives the model"
    rows = json.loads(capsys.readouterr().out)["tables"]["8"]
    assert all(r["gain"] > 1 for r in rows), "testing first must beat deleting in place on any device"


@pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (or set LAM_SHARED_DATA)")
def test_beta_measured_on_trajectories(tmp_path):
    from lam_ref.constants import measure_beta

    m = measure_beta(SHARED)
    assert m["value"] is not None and 1.0 < m["value"] < 8.0, f"bytes per cl100k token of English/code text, got {m}"


def test_bad_out_and_data_exit_2(tmp_path, capsys):
    assert main(["bench", "constants", "--quick", "--out", str(tmp_path)]) == 2, "a folder as --out is refused"
    assert "--out" in capsys.readouterr().err, "the message names --out"
    assert main(["bench", "constants", "--quick", "--data", str(tmp_path / "missing")]) == 2, "missing --data"
    assert "--data" in capsys.readouterr().err, "the message names --data"

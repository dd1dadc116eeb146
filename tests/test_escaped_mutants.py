"""Tests that kill one-line mutations of the library which the rest of the suite let through.

Each test names the mutation it kills; each was confirmed to fail with the mutation applied
(see ``docs/mutation.md`` for the mutation-testing run these came from).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest

from lam_ref.claims import ClaimResult, combine, registry
from lam_ref.claims.hull import HULL_TOL
from lam_ref.online import OnlineSession, SessionFileError
from lam_ref.verify import aggregate, verify_set

from .datagen import clustered


def _two_sets() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    tight = clustered(rng, 24, 8, spread=(0.01, 0.05))
    loose = clustered(rng, 24, 8, spread=(0.2, 0.4))
    return tight, loose


@pytest.mark.claim("GEMLINK")
def test_aggregate_takes_each_key_by_its_declared_rule_over_two_sets():
    """Over two sets the aggregated energy is the *smaller* one (a bound that holds on every
    set), counts add up and flags are conjunctions. Kills: energy aggregated by ``max``."""
    reps = [verify_set(e, 0.9, n_queries=16, name=f"s{i}") for i, e in enumerate(_two_sets())]
    energies = [r.results["GEMLINK"].measured["energy"] for r in reps]
    assert energies[0] != energies[1], f"the two sets must differ in energy to tell min from max: {energies}"
    agg = {r.claim: r for r in aggregate(reps)}
    assert agg["GEMLINK"].measured["energy"] == min(energies), f"energy {agg['GEMLINK'].measured} vs {energies}"
    assert agg["DEF1"].measured["n"] == 48, f"counts add up: {agg['DEF1'].measured}"
    assert agg["THM1"].measured["queries"] == sum(r.results["THM1"].measured["queries"] for r in reps), "queries add"
    assert agg["THM1"].measured["max_deficit_sampled"] == max(
        r.results["THM1"].measured["max_deficit_sampled"] for r in reps
    ), "deficits take the max"
    kept = sum(r.results["THM2"].measured["kept"] for r in reps)
    assert agg["THM2"].measured["attained"] == 1 - kept / 48, "rates are recomputed from the summed counts"


@pytest.mark.claim("GEMLINK")
def test_combine_refuses_a_key_without_an_aggregation_rule():
    """An unlisted measured key is an error, never a silent ``max``."""
    rows = [ClaimResult("GEMLINK", True, {"energy": 0.9, "surprise": 1.0}), ClaimResult("GEMLINK", True, {"energy": 0.8, "surprise": 2.0})]
    with pytest.raises(ValueError, match="no aggregation rule for measured key 'surprise'"):
        combine(registry()["GEMLINK"], rows)


@pytest.mark.claim("HULL")
def test_hull_rule_is_tight():
    """The HULL rule fails when a query beats the solved supremum, or the certificate leaves a
    gap, by more than the QP's accuracy. Kills: a HULL tolerance loosened (e.g. to 1e9)."""
    holds = registry()["HULL"].holds
    ok = {"sup_deficit": 0.3, "max_deficit_sampled": 0.1, "max_deficit_all": 0.3, "delta_hat": 0.31,
          "complete": True, "certificate_gap": 0.0}
    assert holds(ok) is True, "a consistent measurement holds"
    assert HULL_TOL <= 1e-9, f"the QP tolerance must stay at the solver's accuracy, got {HULL_TOL}"
    assert holds({**ok, "max_deficit_all": 0.3 + 1e-6}) is False, "a query beating the supremum must fail"
    assert holds({**ok, "certificate_gap": 1e-6}) is False, "an uncertified supremum must fail"
    assert holds({**ok, "sup_deficit": 0.32, "max_deficit_all": 0.32}) is False, "a supremum above δ̂ must fail"


def _rewrite(path, tmp_path, name: str, **arrays: np.ndarray):
    """A copy of a session file with some arrays replaced and the checksums recomputed."""
    with zipfile.ZipFile(path) as zf:
        header = json.loads(zf.read("header.json"))
        blobs = {n[:-4]: zf.read(n) for n in zf.namelist() if n.endswith(".npy")}
    for key, arr in arrays.items():
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        blobs[key] = buf.getvalue()
    header["sha256"] = {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()}
    out = tmp_path / name
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("header.json", json.dumps(header))
        for key, blob in blobs.items():
            zf.writestr(key + ".npy", blob)
    return out


@pytest.mark.claim("ONLINE")
def test_load_refuses_a_session_whose_map_disagrees_with_its_retained_set(tmp_path):
    """A file with valid checksums whose map, retained ids or counts disagree is refused (the
    restored session would decide differently from one that never stopped, SPEC §6). Kills:
    ``OnlineSession.load``'s consistency check disabled."""
    e = clustered(np.random.default_rng(0), 40, 8)
    s = OnlineSession(0.9)
    s.admit(e)
    path = s.save(tmp_path / "a.lam")
    merged = int(np.flatnonzero(s.pi != np.arange(40))[0])
    pi = s.pi.copy()
    pi[merged] = merged  # claims a row is retained that is not in the retained set
    with pytest.raises(SessionFileError, match="inconsistent"):
        OnlineSession.load(_rewrite(path, tmp_path, "pi.lam", pi=pi))
    lengths = np.array([41], dtype=np.int64)
    with pytest.raises(SessionFileError, match="inconsistent"):
        OnlineSession.load(_rewrite(path, tmp_path, "len.lam", turn_lengths=lengths))
    forward = s.pi.copy()
    forward[0] = 5  # a representative that arrives later
    with pytest.raises(SessionFileError, match="inconsistent"):
        OnlineSession.load(_rewrite(path, tmp_path, "fwd.lam", pi=forward))
    assert np.array_equal(OnlineSession.load(_rewrite(path, tmp_path, "same.lam")).pi, s.pi), "an untouched copy loads"



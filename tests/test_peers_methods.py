"""The peers on hand-built trajectories whose output is worked out by hand (paper §3.1–3.2, App. D,
F.8; SPEC §16): the shared interface (residual + removal record = input), observation masking,
SemDeDup (the chain counterexample against LAM), GEM (protocol check, protected set, length guard)
and LRE (pinned units under a zero budget, budget-greedy by p/c, verbatim chronological output).

Embeddings are written by hand (unit vectors in R^3 or R^4) wherever a decision depends on them,
so every expected deletion follows from the rule in the docstring of the method's module.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from lam_ref.geometry import LamValueError
from lam_ref.peers import gem as G
from lam_ref.peers import lre as R
from lam_ref.peers import semdedup as S
from lam_ref.peers.base import RemovalRecord, restore_trajectory, step_units
from lam_ref.peers.lam import run_lam
from lam_ref.peers.masking import PLACEHOLDER, mask
from lam_ref.substitution import oracle
from lam_ref.text.audit import AuditError
from lam_ref.text.chunking import get_tokenizer
from lam_ref.text.encoders import HashingEncoder
from lam_ref.text.records import Record, Trajectory

TOK = get_tokenizer()


def traj(steps: list[tuple[str, str]], *, task: str = "fix the bug in parser.py", tid: str = "hand") -> Trajectory:
    """A trajectory: a system record, a task record, then one (thought, action, observation) step per turn."""
    recs = [Record("system", "you are an agent", 0, "s"), Record("user", task, 0, "u")]
    for turn, (action, obs) in enumerate(steps):
        recs += [Record("thought", f"step {turn}", turn, f"t{turn}"), Record("action", action, turn, f"a{turn}"),
                 Record("observation", obs, turn, f"o{turn}")]
    return Trajectory(tid, "jsonl", "<hand>", tuple(recs))


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float64)
    return v / np.linalg.norm(v)


# ----------------------------------------------------------------------------------------------
# interface


def test_removal_record_restores_and_refuses_an_edited_residual():
    t = traj([("ls", "a\nb"), ("cat x", "one\ntwo\nthree"), ("cat y", "four"), ("cat z", "five")])
    res = mask(t, 1, TOK)
    assert res.restore() == list(t.records), "residual + removal record gives the input back"
    again = RemovalRecord.from_json(json.loads(json.dumps(res.removal.to_json())))
    assert restore_trajectory(res.residual_records(), again) == list(t.records), "the record survives JSON"
    bad = res.residual_records()
    k = next(i for i, r in enumerate(bad) if r.role == "observation" and r.text.startswith("[masked"))
    bad[k] = Record(bad[k].role, bad[k].text + " ", bad[k].turn, bad[k].source)
    with pytest.raises(AuditError, match="does not restore"):
        restore_trajectory(bad, res.removal)
    with pytest.raises(AuditError, match="residual has"):
        restore_trajectory(res.residual_records()[:-1], res.removal)


def test_step_units_split_prefix_steps_and_other_records():
    t = traj([("ls", "a"), ("cat b", "b")])
    recs = list(t.records) + [Record("user", "a later message", 1, "late")]
    t2 = Trajectory("x", "jsonl", "<hand>", tuple(recs))
    prefix, units, other = step_units(t2)
    assert prefix == [0, 1], f"system and task records are the prefix: {prefix}"
    assert [u.records for u in units] == [(2, 3, 4), (5, 6, 7)], f"one unit per turn: {units}"
    assert other == [8], f"a user record after the steps is outside every unit: {other}"


# ----------------------------------------------------------------------------------------------
# observation masking


def test_masking_keeps_first_and_last_k_and_counts_lines():
    obs = ["first\nobs", "o1 line\nx\ny", "o2", "o3", "o4"]
    t = traj([(f"cmd {i}", o) for i, o in enumerate(obs)])
    res = mask(t, 2, TOK)
    got = res.observation_residuals()
    # the first (index 0) is never masked; the last 2 (3, 4) are kept; 1 and 2 are masked
    assert got == ["first\nobs", PLACEHOLDER.format(lines=3), PLACEHOLDER.format(lines=1), "o3", "o4"], got
    assert res.placeholders == 2 and not res.prefix_stable, "two placeholders; masking rewrites sent context"
    assert res.tokens_residual_gross == sum(TOK.count(x) for x in ("first\nobs", "o3", "o4")), \
        "gross removal does not count the placeholders"


def test_masking_first_observation_survives_k_zero():
    t = traj([(f"cmd {i}", f"observation number {i}") for i in range(4)])
    res = mask(t, 0, TOK)
    got = res.observation_residuals()
    assert got[0] == "observation number 0", f"the first observation is never masked, even at k = 0: {got}"
    assert all(g.startswith("[masked observation") for g in got[1:]), f"every other one is masked: {got}"
    assert res.restore() == list(t.records), "masking's record restores the input"


def test_masking_rejects_negative_k():
    with pytest.raises(LamValueError, match="k must be an integer >= 0"):
        mask(traj([("ls", "a")]), -1, TOK)


# ----------------------------------------------------------------------------------------------
# SemDeDup


def chain() -> np.ndarray:
    """a, b, c on a circle at 0°, 15°, 30°: cos(a,b) = cos(b,c) = 0.966 > 0.95, cos(a,c) = 0.866 < 0.95."""
    ang = np.radians([0.0, 15.0, 30.0])
    return np.stack([np.cos(ang), np.sin(ang), np.zeros(3)], axis=1).astype(np.float32)


def test_semdedup_chain_counterexample_against_lam():
    """SPEC §16: in arrival order (``keep="earliest"``) SemDeDup compares with dropped members too."""
    x = chain()
    labels = np.zeros(3, np.int64)  # one cluster, members in arrival order a, b, c
    deleted = S.semdedup_deleted(x, 0.05, 0, labels=labels, keep="earliest")
    assert deleted.tolist() == [1, 2], f"SemDeDup drops b (near a) and c (near the dropped b): {deleted}"
    pi = oracle(x, 0.95).pi
    assert pi.tolist() == [0, 0, 2], f"LAM merges b into a and keeps c (only retained chunks count): {pi}"
    hard = S.semdedup_deleted(x, 0.05, 0, labels=labels)
    assert hard.tolist() == [1], f"official order (farthest from the centroid first: a, c, then b) drops only b: {hard}"


def test_semdedup_rule_is_strict_and_per_cluster():
    x = chain()
    cos_ab = float(np.float64(x[0]) @ np.float64(x[1]))
    at = S.cluster_rule(x, np.zeros(3, np.int64), 1.0 - cos_ab + 1e-12)  # 1 - eps just below cos(a, b)
    assert at[1], "cos > 1 - eps drops"
    assert not S.cluster_rule(x, np.zeros(3, np.int64), 0.01).any(), "cos 0.966 does not exceed 0.99: nothing dropped"
    split = S.cluster_rule(x, np.array([0, 1, 0]), 0.05)
    assert split.tolist() == [False, False, False], "b alone in its cluster is never compared with a or c"


def _fan(degrees) -> np.ndarray:
    ang = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.stack([np.cos(ang), np.sin(ang), np.zeros(ang.size)], axis=1).astype(np.float32)


def test_semdedup_keep_hard_easy_earliest():
    """The official ``which_to_keep``: ``hard`` keeps the member farthest from the cluster centroid,
    ``easy`` the nearest; ``earliest`` (ours) the first to arrive. Three chunks at 0°, 3°, 1° (all
    pairwise cos > 0.99), one cluster: the centroid (mean direction) lies at 1.33°, so chunk 1 is
    the farthest (1.67°) and chunk 2 the nearest (0.33°)."""
    x = _fan([0.0, 3.0, 1.0])
    labels = np.zeros(3, np.int64)
    for keep, survivor in (("hard", 1), ("easy", 2), ("earliest", 0)):
        dele = S.semdedup_deleted(x, 0.01, 0, labels=labels, keep=keep)
        assert sorted(set(range(3)) - set(dele.tolist())) == [survivor], f"keep={keep}: deleted {dele}"
    # explicit centroids (a clustering's) order the members: centroid at 3° makes chunk 0 the farthest
    cl = S.Clustering(labels, _fan([3.0]).astype(np.float64), 1, 0)
    dele = S.semdedup_deleted(x, 0.01, 0, clustering=cl)
    assert dele.tolist() == [1, 2], f"centroid at 3°: chunk 0 (3° away) survives: {dele}"
    with pytest.raises(LamValueError, match=r"^keep must be one of hard, easy, random, earliest, got 'first'$"):
        S.semdedup_deleted(x, 0.01, 0, keep="first")


def test_semdedup_hard_order_is_the_official_sort():
    """``cluster_order(keep="hard")`` equals the official ``sorted(zip(ids, 1 - cos(x, c)),
    key=dist, reverse=True)`` (clustering/sort_clusters.py; Python's sort is stable, so ties
    stay in id order), and ``easy`` is that list reversed (semdedup.py ``[::-1]``)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 6))
    x[5] = x[3]  # an exact duplicate: equal distances, a tie
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    labels = rng.integers(0, 3, size=40)
    labels[5] = labels[3]
    cents = rng.standard_normal((3, 6))
    cents /= np.linalg.norm(cents, axis=1, keepdims=True)
    x64 = x.astype(np.float64)
    got = S.cluster_order(x, labels, keep="hard", centroids=cents)
    easy = S.cluster_order(x, labels, keep="easy", centroids=cents)
    for c in range(3):
        ids = [i for i in range(40) if labels[i] == c]
        official = [i for i, _ in sorted(((i, 1.0 - float(x64[i] @ cents[c])) for i in ids), key=lambda t: t[1],
                                         reverse=True)]
        assert got[c].tolist() == official, f"cluster {c}: {got[c].tolist()} != {official}"
        assert easy[c].tolist() == official[::-1], f"cluster {c}: easy is the reversed hard order"


def test_semdedup_random_keep_is_seeded():
    """``keep="random"`` visits each cluster in a seeded random order: the same seed gives the same
    deletions, and over seeds the survivor of a group of near-copies varies."""
    x = _fan([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    labels = np.zeros(6, np.int64)
    runs = {s: S.semdedup_deleted(x, 0.01, s, labels=labels, keep="random").tolist() for s in range(10)}
    assert all(len(d) == 5 for d in runs.values()), f"one survivor per group: {runs}"
    assert runs[3] == S.semdedup_deleted(x, 0.01, 3, labels=labels, keep="random").tolist(), "seeded"
    survivors = {next(i for i in range(6) if i not in d) for d in runs.values()}
    assert len(survivors) > 1, f"ten seeds, one survivor each: {survivors}"
    for ids in S.cluster_order(x, labels, keep="random", seed=1):
        assert sorted(ids.tolist()) == list(range(6)), "the order is a permutation of the cluster"


def test_semdedup_kmeans_is_faiss_style_and_seeded():
    """Spherical k-means (faiss' algorithm): the result is a fixed point (every chunk is assigned
    to the centroid of largest cosine, each centroid is its members' unit mean direction), k = n
    puts every chunk alone, and the seed picks the initial sample."""
    rng = np.random.default_rng(0)
    centers = np.eye(4)
    x = np.concatenate([c + 0.05 * rng.standard_normal((10, 4)) for c in centers])
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    cl = S.spherical_kmeans(x, 4, seed=3)
    x64 = x.astype(np.float64)
    assert np.array_equal(cl.labels, np.argmax(x64 @ cl.centroids.T, axis=1)), "labels: nearest centroid"
    for c in np.unique(cl.labels):
        m = x64[cl.labels == c].sum(axis=0)
        assert np.allclose(cl.centroids[c], m / np.linalg.norm(m), atol=1e-12), f"centroid {c}: unit mean"
    assert np.array_equal(cl.labels, S.spherical_kmeans(x, 4, seed=3).labels), "the same seed gives the same clusters"
    alone = S.spherical_kmeans(x, 40, seed=1)
    assert sorted(alone.labels.tolist()) == list(range(40)), "k = n: every chunk its own cluster"
    u = rng.standard_normal((60, 8))
    u = (u / np.linalg.norm(u, axis=1, keepdims=True)).astype(np.float32)
    assert len({tuple(S.spherical_kmeans(u, 6, seed=s).labels.tolist()) for s in range(4)}) > 1, \
        "random initial samples: seeds give different clusterings of unstructured data"
    with pytest.raises(LamValueError, match=r"^k must be an integer in \[1, 40\], got 41$"):
        S.spherical_kmeans(x, 41, seed=0)


def test_semdedup_empty_cluster_split_follows_faiss():
    """faiss' ``split_clusters``: an empty cluster takes a copy of a cluster accepted with
    probability ``(size - 1) / (n - k)`` (size 5 of n - k = 3: certain; size 0: never) with a
    ``1 ± 1/1024`` symmetric perturbation on alternating coordinates, and the two share its count."""
    centers = np.array([[9.0, 9.0], [1.0, 2.0], [0.0, 1.0]])
    counts = np.array([0, 5, 1])
    assert S._split_empty(centers, counts, 6) == 1, "one empty cluster, one split"
    e = 1.0 / 1024.0
    assert centers[0].tolist() == [1.0 * (1 + e), 2.0 * (1 - e)], f"the copy: {centers[0]}"
    assert centers[1].tolist() == [1.0 * (1 - e), 2.0 * (1 + e)], f"the source, perturbed the other way: {centers[1]}"
    assert counts.tolist() == [2, 3, 1], f"5 split as 2 + 3: {counts}"


def test_semdedup_residual_cuts_chunks_without_stubs():
    t = traj([("cat a", "alpha beta gamma"), ("cat a", "alpha beta gamma"), ("ls", "other words here")])
    from lam_ref.text.pipeline import encode_chunks

    items = [(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices]
    enc = encode_chunks(items, HashingEncoder(), TOK)
    deleted = S.semdedup_deleted(enc.embeddings, 0.05, 0)
    assert deleted.tolist() == [1], f"the second identical output is dropped: {deleted}"
    res = S.apply_deletions(t, enc.chunks, deleted.tolist(), TOK, {"eps": 0.05})
    assert res.observation_residuals() == ["alpha beta gamma", "", "other words here"], "no stub: the text is cut"
    assert res.tokens_residual_net == res.tokens_residual_gross, "no placeholder: net = gross"
    assert res.restore() == list(t.records), "SemDeDup's record restores the input"


def test_seed_agreement_counts():
    got = S.seed_agreement([{1, 2}, {2, 3}])
    assert got["pairwise_jaccard"] == pytest.approx(1 / 3), f"|{{2}}| / |{{1,2,3}}|: {got}"
    assert got["shared_of_union"] == pytest.approx(1 / 3) and got["changed_status"] == 2, got
    assert S.seed_agreement([set(), set()])["pairwise_jaccard"] == 1.0, "empty sets agree"


# ----------------------------------------------------------------------------------------------
# GEM


def test_gem_broken_protocol_returns_request_unchanged():
    t = traj([(f"cat f{i}.py", f"content {i}") for i in range(20)])
    recs = list(t.records)
    k = next(i for i, r in enumerate(recs) if r.role == "action" and r.turn == 7)
    del recs[k]  # turn 7: a result without its call
    broken = Trajectory("broken", "jsonl", "<hand>", tuple(recs))
    res = G.gem(broken, TOK, G.GemConfig(min_blocks=2), vectors=None, encoder=HashingEncoder())
    assert res.deleted_units == () and res.removed_records == (), "nothing removed"
    assert "invalid tool protocol" in res.extra["unchanged"] and "turn 7" in res.extra["unchanged"], res.extra
    assert [r.text for r in res.residual_records()] == [r.text for r in broken.records], "the request is unchanged"


def test_gem_short_history_is_unchanged():
    t = traj([(f"cat f{i}", f"c{i}") for i in range(5)])
    res = G.gem(t, TOK, G.GemConfig(), encoder=HashingEncoder())
    assert res.deleted_units == () and "5 blocks < min_blocks 16" == res.extra["unchanged"], res.extra


def test_gem_hand_built_selection_and_length_guard():
    """Six blocks along four directions; protected: the last 2 (recent = 2) and the task-nearest.

    Block vectors: 0 = e1, 1 = e1 (same), 2 = e2, 3 = e3, 4 = e4, 5 = e4. Task = e2 → goal = 2.
    Recent = {4, 5}. P = {2, 4, 5}: span(e2, e4), E = (0 + 0 + 1 + 0 + 1 + 1)/6 = 1/2. τ = 0.9,
    K = 3 = |P|: capacity is full, no pick. Core {2, 4, 5}. Forward pass over {0, 1, 3} largest
    first: sizes make block 3 the largest; δ lets 3 go but not also 0 or 1.
    """
    obs = ["x" * 10, "y" * 10, "z" * 10, "w" * 60, "v" * 10, "u" * 10]
    t = traj([(f"run {i}", o) for i, o in enumerate(obs)], task="q")
    x = np.stack([unit(1, 0, 0, 0), unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(0, 0, 0, 1),
                  unit(0, 0, 0, 1)])
    total = sum(len(r.text) for r in t.records)
    block3 = sum(len(t.records[i].text) for i in step_units(t)[1][3].records)
    delta = (block3 + 5) / total  # room for block 3 (the largest) and nothing more
    cfg = G.GemConfig(tau=0.9, k=3, delta=delta, min_blocks=2, recent=2)
    res = G.gem(t, TOK, cfg, vectors=(x, unit(0, 1, 0, 0)))
    assert res.extra["protected"]["goal"] == [2] and res.extra["protected"]["recent"] == [4, 5], res.extra
    assert res.extra["core"] == [2, 4, 5], f"capacity K_t = max(K, |P|) = 3 is full: {res.extra['core']}"
    assert res.deleted_units == (3,), f"only the largest non-core block fits the guard: {res.deleted_units}"
    assert res.extra["chars_kept"] >= 1 - delta, "the forwarded request keeps >= (1 - δ) of its characters"
    assert res.restore() == list(t.records), "GEM's record restores the input"


def test_gem_greedy_takes_largest_residual_until_tau():
    # P = {0} = e1; candidates e1+e2 (residual 1/2), e3 (residual 1), e1 (0). n = 4.
    x = np.stack([unit(1, 0, 0), unit(1, 1, 0), unit(0, 0, 1), unit(1, 0, 0)])
    sel = G.greedy_completion(x, [0], tau=0.99, k=16)
    assert sel.picks == (2, 1), f"e3 first (residual 1), then e1+e2 (1/2); e1 has residual 0: {sel.picks}"
    assert sel.energy[0] == pytest.approx(2.5 / 4), "E({e1}) = (1 + 1/2 + 0 + 1)/4"
    assert sel.energy[-1] == pytest.approx(1.0), "span(e1, e2, e3) captures everything"
    stop = G.greedy_completion(x, [0], tau=0.8, k=16)
    assert stop.picks == (2,), f"E = 3.5/4 = 0.875 >= 0.8 after one pick: {stop.picks}"


def test_gem_rejects_tau_out_of_range():
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(LamValueError, match="tau must be in"):
            G.GemConfig(tau=bad)


# ----------------------------------------------------------------------------------------------
# LRE


def test_lre_zero_budget_keeps_only_pinned_units_verbatim():
    t = traj([(f"cat f{i}", f"contents of file {i}") for i in range(8)])
    res = R.lre(t, 0, TOK, keep_last=3)
    assert res.kept_units == (5, 6, 7), f"B = 0: only the last 3 (pinned) survive: {res.kept_units}"
    kept = res.residual_records()
    assert [r.role for r in kept[:2]] == ["system", "user"], "the system/task prefix is pinned"
    assert [r.text for r in kept[2:]] == [r.text for r in t.records[2 + 3 * 5:]], "kept steps verbatim, in order"
    assert res.restore() == list(t.records), "LRE's record restores the input"


def test_budget_greedy_by_density_within_budget():
    # densities p/c: 0: .9/3 = .3, 1: .8/1 = .8, 2: .5/5 = .1, 3: .6/2 = .3 ; pinned 4
    p, c = [0.9, 0.8, 0.5, 0.6, 0.1], [3, 1, 5, 2, 7]
    # order 1 (.8), then tie .3 between 3 and 0 → larger index first: 3, then 0; then 2
    assert R.budget_greedy(p, c, 3, [4]) == [1, 3, 4], "1 (c=1) and 3 (c=2) fill B = 3; 0 no longer fits"
    assert R.budget_greedy(p, c, 4, [4]) == [1, 3, 4], "0 (c=3) does not fit the 1 token left"
    assert R.budget_greedy(p, c, 6, [4]) == [0, 1, 3, 4], "B = 6 = 1 + 2 + 3"
    assert R.budget_greedy([Fraction(1, 3)] * 2, [0, 5], 0) == [0], "a zero-cost unit is always kept"


def test_lre_labels_identifier_reuse():
    texts = ["define parse_args here", "call parse_args", "parse_args again", "and parse_args", "plain words"]
    assert R.labels(texts).tolist() == [1, 0, 0, 0, 0], "parse_args appears in 3 later units: unit 0 positive"
    assert R.labels(texts, prefix_text="parse_args in the task").tolist() == [0, 0, 0, 0, 0], \
        "an identifier the task introduced is not introduced by unit 0"
    assert R.labels(texts[:3]).tolist() == [0, 0, 0], "reused in 2 later units only: below b = 3"


def test_lre_metrics_by_hand():
    s, y = [0.9, 0.8, 0.8, 0.1], [1, 0, 1, 0]
    # pairs (pos, neg): (0.9, 0.8) 1, (0.9, 0.1) 1, (0.8, 0.8) ½, (0.8, 0.1) 1 → 3.5 / 4
    assert R.auc(s, y) == pytest.approx(0.875), "ties count ½"
    assert R.recall_at_budget(s, y, 0.25) == 0.5, "top ceil(0.25·4) = 1 unit holds 1 of 2 positives"
    assert R.budget_at_recall(s, y, 1.0) == 0.75, "ranking 0, 1, 2 (tie by index) reaches both positives at K = 3"
    assert R.auc([1.0, 2.0], [1, 1]) is None, "one class only: no AUC"


def test_lre_shipped_weights_load_and_are_small():
    from importlib import resources

    raw = resources.files("lam_ref.peers").joinpath(R.WEIGHTS).read_bytes()
    assert len(raw) < 8192, f"the shipped weights are a few KB: {len(raw)} bytes"
    m = R.load_model()
    assert m.coef.shape == (len(R.FEATURES),) and "held_out" in m.info, "ten coefficients and a held-out evaluation"
    p = m.predict(np.zeros((2, len(R.FEATURES))))
    assert np.all((p > 0) & (p < 1)), f"probabilities: {p}"


def test_lre_rejects_negative_budget():
    with pytest.raises(LamValueError, match="budget must be an integer >= 0"):
        R.lre(traj([("ls", "a")]), -1, TOK)


# ----------------------------------------------------------------------------------------------
# LAM adapter


def test_lam_adapter_units_and_prefix_stability():
    body = "\n".join(f"line number {i} of the file" for i in range(6))
    t = traj([("cat f", body), ("cat f", body), ("ls", "other")])
    l0 = run_lam("l0", t, None)
    assert l0.unit == "line" and l0.prefix_stable, "L0 decides on lines and is prefix-stable"
    rec = t.observation_indices[1]
    assert l0.deleted_units == tuple((rec, j) for j in range(6)), f"the repeated file's 6 lines: {l0.deleted_units}"
    lam = run_lam("lam", t, HashingEncoder(), threshold=0.95)
    assert lam.unit == "chunk" and lam.deleted_units == (1,), f"L1 merges the repeated window: {lam.deleted_units}"
    for r in (l0, lam):
        assert r.restore() == list(t.records), f"{r.method}: LAM's audit restores the input"

"""``lam-ref compare`` and the peers on real data (paper §3.1–3.2, Table 17, Figure 3; SPEC §16).

* bad input (unknown method, operating points out of range, a gold file matching no trajectory,
  a plot without gold): one line naming the argument, exit 2, and the encoder never loaded;
* a run on small hand-made JSONL trajectories with the deterministic hashing encoder: every
  method and operating point is reported, each chunk is encoded once, the ECR@τ follows from
  the rows, and the plot is written as PNG and SVG;
* on every shared SWE-agent trajectory (skipped when ``../shared/data`` is absent): residual +
  removal record reproduces the input exactly for every method at every default operating point,
  and retraining LRE reproduces the shipped weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lam_ref import metrics as M
from lam_ref.cli import main
from lam_ref.peers import compare as C
from lam_ref.peers import gem as G
from lam_ref.peers import lre as R
from lam_ref.peers import semdedup as S
from lam_ref.peers.lam import run_lam
from lam_ref.peers.masking import mask
from lam_ref.text.chunking import get_tokenizer
from lam_ref.text.encoders import HashingEncoder
from lam_ref.text.loaders import iter_trajectories
from lam_ref.text.pipeline import encode_chunks

from .datagen import write_jsonl_trajectory

#: The system and user records every test trajectory opens with.
HEAD = [("system", "you are an agent"), ("user", "fix render_page")]

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swe-agent-trajectories"
HANDLER = "def handler(request):\n    return render_page(request)\n" + "".join(
    f"def helper_{i}(value):\n    return value * {i} + offset_{i}\n" for i in range(12))
EVIDENCE = "return render_page(request)"


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    d = tmp_path / "runs"
    write_jsonl_trajectory(d / "a.jsonl", [("cat f.py", HANDLER), ("ls", "f.py setup.py"), ("cat f.py", HANDLER),
                           ("pytest", "1 failed"), ("cat setup.py", "from setuptools import setup")], HEAD)
    write_jsonl_trajectory(d / "b.jsonl", [("ls", "alpha.txt"), ("cat alpha.txt", "one two three four"),
                           ("cat beta.txt", "five six seven eight nine")], HEAD)
    return d


@pytest.fixture()
def gold(tmp_path: Path) -> Path:
    p = tmp_path / "gold.json"
    p.write_text(json.dumps({"a": f"--- a/f.py\n+++ b/f.py\n+{EVIDENCE}\n"}), encoding="utf-8")
    return p


@pytest.fixture()
def no_encoder(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the encoder was loaded before the arguments were checked")

    from lam_ref.text import encoders

    monkeypatch.setattr(encoders, "SentenceTransformerEncoder", boom)  # what get_encoder loads
    monkeypatch.setattr(encoders, "HashingEncoder", boom)


@pytest.mark.parametrize("args, needle", [
    (["--methods", "lam,bogus"], "--methods: unknown method 'bogus'"),
    (["--k", "-1"], "--k must be an integer >= 0"),
    (["--eps", "1.0"], "--eps must be in (0, 1)"),
    (["--eps", "0"], "--eps must be in (0, 1)"),
    (["--tau", "0"], "--tau must be in (0, 1]"),
    (["--tau", "1.5"], "--tau must be in (0, 1]"),
    (["--budget", "-5"], "--budget must be an integer >= 0"),
    (["--t", "1.2"], "--t"),
    (["--seeds", "0"], "--seeds must be an integer >= 1"),
    (["--plot", "x.png"], "--plot 'x.png' needs --gold"),
])
def test_bad_arguments_exit_2_before_encoding(runs, args, needle, capsys, no_encoder):
    rc = main(["compare", str(runs), *args])
    err = capsys.readouterr().err.strip()
    assert rc == 2, f"exit 2 for {args}: {err!r}"
    assert len(err.splitlines()) == 1 and needle in err, f"one line naming the argument: {err!r}"


def test_gold_matching_no_trajectory_exits_2_before_encoding(runs, tmp_path, capsys, no_encoder):
    g = tmp_path / "other.json"
    g.write_text(json.dumps({"zzz": "+" + EVIDENCE + "\n"}), encoding="utf-8")
    rc = main(["compare", str(runs), "--gold", str(g)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "--gold" in err and "matches no loaded trajectory" in err, err


def test_compare_report_encodes_once_and_scores_every_method(runs, gold, tmp_path, capsys):
    out, png = tmp_path / "c.json", tmp_path / "plot.png"
    rc = main(["compare", str(runs), "--encoder", "hash", "--methods", "lam,l1,l0,masking,semdedup,gem,lre",
               "--seeds", "2", "--gem-min-blocks", "3", "--gold", str(gold), "--json", str(out), "--plot", str(png)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    rep = json.loads(out.read_text())
    labels = {(r["method"], r["label"]) for r in rep["rows"]}
    expected = ({("lam", f"t={t}") for t in (0.99, 0.95, 0.9)} | {("l1", f"t={t}") for t in (0.99, 0.95, 0.9)}
                | {("l0", "—")} | {("masking", f"k={k}") for k in (10, 5, 3)}
                | {("semdedup", f"eps={e}") for e in (0.01, 0.05, 0.1)} | {("gem", f"tau={t}") for t in (0.8, 0.9, 0.95)}
                | {("lre", f"budget={b}") for b in (2048, 1024, 512)})
    assert labels == expected, f"every method at every operating point: {sorted(labels ^ expected)}"
    # 'a' has 5 observations, 'b' 3, each one window: 8 chunks, of which 7 distinct texts (HANDLER is
    # printed twice in 'a'; SPEC §4.4: each distinct window text encoded once per run); GEM encodes
    # 5 + 3 blocks and 2 tasks
    assert rep["encode_counts"] == {"chunks": 7, "gem_blocks": 10}, f"each chunk text encoded once: {rep['encode_counts']}"
    assert rep["encoding"] == {"windows_encoded": 7, "windows_reused": 1, "reuse": "distinct-texts"}, rep["encoding"]
    assert "17 texts encoded (7 chunks, 10 gem blocks; each distinct chunk text once)" in cap.out, cap.out
    for r in rep["rows"]:
        assert r["prefix_stable"] == (r["method"] in ("lam", "l1", "l0")), f"prefix-stability of {r['method']}"
        assert r["evidence"]["witnessed"] == r["seeds"], f"the one evidence line is witnessed once per seed: {r}"
    for method in rep["methods"]:
        pts = [M.OperatingPoint(r["label"], r["evidence"]["removal_net"], r["evidence"]["kept"],
                                r["evidence"]["witnessed"]) for r in rep["rows"] if r["method"] == method]
        assert rep["ecr"][method]["0.999"] == M.ecr_at(pts, "0.999"), f"ECR@0.999 of {method} from its rows"
    masking3 = next(r for r in rep["rows"] if r["label"] == "k=3")
    # a: first and last 3 of 5 kept → the second observation (evidence-free 'ls') is masked; the
    # first holds the evidence, so it survives
    assert masking3["evidence"]["kept"] == 1, masking3
    sd = next(r for r in rep["rows"] if r["method"] == "semdedup" and r["label"] == "eps=0.05")
    assert sd["seeds"] == 2 and "pairwise_jaccard" in sd["stability"], f"SemDeDup pools 2 seeds: {sd}"
    assert png.stat().st_size > 1000 and png.with_suffix(".svg").read_text().lstrip().startswith("<?xml"), \
        "the plot is written as PNG and SVG"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared trajectories not found under {SHARED}")
def test_every_method_restores_every_shared_trajectory():
    """Residual + removal record = input, for every method at its default operating points, on all
    22 shared SWE-agent trajectories (hashing encoder: the property does not depend on the encoder)."""
    tok, enc = get_tokenizer(), HashingEncoder()
    trajs = list(iter_trajectories([str(SHARED)]))
    assert len(trajs) == 22, f"the 22 shared trajectories load: {len(trajs)}"
    model = R.load_model()
    checked = 0
    for t in trajs:
        items = [(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices]
        e = encode_chunks(items, enc, tok)
        results = [run_lam("l0", t, None)]
        results += [run_lam(m, t, enc, threshold=th, cache={"orig": e}) for m in ("lam", "l1") for th in C.DEFAULT_OPS["t"]]
        results += [mask(t, k, tok) for k in C.DEFAULT_OPS["k"]]
        results += [S.apply_deletions(t, e.chunks, S.semdedup_deleted(e.embeddings, eps, 0).tolist(), tok, {"eps": eps})
                    for eps in C.DEFAULT_OPS["eps"]]
        vec = G.gem_vectors(t, enc)
        results += [G.gem(t, tok, G.GemConfig(tau=tau, min_blocks=4), vectors=vec) for tau in C.DEFAULT_OPS["tau"]]
        results += [R.lre(t, b, tok, model=model) for b in C.DEFAULT_OPS["budget"]]
        for r in results:
            assert r.restore() == list(t.records), f"{r.method} {r.operating_point} on {t.id}: not restored"
            checked += 1
    assert checked == 22 * 19, f"19 method settings per trajectory: {checked}"


def test_semdedup_trajectory_scope_matches_per_trajectory_runs(runs, capsys):
    """--semdedup-scope trajectory clusters each trajectory alone: the deleted-unit count equals
    the sum of SemDeDup run on each trajectory's own chunks (one seed)."""
    import numpy as np

    rc = main(["compare", str(runs), "--encoder", "hash", "--methods", "semdedup", "--seeds", "1",
               "--eps", "0.05", "--semdedup-scope", "trajectory", "--json", "-"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    rep = json.loads(cap.out)
    tok, enc, expected = get_tokenizer(), HashingEncoder(), 0
    for t in iter_trajectories([str(runs)]):
        e = encode_chunks([(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices], enc, tok)
        expected += int(np.asarray(S.semdedup_deleted(e.embeddings, 0.05, 0)).size)
    (row,) = rep["rows"]
    assert rep["semdedup"]["scope"] == "trajectory" and row["deleted_units"] == expected == 1, \
        f"a's repeated file is the one deletion: {row['deleted_units']} vs {expected}"


def test_unreadable_lre_weights_exit_2_before_encoding(runs, tmp_path, capsys, no_encoder):
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"format": "lam_ref.lre_weights", "features": ["f_pos"]}), encoding="utf-8")
    rc = main(["compare", str(runs), "--lre-weights", str(w)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and str(w) in err and "LRE weights" in err, err


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared trajectories not found under {SHARED}")
def test_lre_training_reproduces_the_shipped_weights():
    """`python -m lam_ref.peers.lre_train` on the shared trajectories gives the shipped weights and
    the held-out evaluation stored with them."""
    import numpy as np

    from lam_ref.peers.lre_train import train

    model = train(list(iter_trajectories([str(SHARED)])))
    shipped = R.load_model()
    assert np.allclose(model.coef, shipped.coef, atol=1e-6) and abs(model.intercept - shipped.intercept) < 1e-6, \
        "retraining reproduces the shipped coefficients"
    assert model.info["held_out"] == pytest.approx(shipped.info["held_out"]), "and the held-out evaluation"
    assert set(model.info["split"]["held_out"]).isdisjoint(model.info["split"]["train"]), "disjoint split"


@pytest.mark.parametrize("options", [[], ["--l0-stubs", "paper", "--window", "8"],
                                     ["--window-fit", "none", "--driver", "batch", "--exhaustive"]],
                         ids=["defaults", "paper-stubs-small-windows", "fixed-windows-batch-exhaustive"])
def test_compare_lam_row_is_compact_total(runs, tmp_path, capsys, options):
    """Issue 23 §2: one configuration object. With the same layer options, compare's LAM row at
    t = 0.95 is compact's TOTAL (net and gross removal, deleted windows), and both print the config."""
    c, k = tmp_path / "compare.json", tmp_path / "compact.json"
    assert main(["compare", str(runs), "--encoder", "hash", "--methods", "lam,l0", "--t", "0.95", "--json", str(c),
                 "--no-progress", *options]) == 0
    out_compare = capsys.readouterr().out
    assert main(["compact", str(runs), "--encoder", "hash", "--json", str(k), "--no-progress", *options]) == 0
    out_compact = capsys.readouterr().out
    rc, rk = json.loads(c.read_text()), json.loads(k.read_text())
    lam = next(r for r in rc["rows"] if r["method"] == "lam")
    total = rk["total"]
    assert (lam["removal_net"], lam["removal_gross"]) == (total["removal_net"], total["removal_gross"]), \
        f"compare's LAM row {lam['removal_net']}/{lam['removal_gross']} is compact's TOTAL " \
        f"{total['removal_net']}/{total['removal_gross']} with {options}"
    assert lam["deleted_units"] == total["chunks"] - total["kept_chunks"], "the same windows deleted"
    l0 = next(r for r in rc["rows"] if r["method"] == "l0")
    assert l0["removal_net"] == total["l0_removal"], f"compare's L0 row is compact's L0 column with {options}"
    keys = set(rk["config"]) - {"threshold", "delta", "layers", "both_orders", "l2_rel_eb"}
    assert {x: rc["config"][x] for x in keys} == {x: rk["config"][x] for x in keys}, \
        "one configuration: the same layer settings in both reports"
    line = next(ln for ln in out_compact.splitlines() if ln.startswith("config: "))
    tail = line.split("layers L1->L0, ", 1)[1]
    assert f"lam/l1/l0 config (t and layers per row): {tail}" in out_compare, \
        f"compare prints compact's config line: {tail!r} in {out_compare}"

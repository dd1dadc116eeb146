r"""The claims that are metadata only: each one's statement, where it is stated and the code that
implements it, checked by its tests and proofs (``@pytest.mark.claim``), never measured on data by
``lam-ref verify`` (SPEC §11).

A claim with no ``measure`` needs no module of its own: its record is one entry of :data:`CLAIMS`
here (the registry, :mod:`lam_ref.claims`, finds them by scanning the package, as it finds the
``CLAIM`` of each measured claim's module).
"""

from __future__ import annotations

from ._base import Claim

__all__ = ["CLAIMS"]

CLAIMS: tuple[Claim, ...] = (
    # ONLINE: Online ≡ batch.
    Claim(
        "ONLINE",
        "Online ≡ batch",
        r"\mathrm{concat}_{\text{turns}}\ \pi_{\mathrm{Alg.1}}=\pi_{\mathrm{Alg.2}}\ \text{for every split into turns};\ \hat\delta_{\mathrm{run}}=\max_{\text{turns}}\hat\delta",
        "§2.3, Algorithm 1; §3.3 (600/600 byte-identical); SPEC §6",
        ("lam_ref.online.OnlineSession", "lam_ref.substitution.Matcher"),
        origin="SPEC",
        rank=140,
    ),
    # AMDAHL: Amdahl ceiling of context reduction.
    Claim(
        "AMDAHL",
        "Amdahl ceiling of context reduction",
        r"\text{speedup}\le\frac{1}{1-\varphi},\ \varphi=\text{context-scaling share of turn latency}",
        "§2.6, App. E.1, Table 7",
        ("lam_ref.costmodel.phi", "lam_ref.costmodel.amdahl_ceiling", "lam_ref.costmodel.table7"),
        note="Checked symbolically against Table 7 (proofs/test_amdahl_sympy.py) and numerically by "
        "tests/test_costmodel.py (φ within a point of every Table 7 cell).",
        rank=150,
    ),
    # ETA: Net reduction after repair turns.
    Claim(
        "ETA",
        "Net reduction after repair turns",
        r"\eta(\kappa)=\rho-\frac{\text{repairs}\cdot\kappa\cdot\Delta}{T},\qquad \kappa_{\text{break-even}}=\frac{\rho_m-\rho_o}{(n_m-n_o)\,\Delta/T}",
        "App. F.5, eq. (9), Table 18",
        ("lam_ref.metrics.eta", "lam_ref.metrics.break_even_kappa"),
        rank=160,
    ),
    # STAB: Decision-margin stability (the determinism certificate).
    Claim(
        "STAB",
        "Decision-margin stability",
        r"m_i=\min_{j\in R_i}\bigl|\mathrm{sq}(e_i,e_j)-\delta^2\bigr|;\ "
        r"\bigl(\forall i\ \forall j\in R_i:\ |\mathrm{sq}'(e'_i,e'_j)-\mathrm{sq}(e_i,e_j)|<m_i\bigr)\Rightarrow\pi'=\pi;\ "
        r"|\Delta\mathrm{sq}|\le 4\gamma\ \text{for a pairwise-cosine jitter}\ \gamma",
        "App. D (\"Decision margins\", batch sizes 8–256); SPEC §2, §10; lemma and proof in docs/determinism.md",
        (
            "lam_ref.determinism.margins.decision_margins",
            "lam_ref.determinism.margins.at_risk",
            "lam_ref.determinism.margins.risk_bound",
            "lam_ref.determinism.margins.jitter",
            "lam_ref.determinism.probing.probe",
            "lam_ref.determinism.report.compare",
        ),
        origin="beyond the paper",
        note="The paper measures margins (min 6.7e-6 at t = 0.99, 37.7x the cosine jitter) and explains the equal "
        "digests with them; lam_ref states the implication as a lemma, proves it by induction on arrivals, and "
        "flags the decisions a stated jitter could flip.",
        rank=170,
    ),
    # GEM-A: GEM's Appendix A identities (seed 002): residual scores, captured energy, incremental updates.
    Claim(
        "GEM-A",
        "GEM's residual-greedy completion identities",
        r"r_i(B)=\|(I-P_B)x_i\|_2^2=1-\|Q_B^\top x_i\|_2^2,\quad E(B)=\tfrac1n\|XQ_B\|_F^2,\quad "
        r"r_i(B\cup\{j\})=r_i(B)-(q^\top x_i)^2,\quad \mathcal P_t\subseteq B_t\subseteq S_t",
        "seed 002 (GEM), Appendix A, Propositions A.1–A.3",
        ("lam_ref.peers.gem.residuals", "lam_ref.peers.gem.captured_energy", "lam_ref.peers.gem.mgs_extend",
         "lam_ref.peers.gem.greedy_completion"),
        origin="peer (seed 002)",
        note="The selection order is checked against scipy.linalg.qr(..., pivoting=True) on the residuals.",
        rank=180,
    ),
    # CCT-THM1: Generation equals one-way communication.
    Claim(
        "CCT-THM1",
        "Generation equals one-way communication",
        r"\min\{B:\ \mathrm{GEN}_B\ \text{errs}\le\varepsilon\}=R^{\to}_{\mu,\varepsilon}(\Pi_G)\ \text{and}\ R^{\to}_{\varepsilon}(\Pi_G);\qquad \mathrm{err}^{\mathrm{wc}}_B\ge\mathrm{err}^{\mu}_B\ \forall\mu",
        "Context Compaction Theory §4.1, Theorem 1",
        ("lam_ref.cct.games.best_by_play", "lam_ref.cct.solvers.distributional_optimum", "lam_ref.cct.solvers.worst_case_optimum", "lam_ref.cct.solvers.zero_error_budget"),
        origin="peer: Context Compaction Theory",
        note="Checked on random tiny functions: exhaustive play of every condenser/interpreter pair equals the partition/MILP optimum of the value table; the worst-case LP dominates every drawn distribution and meets it at its dual.",
        rank=190,
    ),
    # CCT-COR2: Selection is subset-encoding communication.
    Claim(
        "CCT-COR2",
        "Selection is subset-encoding communication",
        r"\mathrm{SELECT}_B=\{(A,B):\ A(X)\ \text{names}\ S\subseteq X,\ \textstyle\sum_{x\in S}s(x)\le B,\ B(\cdot)=f(\{x_i\}_{i\in S},q)\}",
        "Context Compaction Theory §4.2, Corollary 2",
        ("lam_ref.cct.games.play_select", "lam_ref.cct.solvers.select_distributional_optimum", "lam_ref.cct.solvers.select_options"),
        origin="peer: Context Compaction Theory",
        note="Every SELECT algorithm played in the game equals, on every input, the protocol that sends the index of its retained multiset; the SELECT optimum by exhaustive play equals the assignment MILP.",
        rank=200,
    ),
    # CCT-THM3: Selection needs n log2 n bits where generation needs n.
    Claim(
        "CCT-THM3",
        "Selection needs n log2 n bits where generation needs n",
        r"n=2^k,\ k\ge2:\ B^{\mathrm{GEN}}_0=n,\ B^{\mathrm{SEL}}_0=n\log_2 n;\ \ \mathrm{err}^{\mathrm{GEN}}_B=\max(0,1-\tfrac{2^{B+1}-1}{2^n}),\ \mathrm{err}^{\mathrm{SEL}}_B=1-\tfrac{\sum_{i\le\lfloor B/\log_2 n\rfloor}\binom ni}{2^n}",
        "Context Compaction Theory §4.2, Theorem 3 (the ε > 0 forms are ours)",
        ("lam_ref.cct.theorems.thm3_gen_budget", "lam_ref.cct.theorems.thm3_select_budget", "lam_ref.cct.theorems.thm3_gen_error", "lam_ref.cct.theorems.thm3_select_error", "lam_ref.cct.solvers.min_select_budget", "lam_ref.cct.solvers.identity_worst_case"),
        origin="peer: Context Compaction Theory",
        note="Zero error exhaustively for n = 4 and 8 (distinct rows, bipartite matching); the ε > 0 closed forms against the matching LP for every budget at n = 4 and n = 8.",
        rank=210,
    ),
    # CCT-COUNT: The count query: SELECT keeps everything, GEN needs about log2 n bits.
    Claim(
        "CCT-COUNT",
        "The count query: SELECT keeps everything, GEN needs about log2 n bits",
        r"q=|X|,\ X\subseteq Y,\ |Y|=n:\quad B^{\mathrm{GEN}}_0=\lceil\log_2(n+2)\rceil-1,\qquad B^{\mathrm{SEL}}_0=\textstyle\sum_{y\in Y}s(y)",
        "beyond the paper (a query from its §4 framework)",
        ("lam_ref.cct.games.count_game", "lam_ref.cct.theorems.count_gen_budget", "lam_ref.cct.solvers.min_select_budget", "lam_ref.cct.solvers.zero_error_budget"),
        origin="peer: Context Compaction Theory",
        note="Zero-error SELECT must retain every item on every input (induction on the input size); checked by the SELECT ILP for n <= 5 with random sizes.",
        rank=220,
    ),
    # CCT-KRAFT: Kraft generalization of Theorem 3's lower bound.
    Claim(
        "CCT-KRAFT",
        "Kraft generalization of Theorem 3's lower bound",
        r"\textstyle\sum_i 2^{-s(x_i)}\le1\ \Rightarrow\ B^{\mathrm{SEL}}_0=\sum_i s(x_i)\ge n\log_2 n\quad(\text{any }n),\qquad B^{\mathrm{GEN}}_0=n",
        "beyond the paper (generalizes Theorem 3, §4.2)",
        ("lam_ref.cct.theorems.kraft_sum", "lam_ref.cct.theorems.kraft_lower_bound", "lam_ref.cct.solvers.min_select_budget"),
        origin="peer: Context Compaction Theory",
        note="Sizes that a uniquely decodable item code can have; the gap holds for every n >= 3, not only powers of two.",
        rank=230,
    ),
    # CCT-BLOOM: Bloom filter: optimal k and false-positive rate.
    Claim(
        "CCT-BLOOM",
        "Bloom filter: optimal k and false-positive rate",
        r"f(k)=(1-e^{-kN/m})^k,\quad \arg\min_k f=\tfrac mN\ln2,\quad f_{\min}=2^{-\frac mN\ln 2}=e^{-(\ln2)^2 m/N}",
        "Context Compaction Theory App. A (Bloom 1970; Broder and Mitzenmacher)",
        ("lam_ref.cct.bloom.BloomFilter", "lam_ref.cct.bloom.bloom_fpr", "lam_ref.cct.bloom.bloom_fpr_exact", "lam_ref.cct.bloom.optimal_k"),
        origin="peer: Context Compaction Theory",
        note="The optimum by sympy; the formula against simulated filters (Wilson intervals).",
        rank=240,
    ),
    # CCT-APPA: Membership case study: compactors against the Bloom curve and the lower bound.
    Claim(
        "CCT-APPA",
        "Membership case study: compactors against the Bloom curve and the lower bound",
        r"\mathrm{err}_{\mathrm{Bloom}}(B)=\tfrac12e^{-(\ln2)^2B/N},\qquad \mathrm{err}(B)\ge\tfrac12\,2^{-B/N}\ \text{(no false negatives)},\qquad \mathrm{err}_{\text{always-no}}=\tfrac12",
        "Context Compaction Theory App. A, Figure 2",
        ("lam_ref.cct.membership.run_case_study", "lam_ref.cct.membership.compact", "lam_ref.cct.bloom.bloom_error_curve", "lam_ref.cct.bloom.membership_lower_bound"),
        origin="peer: Context Compaction Theory",
        note="Run without an LLM on seeded URL-like strings; exact optima at toy scale by partitions and MILP.",
        rank=250,
    ),
    # CCT-LAM: LAM is an online SELECT strategy plus a stub side channel.
    Claim(
        "CCT-LAM",
        "LAM is an online SELECT strategy plus a stub side channel",
        r"\text{Alg. 1 decides }x_i\text{ from }x_{\le i};\ \ \mathrm{LAM}\in\mathrm{SELECT};\ \ \mathrm{LAM}+\text{stubs}\in\mathrm{GEN}\setminus\mathrm{SELECT}\text{ answers }|X|",
        "beyond the paper (LAM §2.3, SPEC §8, in the games of Context Compaction Theory §3)",
        ("lam_ref.cct.links.lam_select", "lam_ref.cct.links.lam_with_stubs"),
        origin="peer: Context Compaction Theory",
        note="Stubs answer the count (multiplicity) query, which any selection that drops a near-duplicate cannot.",
        rank=260,
    ),
    # CCT-COVER: Covering number as the zero-error budget of reconstruction within δ.
    Claim(
        "CCT-COVER",
        "Covering number as the zero-error budget of reconstruction within δ",
        r"\min\{m\}=N(S,\delta)\ \Rightarrow\ B_0=\lceil\log_2(N(S,\delta)+1)\rceil-1\ (\lceil\log_2N\rceil\ \text{fixed});\qquad M(S,2\delta)\le N(S,\delta)\ \text{(fooling set)}",
        "beyond the paper (links LAM App. C.3 to Context Compaction Theory Theorem 1)",
        ("lam_ref.cct.links.reconstruct_game", "lam_ref.cct.solvers.zero_error_budget", "lam_ref.covering.covering_number", "lam_ref.covering.packing_number"),
        origin="peer: Context Compaction Theory",
        note="The exact N and M of lam_ref.covering against an exhaustive partition search of the game.",
        rank=270,
    ),
)

"""Context Compaction Theory, executable (peer paper: Tirmazi, Markelon, Bishop, Mitzenmacher).

* :mod:`lam_ref.cct.games` — the Context Selection and Generation games (§3) and their conventions;
* :mod:`lam_ref.cct.solvers` — exact one-way protocol optima for small games (§4, Theorem 1,
  Corollary 2);
* :mod:`lam_ref.cct.theorems` — closed forms: Theorem 3 and its ε > 0 version, the count query,
  the Kraft generalization;
* :mod:`lam_ref.cct.bloom` — Bloom filters and their false-positive formulas (Appendix A);
* :mod:`lam_ref.cct.membership` — the membership case study of Appendix A without an LLM;
* :mod:`lam_ref.cct.links` — LAM seen from the games (online SELECT + stub side channel,
  ``log2 N(S, δ)`` as a zero-error GEN budget).

See ``docs/cct.md``.
"""

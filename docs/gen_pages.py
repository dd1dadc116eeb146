"""Pages generated at docs build time (mkdocs-gen-files).

Each generator lives next to the code it documents and is called from here, so the docs build
fails loudly if a generator breaks.
"""

import mkdocs_gen_files

API_MODULES = [
    "lam_ref.geometry",
    "lam_ref.bands",
    "lam_ref.substitution",
    "lam_ref.online",
    "lam_ref.digest",
    "lam_ref.codec",
    "lam_ref.devices",
    "lam_ref.determinism",
    "lam_ref.costmodel",
    "lam_ref.metrics",
    "lam_ref.covering",
    "lam_ref.verify",
    "lam_ref.claims",
    # the claims lam-ref verify measures: each module holds its measure, rule and aggregation
    "lam_ref.claims.eq1",
    "lam_ref.claims.def1",
    "lam_ref.claims.thm1",
    "lam_ref.claims.hull",
    "lam_ref.claims.cor1",
    "lam_ref.claims.prop1",
    "lam_ref.claims.cor2",
    "lam_ref.claims.prop2",
    "lam_ref.claims.thm2",
    "lam_ref.claims.cor3",
    "lam_ref.claims.gemlink",
    "lam_ref.strategies",
    # compaction of real trajectories (docs/compaction.md)
    "lam_ref.text",
    "lam_ref.text.records",
    "lam_ref.text.loaders",
    "lam_ref.text.chunking",
    "lam_ref.text.encoders",
    "lam_ref.text.lines",
    "lam_ref.text.stubs",
    "lam_ref.text.audit",
    "lam_ref.distributed",
    "lam_ref.distributed.greedy",
    "lam_ref.distributed.shards",
    "lam_ref.distributed.trajectories",
    "lam_ref.text.pipeline",
    "lam_ref.text.native",
    "lam_ref.demo",
    # the peers behind one compactor interface (docs/peers.md)
    "lam_ref.peers",
    "lam_ref.peers.base",
    "lam_ref.peers.lam",
    "lam_ref.peers.masking",
    "lam_ref.peers.semdedup",
    "lam_ref.peers.gem",
    "lam_ref.peers.lre",
    "lam_ref.peers.lre_train",
    "lam_ref.peers.gold",
    # Context Compaction Theory (docs/cct.md)
    "lam_ref.cct",
    "lam_ref.cct.games",
    "lam_ref.cct.solvers",
    "lam_ref.cct.theorems",
    "lam_ref.cct.bloom",
    "lam_ref.cct.membership",
    "lam_ref.cct.toy",
    "lam_ref.cct.links",
    # the conformance suite (docs/conformance.md)
    "lam_ref.conformance",
    "lam_ref.conformance.checks",
    "lam_ref.conformance.checks_edges",
    "lam_ref.conformance.profiles",
    "lam_ref.conformance.registry",
    "lam_ref.conformance.harness",
    "lam_ref.conformance.impl",
    "lam_ref.conformance.runner",
    "lam_ref.conformance.report",
    "lam_ref.conformance.plugin",
    "lam_ref.conformance.protocol",
    "lam_ref.conformance.exec_client",
    "lam_ref.conformance.server",
    "lam_ref.conformance.strategies",
    "lam_ref.conformance.adapter",
    "lam_ref.conformance.adapter_banded",
    "lam_ref.conformance.independent",
    "lam_ref.conformance.mutants",
]

with mkdocs_gen_files.open("reference/api.md", "w") as fh:
    fh.write("# API reference\n\nGenerated from the docstrings of the public modules.\n\n")
    for mod in API_MODULES:
        fh.write(f"::: {mod}\n\n")

# The claims page and the per-test-file pages (fails the build on an inconsistent registry).
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import claims_page  # noqa: E402

claims_page.generate(mkdocs_gen_files.open, Path(__file__).resolve().parent.parent)

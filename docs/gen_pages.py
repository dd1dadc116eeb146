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
    "lam_ref.metrics",
    "lam_ref.covering",
    "lam_ref.verify",
    "lam_ref.claims",
    "lam_ref.strategies",
    # compaction of real trajectories (issue 3; docs/compaction.md)
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
    "lam_ref.demo",
    # the conformance suite (issue 5; docs/conformance.md)
    "lam_ref.conformance",
    "lam_ref.conformance.checks",
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

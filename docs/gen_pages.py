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
]

with mkdocs_gen_files.open("reference/api.md", "w") as fh:
    fh.write("# API reference\n\nGenerated from the docstrings of the public modules.\n\n")
    for mod in API_MODULES:
        fh.write(f"::: {mod}\n\n")

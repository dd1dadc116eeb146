"""Subcommands of ``lam-ref``; one module each, discovered by :mod:`lam_ref.cli`."""

"""Symbolic (sympy) checks of the paper's algebra; each script is also a pytest test."""

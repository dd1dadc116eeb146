"""GPU ports of lam_ref pieces (CuPy). Importing this package needs no GPU; each module imports
cupy only when a function is called without an explicit array module."""

"""Where the array kernels run: the device names and their array modules (``xp``).

The exhaustive greedy of Algorithm 2 (:mod:`lam_ref.substitution`) and the L2 codec
(:mod:`lam_ref.codec`) are written once against an array module ``xp``: numpy on the CPU (every CI
run), CuPy on a CUDA device (``pip install -e '.[gpu]' in a lam_ref checkout``). This module is the one place that maps
a device name to its module and refuses a device that cannot be used (docs/spec.md §9, §10).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .geometry import LamValueError

__all__ = ["DEVICES", "array_module", "validate_device", "require_cuda"]

#: The devices lam_ref's array kernels run on.
DEVICES = ("cpu", "cuda")


def require_cuda() -> Any:
    """The ``cupy`` module, or :class:`LamValueError` when CuPy or a CUDA device is missing.

    Raises:
        LamValueError: CuPy is not installed, the CUDA runtime fails, or no device is visible.
    """
    try:
        import cupy
    except ImportError as exc:
        raise LamValueError("device 'cuda' needs CuPy and a CUDA device (pip install -e '.[gpu]' in a lam_ref checkout); cupy is not installed") from exc
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - any CUDA runtime failure means no usable device
        raise LamValueError(f"device 'cuda' needs CuPy and a CUDA device; the CUDA runtime says: {exc}") from exc
    if count < 1:
        raise LamValueError("device 'cuda' needs CuPy and a CUDA device; none is visible")
    return cupy


def validate_device(device: Any, name: str = "device") -> str:
    """``'cpu'`` or ``'cuda'`` (CUDA checked for CuPy and a device).

    Raises:
        LamValueError: ``device`` is not one of :data:`DEVICES`, or CUDA is unusable (names ``name``).

    Examples:
        >>> validate_device("cpu")
        'cpu'
    """
    if device not in DEVICES:
        raise LamValueError(f"{name} must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "cuda":
        require_cuda()
    return device


def array_module(device: str = "cpu") -> Any:
    """The array module ``xp`` of a device: ``numpy`` for ``"cpu"``, ``cupy`` for ``"cuda"``.

    Raises:
        LamValueError: an unknown device, or ``"cuda"`` without CuPy or a CUDA device.

    Examples:
        >>> array_module("cpu") is np
        True
    """
    return np if validate_device(device) == "cpu" else require_cuda()

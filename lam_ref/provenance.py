"""Where a report was made: machine, GPU, git state, library versions and kernel configuration.

The one module that asks the machine about itself, for both report writers: the determinism
reports (:func:`execution_target`, the ``target`` key, docs/determinism.md) and the conformance
report (:mod:`lam_ref.conformance.report` builds its ``target`` and ``suite`` from
:func:`cpu_model`, :func:`gpu_model`, :func:`library_versions` and :func:`git_state`; SPEC §15).

:func:`kernel_config` records which numeric kernels actually run, as opposed to which were asked for
(issue 22): the OpenBLAS core type in use (threadpoolctl), numpy's SIMD extensions (baseline,
dispatched, disabled through ``NPY_DISABLE_CPU_FEATURES``), torch's CPU capability (when torch is
loaded), thread counts, and the kernel-selecting environment variables. Nothing here records an
absolute path: library files are named by their base name.

``subprocess`` is imported inside the two functions that run a program (``git``,
``nvidia-smi``), so that importing :mod:`lam_ref.determinism` starts no process and loads no
``subprocess`` module (``determinism/test_package.py``). It lives at the top of the package, not
in :mod:`lam_ref.determinism`, so that the conformance report's machine facts load no encoder,
corpus or probe module (issue 36 §5).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_info

__all__ = [
    "KERNEL_ENV",
    "blas",
    "cpu_flags",
    "cpu_model",
    "execution_target",
    "git_state",
    "gpu_driver",
    "gpu_model",
    "kernel_config",
    "library_versions",
    "version",
]

#: Environment variables that select numeric kernels or thread counts; :func:`kernel_config` records
#: each one's value (``None`` when unset).
KERNEL_ENV = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "NPY_DISABLE_CPU_FEATURES",
    "ATEN_CPU_CAPABILITY",
)


def cpu_model() -> str:
    """The CPU model from ``/proc/cpuinfo`` (or :mod:`platform`) and the logical CPU count."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} logical CPUs)"
    except OSError:
        pass
    return (platform.processor() or platform.machine() or "unknown") + f" ({os.cpu_count()} logical CPUs)"


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (``/proc/cpuinfo`` ``flags``, lower case); empty where unknown."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("flags", "features")):
                    return frozenset(line.split(":", 1)[1].lower().split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def _nvidia_smi(field: str) -> str | None:
    """``nvidia-smi --query-gpu=FIELD`` (5 s limit), the lines joined by ``; ``; ``None`` when there
    is no ``nvidia-smi``, it fails, or it lists nothing."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    import subprocess

    try:
        out = subprocess.run([exe, f"--query-gpu={field}", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return "; ".join(n.strip() for n in out.stdout.splitlines() if n.strip()) or None


def gpu_model() -> str | None:
    """GPU names (``nvidia-smi``); ``None`` when there is none or ``nvidia-smi`` is absent."""
    return _nvidia_smi("name")


def gpu_driver() -> str | None:
    """The NVIDIA driver version of the first GPU (``nvidia-smi``), or ``None``."""
    v = _nvidia_smi("driver_version")
    return v.split(";")[0].strip() if v else None


def git_state(path: str | os.PathLike[str]) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout holding the package folder ``path`` (its
    ``__init__.py`` tracked there), ``dirty`` meaning uncommitted changes under ``path``;
    ``(None, None)`` outside a checkout (an installed copy), without git, or on any git failure."""
    git = shutil.which("git")
    root = Path(path)
    if not git or not root.is_dir():
        return None, None
    import subprocess

    def _git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([git, "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=False)

    try:
        # an installed copy inside some other repository (a venv in a checkout) is not that repository's code
        if _git("ls-files", "--error-unmatch", "__init__.py").returncode != 0:
            return None, None
        head = _git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None, None
        st = _git("status", "--porcelain", "--", ".")
        return head.stdout.strip(), (bool(st.stdout.strip()) if st.returncode == 0 else None)
    except (OSError, subprocess.TimeoutExpired):
        return None, None


def version(lib: str) -> str | None:
    """The installed distribution's version, or ``None``."""
    try:
        return importlib.metadata.version(lib)
    except importlib.metadata.PackageNotFoundError:
        return None


def library_versions(libs: tuple[str, ...]) -> dict[str, str]:
    """``{"python": ..., lib: version}`` (``"not installed"`` when a library is missing)."""
    out = {"python": platform.python_version()}
    for lib in libs:
        v = version(lib)
        if v is None:
            mod = sys.modules.get(lib)
            v = str(getattr(mod, "__version__", "not installed"))
        out[lib] = v
    return out


def blas() -> str | None:
    """numpy's BLAS as numpy was built against it (name and version), or ``None``."""
    try:
        import numpy as np

        cfg = np.show_config(mode="dicts")  # numpy >= 1.26
        b = cfg.get("Build Dependencies", {}).get("blas", {})
        return f"{b.get('name')} {b.get('version')}".strip() or None
    except Exception:  # noqa: BLE001 - an older numpy: unknown
        return None


def _numpy_simd() -> dict[str, Any] | None:
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
        except ImportError:
            return None
    dispatch = list(__cpu_dispatch__)
    return {
        "baseline": list(__cpu_baseline__),
        "dispatch": dispatch,
        "enabled": [f for f in dispatch if __cpu_features__.get(f)],
        "disabled_by_env": os.environ.get("NPY_DISABLE_CPU_FEATURES"),
    }


def _blas_libraries() -> list[dict[str, Any]]:
    import numpy  # noqa: F401 - threadpoolctl lists only loaded libraries

    keep = ("user_api", "internal_api", "prefix", "version", "architecture", "threading_layer", "num_threads")
    return [{k: lib.get(k) for k in keep} | {"file": Path(lib.get("filepath") or "").name}
            for lib in threadpool_info()]


def kernel_config() -> dict[str, Any]:
    """The numeric kernels in use in this process (recorded in every determinism report).

    ``openblas_coretype``: the OpenBLAS core type(s) in use, as OpenBLAS itself reports them
    (threadpoolctl; it may differ from a requested ``OPENBLAS_CORETYPE``: ``Zen`` runs the
    ``Haswell`` kernels, an unknown name falls back to the detected core). ``libraries``: every
    BLAS/OpenMP library threadpoolctl sees (file base name, version, core type, threads).
    ``numpy_simd``: baseline, dispatched and enabled SIMD extensions. ``torch_cpu_capability``,
    ``torch_threads``, ``torch_interop_threads``: ``None`` unless torch is loaded. ``env``: the
    values of :data:`KERNEL_ENV`.
    """
    libs = _blas_libraries()
    out: dict[str, Any] = {
        "openblas_coretype": ", ".join(sorted({str(x["architecture"]) for x in libs if x["internal_api"] == "openblas"}))
        or None,
        "libraries": libs,
        "numpy_simd": _numpy_simd(),
        "torch_cpu_capability": None,
        "torch_threads": None,
        "torch_interop_threads": None,
        "env": {k: os.environ.get(k) for k in KERNEL_ENV},
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            out["torch_cpu_capability"] = str(torch.backends.cpu.get_cpu_capability())
        except Exception:  # noqa: BLE001 - an old torch without the query
            pass
        out["torch_threads"] = int(torch.get_num_threads())
        out["torch_interop_threads"] = int(torch.get_num_interop_threads())
    return out


def execution_target(device: str = "cpu") -> dict[str, Any]:
    """Where a determinism report was made: CPU and GPU model, driver, CUDA, library versions (numpy
    and its BLAS, torch, sentence-transformers), the kernels in use (:func:`kernel_config`), lam_ref's
    version and commit. The keys are listed in docs/determinism.md ("JSON schema")."""
    import numpy as np

    from . import __version__

    commit, dirty = git_state(Path(__file__).resolve().parents[1])
    out: dict[str, Any] = {
        "cpu": cpu_model(),
        "gpu": gpu_model(),
        "gpu_driver": None,
        "cuda": None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas(),
        "torch": version("torch"),
        "torch_threads": None,
        "transformers": version("transformers"),
        "sentence_transformers": version("sentence-transformers"),
        "cupy": version("cupy-cuda12x") or version("cupy"),
        "lam_ref": __version__,
        "lam_ref_commit": commit,
        "lam_ref_dirty": dirty,
        "pythonhashseed": os.environ.get("PYTHONHASHSEED"),
        "kernels": kernel_config(),
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch_threads"] = int(torch.get_num_threads())
        out["cuda"] = torch.version.cuda
        if device == "cuda" and torch.cuda.is_available():
            out["gpu"] = torch.cuda.get_device_name(0)
    if device == "cuda":
        from ..devices import require_cuda
        from ..geometry import LamValueError

        try:
            cupy = require_cuda()
            v = int(cupy.cuda.runtime.driverGetVersion())
            out["gpu_driver"] = f"CUDA driver API {v // 1000}.{(v % 1000) // 10}"
        except LamValueError:
            pass
        out["gpu_driver"] = gpu_driver() or out["gpu_driver"]
    return out

"""The CPU kernel configurations one machine can emulate (issue 22; docs/determinism.md "Kernel matrix").

Three libraries choose their numeric kernels at run time, and each can be told to choose another
through the environment:

* **OpenBLAS** (numpy's BLAS: matrix products of the greedy rule, margins and jitter):
  ``OPENBLAS_CORETYPE`` = ``Prescott``, ``Nehalem``, ``Haswell``, ``Zen``, ``SkylakeX``, ...
  (the summation order of a dot product differs between core types);
* **numpy** (its own SIMD loops): ``NPY_DISABLE_CPU_FEATURES`` with the AVX-512 dispatch targets;
* **torch** (the encoder's vectorised operators): ``ATEN_CPU_CAPABILITY`` = ``default`` (scalar
  kernels) or ``avx2``; unset, torch picks the best the CPU has (AVX-512 on an AVX-512 CPU).

:data:`CONFIGURATIONS` lists them; :func:`plan` resolves names against this CPU: a configuration
whose CPU features are missing, or an unknown name, is one row **skipped with the reason** (never
an error), and a configuration that runs exactly the kernels of an earlier one (``Zen`` runs
OpenBLAS's ``Haswell`` kernels; the default runs ``SkylakeX`` on an AVX-512 CPU) is marked as the
same. What actually runs is read in a fresh process (:func:`effective`, through threadpoolctl and
:func:`lam_ref.provenance.kernel_config`), not assumed from the request.

``python -m lam_ref.determinism.kernels [--configs A,B] -- [PYTEST-ARGS]`` runs pytest once per
distinct configuration and prints one line each (``make portability``; ``--`` alone: the whole
suite); without ``--`` and arguments it only prints the plan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..geometry import LamValueError
from ..provenance import KERNEL_ENV, cpu_flags

__all__ = [
    "CONFIGURATIONS",
    "DEFAULT_CONFIGS",
    "OPENBLAS_CORETYPES",
    "KernelConfig",
    "PlannedConfig",
    "config_env",
    "effective",
    "plan",
    "run_suite",
]

#: OpenBLAS x86-64 core types (``OPENBLAS_CORETYPE``) and the CPU flags (``/proc/cpuinfo``) each needs.
OPENBLAS_CORETYPES: dict[str, tuple[str, ...]] = {
    "Prescott": ("pni",),
    "Core2": ("ssse3",),
    "Penryn": ("sse4_1",),
    "Nehalem": ("sse4_2",),
    "Sandybridge": ("avx",),
    "Haswell": ("avx2", "fma"),
    "Zen": ("avx2", "fma"),
    "SkylakeX": ("avx512f", "avx512bw", "avx512dq", "avx512vl"),
    "CooperLake": ("avx512_bf16",),
    "SapphireRapids": ("amx_tile",),
}


@dataclass(frozen=True)
class KernelConfig:
    """One kernel configuration: a name, the environment it sets (after clearing every
    kernel-selecting variable of :data:`~lam_ref.provenance.KERNEL_ENV` except thread
    counts) and the CPU flags it needs."""

    name: str
    env: dict[str, str]
    description: str
    needs: tuple[str, ...] = ()
    #: the pytest arguments ``make portability`` runs under it when no tests are named (``()``: the
    #: whole suite, for ``default``); torch's kernels matter only where the real encoder runs, and
    #: OpenBLAS's and numpy's everywhere but there
    tests: tuple[str, ...] = ()


def _numpy_avx512_targets() -> str:
    """numpy's dispatch targets that use AVX-512 (names differ between numpy versions)."""
    from ..provenance import kernel_config

    simd = kernel_config()["numpy_simd"] or {"dispatch": []}
    return " ".join(t for t in simd["dispatch"] if "AVX512" in t or t == "X86_V4")


#: The tests that run torch (the real encoder): what a torch kernel configuration can change.
_TORCH_TESTS = ("tests/text/test_encoders.py", "tests/test_demo.py", "determinism")
#: What an OpenBLAS or numpy configuration runs by default: the suite without the tests whose time
#: is torch's encoder (torch links its own BLAS, MKL, so OPENBLAS_CORETYPE and numpy's SIMD flags
#: leave the encoder's arithmetic alone; the decisions on real encodings under every configuration
#: are what ``lam-ref determinism matrix`` checks), without the long-running (``slow``) tests, the
#: browser checks of the built docs and the conformance process supervisor (no arithmetic), so that
#: ``make portability`` fits in 30 minutes on 2 cores (docs/determinism.md, "Kernel matrix").
_NUMPY_TESTS = ("-m", "not slow", "--ignore=determinism/test_encoder.py", "--ignore=tests/text/test_encoders.py",
                "--ignore=tests/test_demo.py", "--ignore=tests/test_encoders_onnx.py", "--ignore=tests/text/test_reuse.py",
                "--ignore=tests/test_docs.py", "--ignore=tests/conformance/test_supervisor.py")


def _configurations() -> dict[str, KernelConfig]:
    out = {"default": KernelConfig("default", {}, "nothing set: each library picks the best kernels for this CPU")}
    for core in ("Prescott", "Nehalem", "Haswell", "Zen", "SkylakeX"):
        out[f"openblas-{core}"] = KernelConfig(f"openblas-{core}", {"OPENBLAS_CORETYPE": core},
                                               f"OpenBLAS {core} kernels", OPENBLAS_CORETYPES[core], _NUMPY_TESTS)
    out["numpy-no-avx512"] = KernelConfig("numpy-no-avx512", {"NPY_DISABLE_CPU_FEATURES": "@avx512"},
                                          "numpy without its AVX-512 loops", ("avx512f",), _NUMPY_TESTS)
    out["torch-default"] = KernelConfig("torch-default", {"ATEN_CPU_CAPABILITY": "default"},
                                        "torch's scalar (non-vectorised) CPU kernels", (), _TORCH_TESTS)
    out["torch-avx2"] = KernelConfig("torch-avx2", {"ATEN_CPU_CAPABILITY": "avx2"}, "torch's AVX2 CPU kernels", ("avx2",),
                                     _TORCH_TESTS)
    return out


#: Every known configuration by name (``lam-ref determinism matrix --configs``).
CONFIGURATIONS: dict[str, KernelConfig] = _configurations()
#: The configurations the matrix and ``make portability`` run by default (all of them).
DEFAULT_CONFIGS: tuple[str, ...] = tuple(CONFIGURATIONS)
_SELECTING = tuple(k for k in KERNEL_ENV if "THREADS" not in k)


def config_env(config: KernelConfig, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a configuration runs in: ``base`` (default ``os.environ``) without any
    kernel-selecting variable, plus the configuration's own (``@avx512``: numpy's AVX-512 targets)."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _SELECTING}
    for k, v in config.env.items():
        env[k] = _numpy_avx512_targets() if v == "@avx512" else v
    return env


_PROBE_CODE = (
    "import json, numpy, sys\n"
    "if sys.argv[1] == 'torch':\n try:\n  import torch\n except Exception:\n  pass\n"
    "from lam_ref.provenance import kernel_config\n"
    "k = kernel_config()\n"
    "print(json.dumps({'openblas': k['openblas_coretype'], 'numpy': (k['numpy_simd'] or {}).get('enabled'),"
    " 'torch': k['torch_cpu_capability']}))\n"
)


def effective(config: KernelConfig, *, timeout: float = 120.0, torch: bool = True) -> dict[str, Any]:
    """The kernels a fresh process under ``config`` actually runs: ``openblas`` (core type in use),
    ``numpy`` (enabled SIMD dispatch targets), ``torch`` (CPU capability; ``None`` without torch or
    with ``torch=False``, which spares the process the import of torch).

    Raises:
        LamValueError: the process fails (its last line of stderr is quoted).
    """
    env = config_env(config)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_repo_root(), env.get("PYTHONPATH")) if p)
    res = subprocess.run([sys.executable, "-c", _PROBE_CODE, "torch" if torch else "-"], env=env, capture_output=True, text=True,
                         timeout=timeout, check=False)
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise LamValueError(f"kernel configuration {config.name!r}: a process under it fails: {last}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _repo_root() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])


@dataclass
class PlannedConfig:
    """A configuration resolved on this machine: ``status`` is ``run``, ``same`` (runs the kernels
    of ``same_as``) or ``skipped`` (``reason``)."""

    name: str
    config: KernelConfig | None
    status: str
    reason: str = ""
    same_as: str | None = None
    kernels: dict[str, Any] = field(default_factory=dict)

    def kernels_text(self) -> str:
        k = self.kernels
        if not k:
            return "-"
        npy = k.get("numpy") or []
        avx512 = "on" if any("AVX512" in t or t == "X86_V4" for t in npy) else "off"
        return f"OpenBLAS {k.get('openblas') or '?'}, numpy AVX-512 {avx512}, torch {k.get('torch') or '-'}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "reason": self.reason, "same_as": self.same_as,
                "env": None if self.config is None else config_env(self.config, {}), "kernels": self.kernels}


def _missing_flags(needs: Sequence[str]) -> list[str]:
    flags = cpu_flags()
    return [f for f in needs if f not in flags]


def plan(names: Sequence[str] | None = None, *, dedupe: bool = True) -> list[PlannedConfig]:
    """Resolve configuration names on this CPU (default :data:`DEFAULT_CONFIGS`), in order.

    ``openblas-<Core>`` accepts any core of :data:`OPENBLAS_CORETYPES`. Unknown names, missing CPU
    features (x86 core types on another architecture included), a request the library ignores
    (the process runs the same kernels as ``default`` although it asked for others) and a failing
    process are ``skipped`` with the reason; with ``dedupe``, a configuration whose kernels equal
    an earlier one's is ``same``.
    """
    names = list(DEFAULT_CONFIGS if names is None else names)
    if not names:
        raise LamValueError("--configs: give at least one kernel configuration")
    out: list[PlannedConfig] = []
    seen: dict[str, str] = {}
    default_fp: str | None = None
    default_torch: tuple[str | None] | None = None
    x86 = bool(cpu_flags() & {"sse2", "avx"})
    for name in names:
        cfg = CONFIGURATIONS.get(name)
        if cfg is None and name.startswith("openblas-") and name[9:] in OPENBLAS_CORETYPES:
            core = name[9:]
            cfg = KernelConfig(name, {"OPENBLAS_CORETYPE": core}, f"OpenBLAS {core} kernels", OPENBLAS_CORETYPES[core])
        if cfg is None:
            known = ", ".join([c for c in CONFIGURATIONS if not c.startswith("openblas-")] +
                              [f"openblas-<{'|'.join(OPENBLAS_CORETYPES)}>"])
            out.append(PlannedConfig(name, None, "skipped", f"unknown kernel configuration {name!r} (known: {known})"))
            continue
        if name.startswith("openblas-") and not x86:
            out.append(PlannedConfig(name, cfg, "skipped", "an x86-64 OpenBLAS core type; this CPU is not x86-64"))
            continue
        missing = _missing_flags(cfg.needs)
        if missing:
            out.append(PlannedConfig(name, cfg, "skipped", f"this CPU lacks {', '.join(missing)}"))
            continue
        asks_torch = "ATEN_CPU_CAPABILITY" in cfg.env
        try:
            # torch's choice depends on ATEN_CPU_CAPABILITY only: read it for the default and the torch
            # configurations, and spare the others the import of torch
            k = effective(cfg, torch=asks_torch or name == "default")
            if name == "default":
                default_torch = (k["torch"],)
            elif not asks_torch and default_torch is not None:
                k["torch"] = default_torch[0]
        except (LamValueError, subprocess.TimeoutExpired, ValueError) as exc:
            out.append(PlannedConfig(name, cfg, "skipped", f"cannot start a process under it: {exc}"))
            continue
        fp = json.dumps(k, sort_keys=True)
        if name == "default":
            default_fp = fp
        elif default_fp is not None and fp == default_fp and cfg.env and not _asks_for_default(cfg, k):
            pc = PlannedConfig(name, cfg, "same" if dedupe else "run", same_as="default", kernels=k,
                               reason="the library ignores the request: the kernels of 'default' run")
            out.append(pc)
            continue
        if dedupe and fp in seen:
            out.append(PlannedConfig(name, cfg, "same", f"runs the kernels of {seen[fp]}", same_as=seen[fp], kernels=k))
            continue
        seen.setdefault(fp, name)
        out.append(PlannedConfig(name, cfg, "run", kernels=k))
    return out


def _asks_for_default(cfg: KernelConfig, k: dict[str, Any]) -> bool:
    """Whether the request names what the default picks anyway (``SkylakeX`` on an AVX-512 CPU)."""
    core = cfg.env.get("OPENBLAS_CORETYPE")
    if core and str(k.get("openblas") or "").lower() == core.lower():
        return True
    cap = cfg.env.get("ATEN_CPU_CAPABILITY")
    return bool(cap and str(k.get("torch") or "").lower() == cap.lower())


def plan_lines(planned: Sequence[PlannedConfig]) -> list[str]:
    """One line per configuration: name, request, kernels in use, status."""
    rows = []
    for p in planned:
        req = " ".join(f"{k}={v}" for k, v in (config_env(p.config, {}).items() if p.config else [])) or "(nothing set)"
        state = {"run": "runs", "same": f"same as {p.same_as}", "skipped": "skipped"}[p.status]
        why = f": {p.reason}" if p.reason else ""
        rows.append(f"{p.name:<18} {req:<40} {p.kernels_text():<52} {state}{why}")
    return rows


def _present(args: Sequence[str]) -> list[str]:
    """``args`` without the test paths this checkout lacks (options and their values kept)."""
    out: list[str] = []
    for i, t in enumerate(args):
        if t.startswith("-") or (i and args[i - 1] in ("-m", "-k")) or os.path.exists(t):
            out.append(t)
    return out


def run_suite(pytest_args: Sequence[str], names: Sequence[str] | None = None, *, timeout: float | None = None) -> int:
    """Run pytest once per distinct configuration; one line each; exit 1 if any run fails (a skipped
    or duplicate configuration never fails). Without ``pytest_args`` each configuration runs its
    :attr:`KernelConfig.tests` (the whole suite, or for torch's configurations the tests that run torch)."""
    planned = plan(names)
    failed = 0
    t_all = time.perf_counter()
    for p in planned:
        head = f"{p.name:<18} {p.kernels_text():<52}"
        if p.status != "run" or p.config is None:
            print(f"{head} {'skipped' if p.status == 'skipped' else 'same as ' + str(p.same_as)}: {p.reason}", flush=True)
            continue
        env = config_env(p.config)
        args = list(pytest_args) or _present(p.config.tests)
        t0 = time.perf_counter()
        try:
            res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], env=env,
                                 capture_output=True, text=True, timeout=timeout, check=False)
            rc, text = res.returncode, res.stdout
        except subprocess.TimeoutExpired:
            rc, text = 124, "timed out"
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        summary = lines[-1] if lines else "no output"
        bad = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
        print(f"{head} {'ok' if rc == 0 else 'FAILED'} ({time.perf_counter() - t0:.0f} s): {summary}", flush=True)
        for ln in bad[:20]:
            print(f"    {ln}", flush=True)
        failed += rc != 0
    print(f"portability: {sum(p.status == 'run' for p in planned)} configurations run, {failed} failed, "
          f"{sum(p.status == 'skipped' for p in planned)} skipped, {sum(p.status == 'same' for p in planned)} the same "
          f"as another ({time.perf_counter() - t_all:.0f} s)", flush=True)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lam_ref.determinism.kernels [--configs A,B] [--timeout S] [--] PYTEST-ARGS``."""
    args = list(sys.argv[1:] if argv is None else argv)
    names = None
    timeout = None
    while args and args[0] in ("--configs", "--timeout"):
        if len(args) < 2:
            print(f"kernels: error: {args[0]} needs a value", file=sys.stderr)
            return 2
        if args[0] == "--configs":
            names = [n.strip() for n in args[1].split(",") if n.strip()]
        else:
            timeout = float(args[1])
        args = args[2:]
    run = bool(args) and args[0] == "--"  # ``--`` with nothing after it: the whole suite
    if run:
        args = args[1:]
    try:
        if not args and not run:
            for line in plan_lines(plan(names)):
                print(line)
            return 0
        return run_suite(args, names, timeout=timeout)
    except LamValueError as exc:
        print(f"kernels: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())

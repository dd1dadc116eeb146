r"""Determinism: probe, compare, and the decision-margin certificate (claim ``STAB``; paper App. D, SPEC §10).

The paper (Appendix D) encodes the same windows at six batch sizes, runs the greedy rule on each
embedding matrix and finds one deletion digest per threshold, although coordinates vary by up to
1.1e-6 and pairwise cosines by 1.8e-7; it explains this with decision margins (minimum
6.7e-6 at ``t = 0.99``). This module makes that argument a certificate:

* **Margin** of arrival ``i`` (greedy first occurrence, SPEC §5): with ``R_i`` the rows retained
  before ``i``, ``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|`` (``+∞`` when ``R_i`` is empty).
  In cosine units (unit rows, eq. 1) this is ``2 · |cos(e_i, e_j) − t|`` at the closest pair.
* **Lemma (STAB)**: if a perturbed embedding matrix ``E'`` satisfies
  ``|sq'(i, j) − sq(i, j)| < margin_i`` for every ``i`` and every ``j ∈ R_i``, the greedy rule
  gives the same ``π`` on ``E'`` as on ``E`` (induction on arrivals; docs/determinism.md).
* **Jitter** between two encodings of the same windows: the largest coordinate difference, the
  largest difference of a pairwise dot product (self products included: "cosine jitter" ``γ``)
  and the largest ``|Δsq|``. Since ``sq = a·a + b·b − 2a·b``, ``|Δsq| <= 4γ``; a decision is
  **at risk** under a stated jitter ``γ`` when its margin is at most ``4γ`` (plus the float64
  slack :data:`MARGIN_SLACK`). A decision that is not at risk cannot change (the lemma); the first
  decision that differs between two runs is always at risk for the jitter between them.

:func:`probe` encodes every observation window once per batch size and records, per (batch size,
threshold), the digests, the margins, the at-risk decisions, the jitter relative to the
reference batch size, the L2 codec's byte digests, the input identity and the execution target
(the JSON schema is :data:`REPORT_KEYS` / docs/determinism.md). :func:`compare` reads reports and
says whether every digest agrees for the same input and threshold, and if not, which decision
diverged first, its margin and whether it was flagged.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import codec as _codec
from . import digest as _digest
from .devices import DEVICES, require_cuda, validate_device
from .geometry import LamValueError, delta_sq, validate_embeddings, validate_positive_int, validate_threshold

__all__ = [
    "DEFAULT_BATCH_SIZES",
    "DEFAULT_THRESHOLDS",
    "DEVICES",
    "DTYPES",
    "MARGIN_SLACK",
    "REFERENCE_BATCH_SIZE",
    "REL_EBS",
    "SCHEMA",
    "Comparison",
    "Corpus",
    "at_risk",
    "compare",
    "decision_margins",
    "device_kwargs",
    "encode_corpus",
    "first_divergence",
    "greedy_map",
    "jitter",
    "load_corpus",
    "load_report",
    "make_weights_copy",
    "probe",
    "require_cuda",
    "risk_bound",
    "weights_identity",
]

#: Report format identifier (``schema`` key of every report).
SCHEMA = "lam_ref.determinism/1"
#: Encoder precisions the probe accepts (``--dtype``).
DTYPES = ("float32", "bfloat16", "float16")
#: Execution devices (``--device``).
#: The paper's batch sizes (App. D) and thresholds.
DEFAULT_BATCH_SIZES = (8, 16, 32, 64, 128, 256)
DEFAULT_THRESHOLDS = (0.99, 0.95)
#: Jitter is measured relative to this batch size (App. D: "relative to batch 64"; SPEC §3).
REFERENCE_BATCH_SIZE = 64
#: Relative error bounds of the L2 codec digests (App. D: 1e-3, 1e-2, 3e-2).
REL_EBS = (1e-3, 1e-2, 3e-2)
#: Allowance for float64 rounding when margins and ``Δsq`` are computed from Gram matrices
#: (``sq = n_i + n_j − 2 g_ij``) instead of the coordinate-wise sum of SPEC §2: the two differ by
#: less than ``4 (D + 2) · 2**-53 · (1 + 1e-4)**2``, below ``1e-12`` for ``D <= 4096``.
MARGIN_SLACK = 1e-12
LAYERS = ("l1", "l2")
SCOPES = ("trajectory", "corpus")
_BLOCK = 2048


# ----------------------------------------------------------------------------------------------
# the certificate: margins, jitter, at-risk decisions (claim STAB)


def _groups_or_all(n: int, groups: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    if groups is None:
        return [(0, n)] if n else []
    out = [(int(a), int(b)) for a, b in groups]
    pos = 0
    for a, b in out:
        if a != pos or b < a:
            raise LamValueError(f"groups must be consecutive [start, stop) ranges covering 0..{n}, got {out[:5]!r}...")
        pos = b
    if pos != n:
        raise LamValueError(f"groups cover 0..{pos} but there are {n} rows")
    return out


def decision_margins(
    embeddings: Any, pi: Any, t: float, groups: Sequence[tuple[int, int]] | None = None
) -> np.ndarray:
    """``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|`` per arrival, ``+∞`` where ``R_i`` is empty (claim ``STAB``).

    ``R_i`` are the rows retained (``π[j] == j``) before ``i`` in ``i``'s group (a trajectory, or
    the whole matrix when ``groups`` is ``None``); ``π`` is given in global ids. ``sq`` comes from
    float64 Gram products, within :data:`MARGIN_SLACK` of SPEC §2's coordinate-wise sum.

    Args:
        embeddings: unit float32 rows ``(N, D)`` in arrival order.
        pi: the representative map ``int64[N]`` of the greedy rule on these rows.
        t: the cosine threshold.
        groups: consecutive ``[start, stop)`` ranges (matching never crosses a group).

    Returns:
        float64[N], in squared-distance units (cosine units: divide by 2).

    Raises:
        LamValueError: bad rows, threshold, groups or a ``π`` of the wrong length.
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    d2 = delta_sq(t)
    p = np.asarray(pi, dtype=np.int64)
    n = e.shape[0]
    if p.shape != (n,):
        raise LamValueError(f"pi must have shape ({n},), got {p.shape}")
    out = np.full(n, np.inf)
    for a, b in _groups_or_all(n, groups):
        ids = np.arange(a, b)
        kept = ids[p[a:b] == ids]
        if kept.size == 0:
            continue
        e64 = e[a:b].astype(np.float64)
        norms = np.einsum("ij,ij->i", e64, e64)
        k64 = e[kept].astype(np.float64)
        knorm = np.einsum("ij,ij->i", k64, k64)
        for s in range(0, b - a, _BLOCK):
            rows = ids[s : s + _BLOCK]
            sq = norms[s : s + _BLOCK, None] + knorm[None, :] - 2.0 * (e64[s : s + _BLOCK] @ k64.T)
            gap = np.abs(sq - d2)
            gap[kept[None, :] >= rows[:, None]] = np.inf  # only rows retained *before* i count
            out[rows] = gap.min(axis=1)
    return out


def risk_bound(cos_jitter: float) -> float:
    """The ``|Δsq|`` bound implied by a pairwise-cosine jitter ``γ``: ``4γ`` (``sq = a·a + b·b − 2a·b``)."""
    g = float(cos_jitter)
    if not math.isfinite(g) or g < 0:
        raise LamValueError(f"jitter must be a finite number >= 0, got {cos_jitter!r}")
    return 4.0 * g


def at_risk(margins: Any, bound_sq: float) -> np.ndarray:
    """Ids of the decisions whose margin is at most ``bound_sq + MARGIN_SLACK`` (claim ``STAB``).

    A decision outside this set cannot change under any perturbation with ``|Δsq| <= bound_sq``.
    """
    m = np.asarray(margins, dtype=np.float64)
    return np.flatnonzero(np.isfinite(m) & (m <= float(bound_sq) + MARGIN_SLACK)).astype(np.int64)


def jitter(reference: Any, other: Any, groups: Sequence[tuple[int, int]] | None = None) -> dict[str, float]:
    """Differences between two encodings of the same windows (App. D's "jitter").

    Returns ``coord`` (max coordinate difference), ``cos`` (max ``|Δ(e_i·e_j)|`` over pairs in
    a group, self products included: the pairwise-cosine jitter γ) and ``sq`` (max
    ``|Δsq(e_i, e_j)|`` over pairs in a group): ``sq <= 4·cos`` up to float64 rounding.
    """
    a = np.asarray(reference, dtype=np.float32)
    b = np.asarray(other, dtype=np.float32)
    if a.shape != b.shape or a.ndim != 2:
        raise LamValueError(f"jitter needs two (N, D) matrices of one shape, got {a.shape} and {b.shape}")
    out = {"coord": float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0,
           "cos": 0.0, "sq": 0.0}
    for s, z in _groups_or_all(a.shape[0], groups):
        a64, b64 = a[s:z].astype(np.float64), b[s:z].astype(np.float64)
        selfd = np.einsum("ij,ij->i", b64, b64) - np.einsum("ij,ij->i", a64, a64)
        for r in range(0, z - s, _BLOCK):
            dg = b64[r : r + _BLOCK] @ b64.T - a64[r : r + _BLOCK] @ a64.T
            out["cos"] = max(out["cos"], float(np.abs(dg).max()))
            dsq = selfd[r : r + _BLOCK, None] + selfd[None, :] - 2.0 * dg
            out["sq"] = max(out["sq"], float(np.abs(dsq).max()))
    return out


def first_divergence(pi_a: Any, pi_b: Any) -> tuple[int | None, int]:
    """``(first id whose π differs, how many later ids differ)``; ``(None, 0)`` when equal."""
    a, b = np.asarray(pi_a, dtype=np.int64), np.asarray(pi_b, dtype=np.int64)
    if a.shape != b.shape:
        raise LamValueError(f"maps differ in length: {a.size} vs {b.size}")
    diff = np.flatnonzero(a != b)
    if diff.size == 0:
        return None, 0
    return int(diff[0]), int(diff.size - 1)


# ----------------------------------------------------------------------------------------------
# devices


def device_kwargs(device: Any) -> dict[str, Any]:
    """Keyword arguments that send :func:`lam_ref.substitution.substitute` to ``device``: ``{}`` for
    the CPU; ``{"device": "cuda"}`` when CuPy and a CUDA device are present; otherwise
    :class:`LamValueError` naming the device."""
    return {} if validate_device(device) == "cpu" else {"device": device}


def greedy_map(embeddings: Any, t: float, groups: Sequence[tuple[int, int]] | None = None, *, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """The greedy rule (exhaustive Algorithm 2 = the oracle, SPEC §5) per group: ``(π, distances)`` in global ids.

    ``device="cuda"`` is passed to :func:`lam_ref.substitution.substitute` when that function
    accepts a ``device`` argument; otherwise it is refused (one line naming the device).
    """
    from .substitution import substitute

    kwargs: dict[str, Any] = {"exhaustive": True, **device_kwargs(device)}
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    pi = np.arange(n, dtype=np.int64)
    dist = np.zeros(n)
    for a, b in _groups_or_all(n, groups):
        res = substitute(e[a:b], t, **kwargs)
        pi[a:b] = np.asarray(res.pi) + a
        dist[a:b] = np.asarray(res.distances)
    return pi, dist


# ----------------------------------------------------------------------------------------------
# input: chunks of trajectories, and the encoder


@dataclass(frozen=True)
class Corpus:
    """The observation windows of some trajectories, in corpus order (global ids), and their groups."""

    texts: list[str]
    groups: list[tuple[int, int]]
    trajectories: list[str]
    paths: list[str]
    window: int
    tokenizer: str
    scope: str

    @property
    def input_sha256(self) -> str:
        """SHA-256 over the chunk texts in order (each as 8-byte little-endian length + UTF-8) and
        the group boundaries (``scope``: decisions never cross a group)."""
        h = hashlib.sha256()
        for a, b in self.groups:
            h.update(b"G" + (b - a).to_bytes(8, "little"))
            for t in self.texts[a:b]:
                data = t.encode("utf-8", errors="surrogatepass")
                h.update(len(data).to_bytes(8, "little") + data)
        return h.hexdigest()


def _shown_path(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the folder argument holding it, prefixed by that folder's name (no
    machine-specific absolute paths in reports)."""
    p = Path(path).resolve()
    for r in roots:
        root = Path(r).resolve()
        if root.is_dir() and p.is_relative_to(root):
            return (Path(root.name) / p.relative_to(root)).as_posix()
    return p.name


def load_corpus(paths: Sequence[str], *, window: int = 512, tokenizer: str = "cl100k_base", fmt: str | None = None,
                scope: str = "trajectory") -> Corpus:
    """Chunk the observation records of every trajectory under ``paths`` (SPEC §3).

    A file that fails to load is an error (a probe over part of its input would compare unlike
    with like); so is an input without any window.
    """
    from .text.chunking import chunk_records, get_tokenizer
    from .text.loaders import LoadFailure, iter_trajectories

    if scope not in SCOPES:
        raise LamValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    window = validate_positive_int(window, "window")
    if not paths:
        raise LamValueError("paths: give at least one trajectory file or folder")
    for p in paths:
        if not Path(p).exists():
            raise LamValueError(f"path {p!r} does not exist")
    tok = get_tokenizer(tokenizer)
    texts: list[str] = []
    groups: list[tuple[int, int]] = []
    ids: list[str] = []
    files: list[str] = []
    for item in iter_trajectories(list(paths), fmt):
        if isinstance(item, LoadFailure):
            raise LamValueError(f"trajectory file {item.path!s}: {item.error}")
        recs = item.records
        chunks = chunk_records([(i, recs[i].turn, recs[i].text) for i in item.observation_indices], tok, window)
        if not chunks:
            continue
        groups.append((len(texts), len(texts) + len(chunks)))
        texts += [c.text for c in chunks]
        ids.append(item.id)
        shown = _shown_path(item.path, paths)
        if shown not in files:
            files.append(shown)
    if not texts:
        raise LamValueError(f"paths {list(paths)!r}: no observation windows to encode")
    if scope == "corpus":
        groups = [(0, len(texts))]
    return Corpus(texts, groups, ids, files, window, tok.name, scope)


_WEIGHT_SKIP = {"README.md", ".gitattributes", "LAM_WEIGHTS.json"}


def _model_folder(encoder: Any) -> Path | None:
    from .text.encoders import minilm_path

    name = getattr(encoder, "source", None) or getattr(encoder, "name", "")
    if name == "all-MiniLM-L6-v2":
        return minilm_path()
    p = Path(name)
    if p.is_dir():
        return p
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache: no identity
        return None


def weights_identity(folder: Path | None) -> dict[str, Any]:
    """SHA-256 of every file of a model folder (weights, config, tokenizer; not README/.gitattributes)
    and one SHA-256 over them (``weights_sha256``); ``None`` values when the folder is unknown."""
    if folder is None:
        return {"folder": None, "files": [], "weights_sha256": None}
    files = []
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.name not in _WEIGHT_SKIP):
        h = hashlib.sha256()
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        files.append({"file": f.relative_to(folder).as_posix(), "bytes": f.stat().st_size, "sha256": h.hexdigest()})
    total = hashlib.sha256("\n".join(f"{x['file']} {x['sha256']}" for x in files).encode()).hexdigest()
    return {"folder": str(folder), "files": files, "weights_sha256": total}


def _torch_dtype(dtype: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


class _ProbeEncoder:
    """A sentence-transformers encoder at a given precision and device (``hash*`` names: the hashing encoder)."""

    def __init__(self, name: str, dtype: str, device: str) -> None:
        from .text.encoders import HashingEncoder, SentenceTransformerEncoder, validate_torch_device

        self.dtype, self.device_name = dtype, device
        if name.lower().startswith("hash"):
            from .text.encoders import get_encoder

            if dtype != "float32" or device != "cpu":
                raise LamValueError(f"encoder {name!r} (hashing) runs in float32 on the cpu only, got {dtype}/{device}")
            self.enc: Any = get_encoder(name)
            self.folder = None
            assert isinstance(self.enc, HashingEncoder)
            return
        validate_torch_device(device)
        # a private instance: converting the cached encoder of get_encoder in place would change other callers
        self.enc = SentenceTransformerEncoder(name, device=device)
        self.enc.source = name
        self.folder = _model_folder(self.enc)
        import torch

        self.enc.model.to(dtype=_torch_dtype(dtype))  # float32: upcasts float16-stored weights exactly
        first = next(self.enc.model.parameters())
        if first.dtype != _torch_dtype(dtype):  # pragma: no cover - torch would have raised
            raise LamValueError(f"dtype {dtype!r}: the model's parameters are {first.dtype}")
        self.torch = torch

    @property
    def name(self) -> str:
        return self.enc.name

    def describe(self) -> dict[str, Any]:
        out = dict(self.enc.describe())
        out.update({"dtype": self.dtype, "device": self.device_name})
        out.update(weights_identity(self.folder))
        return out

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """float32: the compaction path (``Encoder.encode``, normalised by sentence-transformers).
        bfloat16/float16: raw outputs upcast to float64 and normalised there, then float32."""
        if self.dtype == "float32" or self.folder is None:
            return self.enc.encode(texts, batch_size=batch_size)
        raw = self.enc.model.encode(texts, batch_size=batch_size, normalize_embeddings=False, convert_to_tensor=True,
                                    show_progress_bar=False)
        x = raw.float().cpu().numpy().astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", x, x))
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            bad = int(np.flatnonzero(~np.isfinite(norms) | (norms == 0))[0])
            raise LamValueError(f"dtype {self.dtype!r}: the encoder's output row {bad} is zero or not finite")
        return validate_embeddings((x / norms[:, None]).astype(np.float32), name=f"encoder {self.name!r} output")


def encode_corpus(texts: list[str], encoder: Any, batch_size: int) -> np.ndarray:
    """Unit float32 rows for ``texts`` at one batch size (validated)."""
    return encoder.encode(texts, batch_size=validate_positive_int(batch_size, "batch size"))


def make_weights_copy(out_dir: str | os.PathLike[str], *, encoder: str = "all-MiniLM-L6-v2", dtype: str = "float16") -> dict[str, Any]:
    """Write a copy of a sentence-transformers model folder whose weights are stored in ``dtype``.

    Used to carry byte-identical encoder weights to another machine (a float16 copy of MiniLM is
    half the size): both machines then load the same float16 values, upcast exactly to float32.
    Written into a temporary folder and renamed, so ``out_dir`` is complete or absent. Returns the
    weight identity of the new folder (also saved there as ``LAM_WEIGHTS.json``).
    """
    if dtype not in ("float16", "bfloat16", "float32"):
        raise LamValueError(f"dtype must be float16, bfloat16 or float32, got {dtype!r}")
    out = Path(out_dir)
    if out.exists():
        raise LamValueError(f"output folder {str(out)!r} exists; remove it or choose another")
    from .text.encoders import minilm_path

    src = minilm_path() if encoder.lower() in ("all-minilm-l6-v2", "minilm") else Path(encoder)
    if not src.is_dir():
        raise LamValueError(f"encoder {encoder!r}: give 'all-MiniLM-L6-v2' or a local model folder")
    weights = sorted(src.rglob("*.safetensors"))
    if not weights:
        raise LamValueError(f"encoder {encoder!r}: no .safetensors weights under {str(src)!r}")
    from safetensors.torch import load_file, save_file

    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src, tmp)
    try:
        for w in weights:
            tensors = load_file(str(w))
            conv = {k: (v.to(_torch_dtype(dtype)).contiguous() if v.is_floating_point() else v) for k, v in sorted(tensors.items())}
            dst = tmp / w.relative_to(src)
            save_file(conv, str(dst), metadata={"format": "pt"})
            os.chmod(dst, 0o644)  # save_file creates 0600; the copy is meant to be carried and shared
        ident = weights_identity(tmp)
        ident["folder"] = str(out)
        ident.update({"source": str(src), "dtype": dtype})
        (tmp / "LAM_WEIGHTS.json").write_text(json.dumps(ident, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ident


# ----------------------------------------------------------------------------------------------
# execution target


def _blas() -> str | None:
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.26
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name')} {blas.get('version')}".strip() or None
    except Exception:  # noqa: BLE001
        return None


def _version(lib: str) -> str | None:
    try:
        return importlib.metadata.version(lib)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> tuple[str | None, bool | None]:
    root = Path(__file__).resolve().parents[1]
    git = shutil.which("git")
    if not git or not (root / ".git").exists():
        return None, None
    try:
        res = subprocess.run([git, "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
        if res.returncode != 0:
            return None, None
        st = subprocess.run([git, "-C", str(root), "status", "--porcelain", "--", "lam_ref"], capture_output=True, text=True,
                            timeout=5, check=False)
        return res.stdout.strip(), (bool(st.stdout.strip()) if st.returncode == 0 else None)
    except (OSError, subprocess.TimeoutExpired):
        return None, None


def execution_target(device: str = "cpu") -> dict[str, Any]:
    """CPU and GPU model, driver, CUDA, library versions (numpy and its BLAS, torch, sentence-transformers),
    lam_ref version and commit: where a report was made."""
    from . import __version__
    from .conformance.report import _cpu_model, _gpu_model

    commit, dirty = _git_commit()
    out: dict[str, Any] = {
        "cpu": _cpu_model(),
        "gpu": _gpu_model(),
        "gpu_driver": None,
        "cuda": None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "torch": _version("torch"),
        "torch_threads": None,
        "transformers": _version("transformers"),
        "sentence_transformers": _version("sentence-transformers"),
        "cupy": _version("cupy-cuda12x") or _version("cupy"),
        "lam_ref": __version__,
        "lam_ref_commit": commit,
        "lam_ref_dirty": dirty,
        "pythonhashseed": os.environ.get("PYTHONHASHSEED"),
    }
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        out["torch_threads"] = int(torch.get_num_threads())
        out["cuda"] = torch.version.cuda
        if device == "cuda" and torch.cuda.is_available():
            out["gpu"] = torch.cuda.get_device_name(0)
    if device == "cuda":
        try:
            cupy = require_cuda()
            v = int(cupy.cuda.runtime.driverGetVersion())
            out["gpu_driver"] = f"CUDA driver API {v // 1000}.{(v % 1000) // 10}"
        except LamValueError:
            pass
        exe = shutil.which("nvidia-smi")
        if exe:
            try:
                res = subprocess.run([exe, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                     text=True, timeout=5, check=False)
                if res.returncode == 0 and res.stdout.strip():
                    out["gpu_driver"] = res.stdout.strip().splitlines()[0]
            except (OSError, subprocess.TimeoutExpired):
                pass
    return out


# ----------------------------------------------------------------------------------------------
# probe


def _parse_list(values: Iterable[Any], name: str, conv: Callable[[Any], Any]) -> list[Any]:
    out = []
    for v in values:
        out.append(conv(v))
    if not out:
        raise LamValueError(f"{name}: give at least one value")
    if len(set(out)) != len(out):
        raise LamValueError(f"{name}: repeated value in {out!r}")
    return out


def _batch(v: Any) -> int:
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            raise LamValueError(f"batch size must be a positive integer, got {v!r}") from None
    return validate_positive_int(v, "batch size")


def _threshold(v: Any) -> float:
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise LamValueError(f"threshold must be a number in [-1, 1], got {v!r}") from None
    return validate_threshold(v, "threshold")


def _codec_digests(e: np.ndarray, rel_ebs: Sequence[float], device: str) -> list[dict[str, Any]]:
    flat = np.ascontiguousarray(e, dtype=np.float32).reshape(-1)
    out = []
    for r in rel_ebs:
        if device == "cuda":
            cupy = require_cuda()
            b = _codec.codec_encode_rel(cupy.asarray(flat), r, xp=cupy)
        else:
            b = _codec.codec_encode_rel(flat, r)
        out.append({"rel_eb": r, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)})
    return out


def _margin_summary(m: np.ndarray) -> dict[str, Any]:
    fin = m[np.isfinite(m)]
    if fin.size == 0:
        return {"decisions": 0, "min_sq": None, "min_cos": None, "argmin": None, "p01_cos": None, "median_cos": None}
    return {
        "decisions": int(fin.size),
        "min_sq": float(fin.min()),
        "min_cos": float(fin.min()) / 2.0,
        "argmin": int(np.flatnonzero(m == fin.min())[0]),
        "p01_cos": float(np.percentile(fin, 1)) / 2.0,
        "median_cos": float(np.median(fin)) / 2.0,
    }


def _margins_json(m: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else float(f"{x:.6g}") for x in m.tolist()]


@functools.lru_cache(maxsize=4)
def _probe_encoder(name: str, dtype: str, device: str) -> _ProbeEncoder:
    """The probe's encoder, built once per process (a Dask worker loads it once)."""
    return _ProbeEncoder(name, dtype, device)


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def _describe_step(encoder: str, dtype: str, device: str, threads: int | None) -> dict[str, Any]:
    """Load the encoder (timed) and describe it and the execution target (where the encodings run)."""
    _set_threads(threads)
    t0 = time.perf_counter()
    enc = _probe_encoder(encoder, dtype, device)
    load_s = time.perf_counter() - t0
    return {"encoder": enc.describe(), "target": execution_target(device), "load_encoder_s": load_s}


def _encode_step(texts: list[str], encoder: str, dtype: str, device: str, threads: int | None, bs: int,
                 codec: bool) -> dict[str, Any]:
    """All windows at one batch size (App. D), their SHA-256 and, with ``codec``, the L2 codec digests."""
    import socket

    _set_threads(threads)
    enc = _probe_encoder(encoder, dtype, device)
    t0 = time.perf_counter()
    e = encode_corpus(texts, enc, bs)
    row: dict[str, Any] = {"batch_size": bs, "embeddings_sha256": hashlib.sha256(e.tobytes()).hexdigest(),
                           "encode_s": time.perf_counter() - t0, "codec": None, "codec_s": None}
    if codec:
        t0 = time.perf_counter()
        row["codec"] = _codec_digests(e, REL_EBS, device)
        row["codec_s"] = time.perf_counter() - t0
    torch = sys.modules.get("torch")
    where = {"batch_size": bs, "host": socket.gethostname(), "pid": os.getpid(),
             "torch_threads": int(torch.get_num_threads()) if torch is not None else None}
    return {"e": e, "row": row, "where": where}


def _jitter_step(ref: dict[str, Any], other: dict[str, Any], groups: list[tuple[int, int]]) -> dict[str, float]:
    return jitter(ref["e"], other["e"], groups)


def _greedy_step(encoded: dict[str, Any], t: float, groups: list[tuple[int, int]], device: str) -> dict[str, Any]:
    """The greedy rule and the decision margins of one (batch size, threshold)."""
    e = encoded["e"]
    t0 = time.perf_counter()
    pi, dist = greedy_map(e, t, groups, device=device)
    greedy_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    m = decision_margins(e, pi, t, groups)
    return {"pi": pi, "dist": dist, "m": m, "greedy_s": greedy_s, "margin_s": time.perf_counter() - t0}


class InlineSteps:
    """Runs every probe step here, when it is submitted (the serial probe); a tqdm bar when asked."""

    def __init__(self, total: int, progress: bool) -> None:
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="determinism probe", unit="step", file=sys.stderr)

    def share(self, obj: Any) -> Any:
        return obj

    def submit(self, fn: Callable[..., Any], *args: Any, label: str | None = None) -> Any:
        if self.bar is not None and label:
            self.bar.set_postfix_str(label)
        out = fn(*args)
        if self.bar is not None and label:
            self.bar.update(1)
        return out

    def gather(self, handles: list[Any]) -> list[Any]:
        return list(handles)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def probe(
    paths: Sequence[str],
    *,
    encoder: str = "all-MiniLM-L6-v2",
    batch_sizes: Sequence[Any] = DEFAULT_BATCH_SIZES,
    thresholds: Sequence[Any] = DEFAULT_THRESHOLDS,
    dtype: str = "float32",
    threads: int | None = None,
    device: str = "cpu",
    layers: Sequence[str] = LAYERS,
    jitter_bound: float | None = None,
    reference_batch_size: int | None = None,
    scope: str = "trajectory",
    window: int = 512,
    fmt: str | None = None,
    progress: bool = False,
    embeddings_out: dict[int, np.ndarray] | None = None,
    steps: Any = None,
) -> dict[str, Any]:
    """Encode every window once per batch size and record decisions, margins, jitter and digests (App. D).

    Args:
        paths: trajectory files or folders (every loader of :mod:`lam_ref.text.loaders`).
        encoder: ``all-MiniLM-L6-v2`` (default), a sentence-transformers name or local folder, or ``hash``.
        batch_sizes: encoding batch sizes (default the paper's 8..256).
        thresholds: cosine thresholds (default 0.99, 0.95).
        dtype: encoder precision: float32, bfloat16 or float16.
        threads: torch CPU threads (``None``: leave as is).
        device: cpu or cuda (encoder, greedy rule when substitute supports it, codec).
        layers: ``l1`` (decisions, margins) and/or ``l2`` (codec digests).
        jitter_bound: a stated pairwise-cosine jitter γ; decisions with margin <= 4γ are at risk.
            ``None``: the largest cosine jitter measured across ``batch_sizes``.
        reference_batch_size: jitter is relative to it (default 64 when listed, else the first).
        scope: ``trajectory`` (SPEC §1: matching within a trajectory) or ``corpus``.
        window: window size in cl100k tokens.
        fmt: loader format (default: detect per file).
        progress: a progress bar on stderr.
        embeddings_out: when a dict, receives the embedding matrix of every batch size.
        steps: where the steps run (``share``/``submit``/``gather``/``close``): ``None`` runs them
            here, one after the other (:class:`InlineSteps`); :class:`lam_ref.distributed.cli.DaskSteps`
            submits each (encoder load and description, one encoding per batch size, one jitter per
            batch size, one greedy per batch size and threshold) as a Dask task. The report is the
            same apart from timings and the ``distributed`` key.

    Returns:
        The report (a JSON-ready dict; schema in docs/determinism.md).

    Raises:
        LamValueError: any bad argument (checked before the encoder loads) or input file.
    """
    bss = _parse_list(batch_sizes, "batch sizes", _batch)
    ts = _parse_list(thresholds, "thresholds", _threshold)
    if dtype not in DTYPES:
        raise LamValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    device = validate_device(device)
    if threads is not None:
        threads = validate_positive_int(threads, "threads")
    lay = tuple(layers)
    if not lay or any(x not in LAYERS for x in lay) or len(set(lay)) != len(lay):
        raise LamValueError(f"layers must be a non-empty subset of {','.join(LAYERS)}, got {','.join(map(str, lay))!r}")
    if jitter_bound is not None:
        risk_bound(jitter_bound)
    ref = REFERENCE_BATCH_SIZE if reference_batch_size is None and REFERENCE_BATCH_SIZE in bss else reference_batch_size
    ref = bss[0] if ref is None else _batch(ref)
    if ref not in bss:
        raise LamValueError(f"reference batch size {ref} is not among the batch sizes {bss}")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    corpus = load_corpus(paths, window=window, fmt=fmt, scope=scope)
    timings["chunk_s"] = time.perf_counter() - t0
    own = steps is None
    if own:
        steps = InlineSteps(len(bss) * (1 + (len(ts) if "l1" in lay else 0)), progress)
    try:
        texts = steps.share(corpus.texts)
        groups = [tuple(g) for g in corpus.groups]
        info_h = steps.submit(_describe_step, encoder, dtype, device, threads)
        enc_h = {bs: steps.submit(_encode_step, texts, encoder, dtype, device, threads, bs, "l2" in lay,
                                  label=f"encode batch {bs}") for bs in bss}
        jit_h = {bs: steps.submit(_jitter_step, enc_h[ref], enc_h[bs], groups) for bs in bss}
        order = [ref] + [b for b in bss if b != ref]
        keys = [(bs, t) for bs in order for t in ts] if "l1" in lay else []
        greedy_h = {key: steps.submit(_greedy_step, enc_h[key[0]], key[1], groups, device,
                                      label=f"greedy batch {key[0]} t={key[1]}") for key in keys}
        got = steps.gather([info_h, *enc_h.values(), *jit_h.values(), *greedy_h.values()])
    finally:
        if own:
            steps.close()
    info, got = got[0], got[1:]
    encoded = dict(zip(bss, got[: len(bss)]))
    jitters = dict(zip(bss, got[len(bss) : 2 * len(bss)]))
    greedy = dict(zip(keys, got[2 * len(bss) :]))
    timings["load_encoder_s"] = info["load_encoder_s"]
    embs = {bs: encoded[bs]["e"] for bs in bss}
    encodings = [encoded[bs]["row"] for bs in bss]
    for row in encodings:
        row["jitter"] = jitters[row["batch_size"]]
    measured = max(r["jitter"]["cos"] for r in encodings)
    gamma = measured if jitter_bound is None else float(jitter_bound)
    bound = risk_bound(gamma)
    runs = []
    for bs, t in keys:
        g = greedy[(bs, t)]
        pi, dist, m = g["pi"], g["dist"], g["m"]
        kept = pi == np.arange(pi.size)
        deleted = np.flatnonzero(~kept)
        dh = float(dist[deleted].max()) if deleted.size else 0.0
        rm = greedy[(ref, t)]["m"]
        fin = rm[np.isfinite(rm)]
        certified = bool(fin.size == 0 or fin.min() - MARGIN_SLACK > jitters[bs]["sq"] + MARGIN_SLACK)
        runs.append({
            "batch_size": bs,
            "threshold": t,
            "deletion_digest": _digest.deletion_digest(deleted),
            "map_digest": _digest.map_digest(pi),
            "dropped": int(deleted.size),
            "kept": int(kept.sum()),
            "delta_hat": _digest.fmt17(dh),
            "deleted": [[int(i), int(pi[i])] for i in deleted.tolist()],
            "margin": _margin_summary(m),
            "margins": _margins_json(m),
            "at_risk": at_risk(m, bound).tolist(),
            "certified_vs_reference": certified,
            "greedy_s": g["greedy_s"],
            "margin_s": g["margin_s"],
        })
    runs.sort(key=lambda r: (bss.index(r["batch_size"]), ts.index(r["threshold"])))
    if embeddings_out is not None:
        embeddings_out.update(embs)
    desc = info["encoder"]
    return {
        "schema": SCHEMA,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "input_sha256": corpus.input_sha256,
        "input": {
            "paths": corpus.paths,
            "trajectories": len(corpus.trajectories),
            "chunks": len(corpus.texts),
            "window": corpus.window,
            "tokenizer": corpus.tokenizer,
            "scope": corpus.scope,
            "groups": [list(g) for g in corpus.groups],
        },
        "encoder": desc,
        "settings": {
            "batch_sizes": bss,
            "thresholds": ts,
            "reference_batch_size": ref,
            "dtype": dtype,
            "device": device,
            "threads": threads,
            "layers": list(lay),
            "greedy": "exhaustive (equals the oracle, SPEC §5)",
        },
        "jitter": {
            "measured_cos": measured,
            "measured_coord": max(r["jitter"]["coord"] for r in encodings),
            "measured_sq": max(r["jitter"]["sq"] for r in encodings),
            "stated_cos": None if jitter_bound is None else float(jitter_bound),
            "at_risk_bound_sq": bound,
        },
        "encodings": encodings,
        "runs": runs,
        "target": info["target"],
        "timings_s": timings | {"total_encode_s": sum(r["encode_s"] for r in encodings)},
    } | ({} if own else {"distributed": {**steps.describe(), "encodings": [encoded[bs]["where"] for bs in bss]}})


# ----------------------------------------------------------------------------------------------
# reading and comparing reports


_TOP = {"schema": str, "created_utc": str, "input_sha256": str, "input": dict, "encoder": dict, "settings": dict,
        "jitter": dict, "encodings": list, "runs": list, "target": dict, "timings_s": dict, "distributed": dict}
_RUN = {"batch_size": int, "threshold": float, "deletion_digest": str, "map_digest": str, "dropped": int, "kept": int,
        "delta_hat": str, "deleted": list, "margin": dict, "margins": list, "at_risk": list,
        "certified_vs_reference": bool, "greedy_s": float, "margin_s": float}
_ENC = {"batch_size": int, "embeddings_sha256": str, "encode_s": float, "codec": (list, type(None)),
        "codec_s": (float, type(None)), "jitter": dict}
_SETTINGS = {"batch_sizes": list, "thresholds": list, "reference_batch_size": int, "dtype": str, "device": str,
             "threads": (int, type(None)), "layers": list, "greedy": str}
_INPUT = {"paths": list, "trajectories": int, "chunks": int, "window": int, "tokenizer": str, "scope": str, "groups": list}
_JITTER = {"measured_cos": float, "measured_coord": float, "measured_sq": float, "stated_cos": (float, type(None)),
           "at_risk_bound_sq": float}


def _check_keys(obj: dict[str, Any], spec: dict[str, Any], where: str, path: str, optional: Sequence[str] = ()) -> None:
    for k in obj:
        if k not in spec:
            raise LamValueError(f"report {path!r}: unknown key {where}{k!r}")
    for k, typ in spec.items():
        if k not in obj:
            if k in optional:
                continue
            raise LamValueError(f"report {path!r}: missing key {where}{k!r}")
        v = obj[k]
        types = typ if isinstance(typ, tuple) else (typ,)
        ok = any((isinstance(v, bool) if t is bool else (isinstance(v, t) and not isinstance(v, bool)) or
                  (t is float and isinstance(v, int) and not isinstance(v, bool))) for t in types)
        if not ok:
            raise LamValueError(f"report {path!r}: key {where}{k!r} has type {type(v).__name__}")


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate one report; :class:`LamValueError` naming the file for anything else.

    Checked: readable UTF-8 JSON (a truncated file fails here), the ``schema`` id, every key
    known and of the right type, π consistent with its digests, ``dropped`` and at-risk ids in range.
    """
    p = str(path)
    try:
        text = Path(p).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LamValueError(f"report {p!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LamValueError(f"report {p!r} is not readable: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LamValueError(f"report {p!r} is not valid JSON (truncated?): {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise LamValueError(f"report {p!r} is not a lam_ref determinism report (schema {got!r}, expected {SCHEMA!r})")
    _check_keys(doc, _TOP, "", p, optional=("distributed",))
    _check_keys(doc["settings"], _SETTINGS, "settings.", p)
    _check_keys(doc["input"], _INPUT, "input.", p)
    _check_keys(doc["jitter"], _JITTER, "jitter.", p)
    if doc["settings"]["dtype"] not in DTYPES:
        raise LamValueError(f"report {p!r}: unknown dtype {doc['settings']['dtype']!r}")
    if doc["settings"]["device"] not in DEVICES:
        raise LamValueError(f"report {p!r}: unknown device {doc['settings']['device']!r}")
    if "weights_sha256" not in doc["encoder"] or "name" not in doc["encoder"]:
        raise LamValueError(f"report {p!r}: encoder lacks 'name' or 'weights_sha256'")
    n = doc["input"]["chunks"]
    for k, e in enumerate(doc["encodings"]):
        if not isinstance(e, dict):
            raise LamValueError(f"report {p!r}: encodings[{k}] is not an object")
        _check_keys(e, _ENC, f"encodings[{k}].", p)
    for k, r in enumerate(doc["runs"]):
        if not isinstance(r, dict):
            raise LamValueError(f"report {p!r}: runs[{k}] is not an object")
        _check_keys(r, _RUN, f"runs[{k}].", p)
        pi = np.arange(n, dtype=np.int64)
        try:
            pairs = np.asarray(r["deleted"], dtype=np.int64).reshape(-1, 2)
        except (ValueError, TypeError):
            raise LamValueError(f"report {p!r}: runs[{k}].deleted must be [id, representative] pairs") from None
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n or np.any(pairs[:, 1] >= pairs[:, 0])):
            raise LamValueError(f"report {p!r}: runs[{k}].deleted has an id out of range or a representative after its row")
        pi[pairs[:, 0]] = pairs[:, 1]
        if _digest.map_digest(pi) != r["map_digest"] or _digest.deletion_digest(pairs[:, 0]) != r["deletion_digest"]:
            raise LamValueError(f"report {p!r}: runs[{k}] digests do not match its deletion list (edited or corrupt)")
        if len(pairs) != r["dropped"] or len(r["margins"]) != n:
            raise LamValueError(f"report {p!r}: runs[{k}] has dropped={r['dropped']} / {len(r['margins'])} margins for {n} chunks")
        if any((not isinstance(i, int)) or i < 0 or i >= n for i in r["at_risk"]):
            raise LamValueError(f"report {p!r}: runs[{k}].at_risk holds an id outside 0..{n - 1}")
        r["_pi"] = pi
    doc["_path"] = p
    return doc


def identity(doc: dict[str, Any]) -> tuple[str, str | None, str, int]:
    """What must agree for two reports to be comparable: chunk texts, encoder weights, scope, window."""
    return (doc["input_sha256"], doc["encoder"].get("weights_sha256"), doc["input"]["scope"], doc["input"]["window"])


def _machine(doc: dict[str, Any]) -> str:
    tg = doc["target"]
    if doc["settings"]["device"] == "cuda" and tg.get("gpu"):
        return str(tg["gpu"])
    return str(tg.get("cpu") or "?")


@dataclass
class Comparison:
    """The outcome of :func:`compare`: table rows, per-group verdicts, and the exit status."""

    rows: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    codec_checked: int
    codec_mismatches: list[dict[str, Any]]

    @property
    def agree(self) -> bool:
        return all(g["agree"] for g in self.groups) and not self.codec_mismatches

    def to_json(self) -> dict[str, Any]:
        return {"agree": self.agree, "rows": self.rows, "groups": self.groups,
                "codec": {"checked": self.codec_checked, "mismatches": self.codec_mismatches}}


def compare(reports: Sequence[dict[str, Any]], *, allow_different_inputs: bool = False) -> Comparison:
    """Compare loaded reports (:func:`load_report`) run by run.

    Runs are grouped by input identity and threshold; a group agrees when every deletion and map
    digest in it is equal. Otherwise the first run of the group is the reference and, for each
    run that differs, the first chunk whose decision diverged is named with its margin in the
    reference run and whether either run flagged it at risk; later differences are counted as the
    cascade. The reference is the first report's run at its reference batch size: a divergence
    between it and another batch size of the same report is always in its at-risk set (``STAB``);
    across machines the jitter is not measured, and the flag says whether the probe foresaw it.
    Codec digests must agree wherever the embedding bytes are equal.

    Raises:
        LamValueError: fewer than one report, or reports of different inputs without
            ``allow_different_inputs``.
    """
    if not reports:
        raise LamValueError("give at least one report")
    ids = {identity(d) for d in reports}
    if len(ids) > 1 and not allow_different_inputs:
        a, b = reports[0], next(d for d in reports if identity(d) != identity(reports[0]))
        what = "chunk texts" if a["input_sha256"] != b["input_sha256"] else (
            "encoder weights" if identity(a)[1] != identity(b)[1] else "scope/window")
        raise LamValueError(f"reports {a['_path']!r} and {b['_path']!r} have different inputs ({what} differ); "
                            "use --allow-different-inputs to compare each input separately")
    rows, groups = [], []
    by_group: dict[tuple[Any, ...], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for d in reports:
        for r in d["runs"]:
            by_group.setdefault((identity(d), r["threshold"]), []).append((d, r))
            rows.append({
                "report": Path(d["_path"]).name, "machine": _machine(d), "device": d["settings"]["device"],
                "dtype": d["settings"]["dtype"], "threads": d["settings"]["threads"], "batch_size": r["batch_size"],
                "threshold": r["threshold"], "dropped": r["dropped"], "deletion_digest": r["deletion_digest"],
                "map_digest": r["map_digest"], "at_risk": len(r["at_risk"]), "input": d["input_sha256"][:12],
            })
    for (ident, t), members in by_group.items():
        # the reference: the first report's run at its reference batch size (its at-risk set is
        # certified for the jitter of its own batch sizes), else the group's first run
        k = next((n for n, (d, r) in enumerate(members) if d is members[0][0]
                  and r["batch_size"] == d["settings"]["reference_batch_size"]), 0)
        members = [members[k]] + members[:k] + members[k + 1 :]
        ref_doc, ref = members[0]
        digests = {(r["deletion_digest"], r["map_digest"]) for _, r in members}
        g: dict[str, Any] = {"input_sha256": ident[0], "weights_sha256": ident[1], "threshold": t, "runs": len(members),
                             "agree": len(digests) == 1, "reference": f"{Path(ref_doc['_path']).name} batch {ref['batch_size']}",
                             "divergences": []}
        for d, r in members[1:]:
            first, cascade = first_divergence(ref["_pi"], r["_pi"])
            if first is None:
                continue
            m = ref["margins"][first]
            g["divergences"].append({
                "run": f"{Path(d['_path']).name} batch {r['batch_size']} ({d['settings']['dtype']}, {d['settings']['device']})",
                "first_chunk": first,
                "margin_sq": m,
                "margin_cos": None if m is None else m / 2.0,
                "at_risk": bool(first in set(ref["at_risk"]) or first in set(r["at_risk"])),
                "cascade": cascade,
            })
        groups.append(g)
    mismatches: list[dict[str, Any]] = []
    checked = 0
    seen: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
    for d in reports:
        for e in d["encodings"]:
            for c in e["codec"] or []:
                key = (e["embeddings_sha256"], c["rel_eb"])
                where = f"{Path(d['_path']).name} batch {e['batch_size']}"
                if key in seen:
                    checked += 1
                    other_where, other = seen[key]
                    if other["sha256"] != c["sha256"]:
                        mismatches.append({"rel_eb": c["rel_eb"], "a": other_where, "b": where})
                else:
                    seen[key] = (where, c)
    return Comparison(rows, groups, checked, mismatches)

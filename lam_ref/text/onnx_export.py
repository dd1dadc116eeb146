"""The ONNX export that every export backend runs (SPEC §4.5): the transformer of a
sentence-transformers BERT model exported once to ONNX from its local weights.

Both runtimes read this one file: ``onnx`` (:mod:`lam_ref.text.onnx_backend`, ONNX Runtime) and
``openvino`` / ``openvino-bf16`` (:mod:`lam_ref.text.openvino_backend`, OpenVINO's CPU plugin); a
backend's ``attach`` (:class:`lam_ref.text.backends.Backend`) calls :func:`bert_export` and loads the
path it returns.

* **Export** (:func:`exported_model`): ``torch.onnx.export(dynamo=True)`` at opset
  :data:`OPSET`, fp32, dynamic batch and sequence axes, into
  ``$LAM_REF_ONNX_CACHE`` or ``$XDG_CACHE_HOME/lam_ref/onnx`` (default ``~/.cache/lam_ref/onnx``),
  one folder per weights digest (SHA-256 of the model folder's files) and exporter versions. The
  export is written to a temporary folder and renamed, so a folder there is complete; it is
  reused, after its ``model.onnx`` is checked against the SHA-256 in its ``LAM_ONNX.json``. The
  export is deterministic (same weights and versions, same bytes: tested). The model package
  folder itself is never written (it may be read-only). optimum's exporter is not used: its
  ONNX package (optimum-onnx 0.1) needs transformers < 4.58, and the TorchScript exporter
  (``dynamo=False``) produces a wrong graph for transformers 5's BERT (token embeddings off by ~1).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from .model_files import model_files_sha256

__all__ = ["MANIFEST", "OPSET", "bert_export", "cache_root", "exported_model"]

#: The ONNX opset of the export.
OPSET = 18
#: The manifest beside each exported model.
MANIFEST = "LAM_ONNX.json"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def cache_root() -> Path:
    """``$LAM_REF_ONNX_CACHE``, else ``$XDG_CACHE_HOME/lam_ref/onnx``, else ``~/.cache/lam_ref/onnx``."""
    if os.environ.get("LAM_REF_ONNX_CACHE"):
        return Path(os.environ["LAM_REF_ONNX_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lam_ref" / "onnx"


def _versions() -> dict[str, str]:
    """The exporter's versions (they name the cache folder), and ONNX Runtime's when installed (the
    ``openvino`` backends run the same export without it)."""
    import onnx
    import onnxscript
    import torch
    import transformers

    out = {"torch": torch.__version__, "transformers": transformers.__version__, "onnx": onnx.__version__,
           "onnxscript": onnxscript.__version__}
    try:
        import onnxruntime

        out["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _export(hf_model: Any, tokenizer: Any, out: Path) -> None:
    """``out/model.onnx``: the transformer's ``last_hidden_state`` for the three BERT inputs."""
    import torch  # torch is the encoder extra's: imported where it is used (tests/test_packaging.py)

    class _Hidden(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                          return_dict=True).last_hidden_state

    enc = tokenizer(["an example window", "a second, longer example window for the export"], padding=True,
                    return_tensors="pt")
    args = tuple(enc[k] if k in enc else torch.zeros_like(enc["input_ids"]) for k in _INPUTS)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=4096)
    import contextlib
    import io
    import logging
    import warnings

    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "torchvision is not installed" and the like
    with contextlib.redirect_stdout(io.StringIO()), torch.no_grad(), warnings.catch_warnings():  # torch.onnx prints its stages
        warnings.simplefilter("ignore")  # the exporter's deprecation and axis-naming warnings
        prog = torch.onnx.export(_Hidden(hf_model.eval()), args, dynamo=True, opset_version=OPSET,
                                 input_names=list(_INPUTS), output_names=["last_hidden_state"],
                                 dynamic_shapes={k: {0: batch, 1: seq} for k in _INPUTS}, external_data=False)
        prog.save(str(out / "model.onnx"), external_data=False)
    quiet.setLevel(level)


def exported_model(source: Path, hf_model: Any, tokenizer: Any, name: str,
                   backend: str = "onnx") -> tuple[Path, dict[str, Any]]:
    """The cached ONNX export of the weights in ``source`` (exported now when absent; atomic):
    ``(model.onnx path, manifest)``. :class:`LamValueError` naming ``backend`` when it cannot be
    written or exported."""
    _, digest = model_files_sha256(source)
    versions = _versions()
    tag = hashlib.sha256(json.dumps({"opset": OPSET, **versions}, sort_keys=True).encode()).hexdigest()[:12]
    root = cache_root()
    final = root / digest / tag
    if (final / MANIFEST).is_file():
        manifest = json.loads((final / MANIFEST).read_text(encoding="utf-8"))
        if _sha256(final / "model.onnx") != manifest.get("onnx_sha256"):
            raise LamValueError(f"encoder backend {backend!r}: the cached export {str(final)!r} does not match its "
                                f"{MANIFEST} (remove the folder to export again)")
        return final / "model.onnx", manifest
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{tag}.tmp-", dir=final.parent))
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the cache may be shared
    except OSError as exc:
        raise LamValueError(f"encoder backend {backend!r}: cannot write the export cache {str(root)!r} "
                            f"({exc.strerror or exc}); set LAM_REF_ONNX_CACHE or XDG_CACHE_HOME") from None
    try:
        try:
            _export(hf_model, tokenizer, tmp)
        except Exception as exc:  # noqa: BLE001 - any exporter failure is one line
            raise LamValueError(f"encoder backend {backend!r}: exporting {name!r} to ONNX offline failed: "
                                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        manifest = {"weights_sha256": digest, "onnx_sha256": _sha256(tmp / "model.onnx"), "opset": OPSET,
                    "exporter": "torch.onnx.export(dynamo=True)", "versions": versions}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        try:
            os.rename(tmp, final)
        except OSError:  # another process finished the same export first: keep its folder
            if not (final / MANIFEST).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / "model.onnx", manifest


def bert_export(st_model: Any, source: Path | None, name: str, backend: str) -> tuple[Any, Path, dict[str, Any]]:
    """The one export step of every export backend: the Hugging Face BERT inside ``st_model`` and the
    cached export of the weights in ``source`` ``(hf, model.onnx, manifest)``. :class:`LamValueError`
    naming ``backend`` when the weights are in no local folder (``source`` ``None``: they cannot be
    exported offline) or the model is no BERT (the exported inputs are BERT's)."""
    if source is None:
        raise LamValueError(f"encoder backend {backend!r}: the weights of {name!r} are in no local folder, "
                            "so they cannot be exported offline; give a local model folder")
    hf = getattr(st_model[0], "model", None)
    if hf is None or not hasattr(hf, "config") or getattr(hf.config, "model_type", None) != "bert":
        raise LamValueError(f"encoder backend {backend!r}: {name!r} is not a BERT sentence-transformers model (the "
                            "exported inputs are BERT's); use --encoder-backend torch")
    path, manifest = exported_model(source, hf, st_model.tokenizer, name, backend)
    return hf, path, manifest

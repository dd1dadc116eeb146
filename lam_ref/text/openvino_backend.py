"""The OpenVINO encoder backends (SPEC §4.5): the ONNX export of :mod:`lam_ref.text.onnx_export`
(the same cached file ``onnx`` runs, made once from the local weights) compiled by OpenVINO's CPU
plugin, at the precision of the backend's record (:attr:`lam_ref.text.backends.Backend.precision`).

* ``openvino``: ``INFERENCE_PRECISION_HINT = f32``, float32 arithmetic as in torch and ONNX
  Runtime (another GEMM library, so another summation order: cosine to torch ≥ 1 − 1e-5).
* ``openvino-bf16``: ``INFERENCE_PRECISION_HINT = bf16``. On a CPU with AMX or AVX-512 BF16,
  OpenVINO runs the matrix products on bfloat16 inputs with float32 accumulation. That is faster
  and less exact: measured cosine to torch ≥ 1 − 4e-5 on the shared windows. On a CPU without
  them, OpenVINO keeps float32. :meth:`Encoder.describe` reports the precision OpenVINO chose
  (``inference_precision``), so a report always says which one ran.

Only the transformer changes: tokenisation, token-length batches (SPEC §4.1), mean pooling and
normalisation stay sentence-transformers' torch code, as for ``onnx``. The session:
``PERFORMANCE_HINT = LATENCY``, one stream, ``INFERENCE_NUM_THREADS`` = torch's thread count at
load time. Whether a backend's embeddings change a decision is the determinism certificate's
business (docs/determinism.md, "Encoder backends").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..geometry import LamValueError
from .onnx_export import bert_export

if TYPE_CHECKING:
    from .backends import Backend

__all__ = ["HINTS", "attach", "ov_transformer_class"]

#: OpenVINO's ``INFERENCE_PRECISION_HINT`` for a backend's precision.
HINTS = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}


def ov_transformer_class() -> type:
    """The :class:`torch.nn.Module` that stands in for the Hugging Face model (defined on first use)."""
    import torch

    class OvTransformer(torch.nn.Module):
        """The Hugging Face model's inputs, ``last_hidden_state`` from an OpenVINO compiled model."""

        def __init__(self, compiled: Any, config: Any) -> None:
            super().__init__()
            self.compiled = compiled
            self.request = compiled.create_infer_request()
            self.config = config

        def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None, **_: Any) -> dict:
            feeds = {"input_ids": input_ids, "attention_mask": attention_mask,
                     "token_type_ids": torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids}
            res = self.request.infer({k: np.ascontiguousarray(v.cpu().numpy(), dtype=np.int64) for k, v in feeds.items()})
            out = np.array(res[self.compiled.output(0)], dtype=np.float32)  # a copy: the request reuses its buffer
            return {"last_hidden_state": torch.from_numpy(out)}

    return OvTransformer


def attach(st_model: Any, source: Path | None, name: str, backend: Backend) -> dict[str, Any]:
    """Replace the transformer of ``st_model`` (a CPU SentenceTransformer) by the OpenVINO-compiled
    export at ``backend.precision`` (:class:`~lam_ref.text.backends.Backend`'s ``attach``); returns
    what :meth:`Encoder.describe` reports under ``openvino``."""
    hf, path, manifest = bert_export(st_model, source, name, backend.name)
    import openvino as ov
    import torch

    threads = int(torch.get_num_threads())
    hint = HINTS[backend.precision or "float32"]
    try:
        compiled = ov.Core().compile_model(str(path), "CPU", {
            "INFERENCE_PRECISION_HINT": hint, "INFERENCE_NUM_THREADS": threads,
            "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1})
        got = compiled.get_property("INFERENCE_PRECISION_HINT")
        chosen = got.to_string() if hasattr(got, "to_string") else str(got)
    except Exception as exc:  # noqa: BLE001
        raise LamValueError(f"encoder backend {backend.name!r}: OpenVINO cannot compile {str(path)!r}: "
                            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    st_model[0].model = ov_transformer_class()(compiled, hf.config)
    return {"onnx_sha256": manifest["onnx_sha256"], "opset": manifest["opset"], "runtime": "openvino",
            "openvino": ov.__version__, "device": "CPU", "precision_hint": hint,
            "inference_precision": chosen,
            "threads": threads}

"""The ONNX Runtime encoder backend ``onnx`` (SPEC §4.5): the export of
:mod:`lam_ref.text.onnx_export` run by ONNX Runtime on the CPU.

Only the transformer's forward pass changes: tokenisation, batching, mean pooling and
normalisation stay sentence-transformers' own torch code, so the two backends differ only in the
arithmetic of the transformer (measured: cosine to torch's embedding ≥ 1 − 1e-6 on real windows;
docs/determinism.md, "Encoder backends").

**Session**: ``CPUExecutionProvider``, graph optimisation ``ORT_ENABLE_ALL`` (ONNX Runtime's
fp32-exact fusions; no GELU approximation, no quantisation), ``intra_op_num_threads`` = torch's
thread count at load time (``--threads`` of the probe), sequential execution.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..geometry import LamValueError
from .onnx_export import bert_export

if TYPE_CHECKING:
    from .backends import Backend

__all__ = ["attach", "ort_transformer_class"]


@functools.lru_cache(maxsize=1)
def ort_transformer_class() -> type:
    """The :class:`torch.nn.Module` that stands in for the Hugging Face model (defined on first use,
    so that importing this module needs no torch)."""
    import torch

    class OrtTransformer(torch.nn.Module):
        """Stands in for the Hugging Face model inside sentence-transformers' ``Transformer`` module:
        the same inputs, ``last_hidden_state`` from an ONNX Runtime session (SPEC §4.5)."""

        def __init__(self, path: Path, config: Any, threads: int) -> None:
            super().__init__()
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            self.session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
            self.config = config
            self.threads = threads

        def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None, **_: Any) -> dict:
            feeds = {"input_ids": input_ids, "attention_mask": attention_mask,
                     "token_type_ids": torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids}
            (out,) = self.session.run(None, {k: np.ascontiguousarray(v.cpu().numpy(), dtype=np.int64) for k, v in feeds.items()})
            return {"last_hidden_state": torch.from_numpy(out)}

    return OrtTransformer


def attach(st_model: Any, source: Path | None, name: str, backend: Backend) -> dict[str, Any]:
    """Replace the transformer of ``st_model`` (a CPU SentenceTransformer) by its ONNX Runtime
    export (:class:`~lam_ref.text.backends.Backend`'s ``attach``); returns what
    :meth:`Encoder.describe` reports under ``onnx``."""
    hf, path, manifest = bert_export(st_model, source, name, backend.name)
    import torch

    threads = int(torch.get_num_threads())
    try:
        st_model[0].model = ort_transformer_class()(path, hf.config, threads)
    except Exception as exc:  # noqa: BLE001
        raise LamValueError(f"encoder backend {backend.name!r}: ONNX Runtime cannot load {str(path)!r}: "
                            f"{type(exc).__name__}: {exc}") from None
    return {"onnx_sha256": manifest["onnx_sha256"], "opset": manifest["opset"], "provider": "CPUExecutionProvider",
            "graph_optimization": "ORT_ENABLE_ALL", "intra_op_threads": threads,
            "onnxruntime": manifest["versions"]["onnxruntime"]}

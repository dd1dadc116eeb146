"""Encoder backends: one record and one registry (SPEC §4.5), in numcodecs' shape.

A backend changes how a sentence-transformers model's arithmetic runs, never which model it is.
Each is a :class:`Backend` record in one registry, filled by :func:`register_backend`; everything
that lists backends reads it:

* :data:`BACKENDS` (the names, in registration order) and :func:`validate_backend`;
* :func:`require_backend` (its packages importable, else one line naming the extra), run before
  any work;
* :func:`cli_help` (the ``--encoder-backend`` help of every command);
* the probe's ``--dtype`` rule (:func:`lam_ref.determinism.encoder.check_backend_dtype`, from
  :attr:`Backend.precision`);
* the benchmark loop (``benchmarks/bench_encoder.py`` runs every installed backend);
* ``--encoder-backend auto`` (:data:`AUTO`, the command line's default; issue 37) chooses among the
  backends whose :attr:`Backend.certified` is true, in :attr:`Backend.auto_rank` order
  (:func:`auto_candidates`), each after a start-up self-check (:mod:`lam_ref.text.auto_backend`).

**The interface.** ``attach(st_model, source, name, backend) -> dict | None`` is called once, after
sentence-transformers has loaded ``st_model`` on the CPU (or on the torch device, for a backend with
``device=None``). ``source`` is the local folder of the weights (``None`` when they are in no local
folder), ``name`` the encoder name the user gave, ``backend`` the record itself. It replaces what it
runs (for the export backends: the Hugging Face model inside ``st_model[0]``, by a
``torch.nn.Module`` returning ``{"last_hidden_state": ...}``); tokenisation, token-length batches
(SPEC §4.1), pooling and normalisation stay sentence-transformers'. It returns what
:meth:`~lam_ref.text.encoders.Encoder.describe` reports under :attr:`Backend.report_key` (``None``:
nothing). It raises :class:`~lam_ref.geometry.LamValueError` naming the backend when it cannot run.
The export backends share one step, :func:`lam_ref.text.onnx_export.bert_export`.

**Adding a backend:** one module ``lam_ref/text/<name>_backend.py`` with its ``attach``, one
:func:`register_backend` call below, one test module ``tests/test_encoders_<name>.py`` (the
embeddings against torch's on real windows, and the decisions of a real trajectory equal to torch's
or listed at risk), and one extra in ``pyproject.toml`` holding its packages. Whether it is
:attr:`~Backend.certified` is the determinism matrix's verdict (docs/determinism.md, "Encoder
backends").
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from . import onnx_backend, openvino_backend

__all__ = [
    "AUTO",
    "BACKENDS",  # noqa: F822 - module __getattr__: the live registry
    "DEFAULT_BACKEND",
    "Attach",
    "Backend",
    "auto_candidates",
    "cli_help",
    "get_backend",
    "register_backend",
    "require_backend",
    "validate_backend",
    "validate_backend_choice",
]

#: ``attach(st_model, source, name, backend) -> dict | None`` (the module docstring says what it does).
Attach = Callable[[Any, "Path | None", str, "Backend"], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Backend:
    """One encoder backend (SPEC §4.5).

    * ``name``: the value of ``--encoder-backend`` and of ``encoder.backend`` in every report;
    * ``summary``: a phrase for the command-line help and the docs;
    * ``packages``: the modules it imports (checked by :func:`require_backend` before any work);
    * ``extra``: the ``lam_ref[...]`` extra that installs them (``""``: the encoder's own);
    * ``precision``: the float precision its products run at, fixed by the backend
      (``"float32"``, ``"bfloat16"``); ``None``: the model's own, as loaded (torch: the probe's
      ``--dtype`` chooses);
    * ``attach``: the one hook (module docstring);
    * ``certified``: its decisions are certified equal to torch's: the determinism matrix gave
      torch's deletion and map digests with no decision at risk (docs/determinism.md, "Encoder
      backends"). Only such a backend may be chosen without being named (``auto``); one whose
      decisions are at risk stays opt-in;
    * ``device``: the one device it runs on (``None``: any torch device);
    * ``runtime``: what runs it, as errors name it;
    * ``report_key``: the key of :meth:`~lam_ref.text.encoders.Encoder.describe` holding what
      ``attach`` returned (``None``: nothing reported);
    * ``auto_rank``: ``auto``'s preference among the certified backends, lowest tried first (SPEC
      §4.5: the fastest measured first); torch, the reference, is always tried last.
    """

    name: str
    summary: str
    packages: tuple[str, ...]
    extra: str
    precision: str | None
    attach: Attach
    certified: bool
    device: str | None = None
    runtime: str = "torch"
    report_key: str | None = None
    auto_rank: int = 50

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip().lower() \
                or " " in self.name or "," in self.name:
            raise LamValueError(f"backend name must be a non-empty lower-case word, got {self.name!r}")
        if self.precision not in (None, "float32", "bfloat16", "float16"):
            raise LamValueError(f"backend {self.name!r}: precision must be None, float32, bfloat16 or float16, "
                                f"got {self.precision!r}")
        if not callable(self.attach):
            raise LamValueError(f"backend {self.name!r}: attach must be callable, got {self.attach!r}")
        if self.packages and not self.extra:
            raise LamValueError(f"backend {self.name!r}: packages {self.packages!r} need the extra that installs them")


_REGISTRY: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Add ``backend`` to the registry (after the built-ins, in call order); a name registered
    twice is a :class:`LamValueError`. Returns it."""
    if not isinstance(backend, Backend):
        raise LamValueError(f"register_backend needs a Backend, got {type(backend).__name__}")
    if backend.name in _REGISTRY or backend.name == "auto":
        raise LamValueError(f"encoder backend {backend.name!r} is already registered")
    _REGISTRY[backend.name] = backend
    return backend


def __getattr__(name: str) -> Any:
    if name == "BACKENDS":  # live: a backend registered later is listed too
        return tuple(_REGISTRY)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: ``--encoder-backend auto``: the fastest installed certified backend that passes the start-up
#: self-check (SPEC §4.5; :func:`lam_ref.text.auto_backend.choose_backend`). Never a registered name.
AUTO = "auto"


def validate_backend_choice(backend: Any) -> str:
    """:data:`AUTO` or a registered backend's name (:func:`validate_backend`'s errors name both)."""
    if backend == AUTO:
        return AUTO
    if not isinstance(backend, str) or backend not in _REGISTRY:
        raise LamValueError(f"encoder backend must be one of {AUTO}, {', '.join(_REGISTRY)}, got {backend!r}")
    return backend


def auto_candidates(device: str | None = None) -> list[Backend]:
    """The backends ``auto`` may choose on ``device``, in the order it tries them (SPEC §4.5): the
    certified ones other than torch that run there, by :attr:`Backend.auto_rank` (ties: registration
    order), then torch, the reference. Whether each is installed is checked by the caller."""
    dev = None if device is None else str(device).split(":")[0]
    fast = [b for b in _REGISTRY.values()
            if b.certified and b.name != DEFAULT_BACKEND and (b.device is None or dev in (None, b.device))]
    order = {name: k for k, name in enumerate(_REGISTRY)}
    fast.sort(key=lambda b: (b.auto_rank, order[b.name]))
    return [*fast, _REGISTRY[DEFAULT_BACKEND]]


def validate_backend(backend: Any) -> str:
    """A registered backend's name (SPEC §4.5); anything else is a :class:`LamValueError`."""
    if not isinstance(backend, str) or backend not in _REGISTRY:
        raise LamValueError(f"encoder backend must be one of {', '.join(_REGISTRY)}, got {backend!r}")
    return backend


def get_backend(backend: Any) -> Backend:
    """The :class:`Backend` record of a registered name (:func:`validate_backend`'s errors)."""
    return _REGISTRY[validate_backend(backend)]


def require_backend(backend: Any) -> str:
    """:func:`validate_backend`, and the backend's packages installed (SPEC §4.5): a cheap check
    made before any work, one line naming the backend, the missing package and the extra."""
    b = get_backend(backend)
    for pkg in b.packages:
        try:
            found = importlib.util.find_spec(pkg) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise LamValueError(f"encoder backend {b.name!r} needs the package {pkg!r}, which is not installed "
                                f"(lam_ref is not on PyPI: pip install -e '.[{b.extra}]' in its checkout)") from None
    return b.name


def cli_help() -> str:
    """The ``--encoder-backend`` help: ``auto`` (the default), then one phrase per registered backend."""
    order = ", ".join(b.name for b in auto_candidates())
    parts = [f"{AUTO}: the first of {order} that is installed and passes a start-up self-check "
             f"(torch's decisions on fixed windows); one line says why when it falls back"]
    parts += [f"{b.name}: {b.summary}" + (f" (lam_ref[{b.extra}])" if b.extra else "") for b in _REGISTRY.values()]
    return "how the encoder runs (SPEC §4.5): " + "; ".join(parts) + f"; default {AUTO}"


def _attach_torch(st_model: Any, source: Path | None, name: str, backend: Backend) -> None:
    """torch runs the model as sentence-transformers loaded it: nothing to replace or report."""
    return None


#: The reference backend every other backend is certified against, and ``get_encoder``'s default
#: (the command line's default is :data:`AUTO`).
DEFAULT_BACKEND = "torch"

register_backend(Backend(
    "torch", "the model in torch, on its device", (), "", None, _attach_torch, certified=True))
register_backend(Backend(
    "onnx", "ONNX Runtime on the cpu, float32, from an export made once from the local weights",
    ("onnxruntime", "onnx", "onnxscript"), "onnx", "float32", onnx_backend.attach, certified=True,
    device="cpu", runtime="ONNX Runtime's CPUExecutionProvider", report_key="onnx", auto_rank=20))
register_backend(Backend(
    "openvino", "OpenVINO on the cpu, float32, from the same export",
    ("openvino", "onnx", "onnxscript"), "openvino", "float32", openvino_backend.attach, certified=True,
    device="cpu", runtime="OpenVINO's CPU plugin", report_key="openvino", auto_rank=10))
register_backend(Backend(
    "openvino-bf16", "OpenVINO on the cpu with the bfloat16 hint (decisions at risk listed), from the same export",
    ("openvino", "onnx", "onnxscript"), "openvino", "bfloat16", openvino_backend.attach, certified=False,
    device="cpu", runtime="OpenVINO's CPU plugin", report_key="openvino"))

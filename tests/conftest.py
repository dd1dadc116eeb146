"""Fixtures shared by the encoder-backend test modules (tests/test_encoders_onnx.py,
tests/test_encoders_openvino.py)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory):
    """One export cache for the whole session (the export runs once): ``LAM_REF_ONNX_CACHE``."""
    root = tmp_path_factory.mktemp("onnx-cache")
    before = os.environ.get("LAM_REF_ONNX_CACHE")
    os.environ["LAM_REF_ONNX_CACHE"] = str(root)
    yield root
    if before is None:
        os.environ.pop("LAM_REF_ONNX_CACHE", None)
    else:
        os.environ["LAM_REF_ONNX_CACHE"] = before

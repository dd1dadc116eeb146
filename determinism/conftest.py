"""Shared fixtures of the determinism suite: the shared trajectories (skip with a reason when
absent) and one probe of them with the real encoder at the paper's six batch sizes, run once per
session and shared by every test that needs it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lam_ref.text.loaders import shared_data_dir

HERE = Path(__file__).resolve().parent
REPORTS = HERE / "reports"
INPUTS = HERE / "inputs"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA to its folder)")
    return d


def _real_encoder_or_skip() -> None:
    try:
        import sentence_transformers  # noqa: F401

        from lam_ref.text.encoders import minilm_path

        minilm_path()
    except Exception as exc:  # noqa: BLE001 - any missing piece of the real encoder
        pytest.skip(f"the real encoder is not installed (lam_ref[encoder]): {exc}")


@pytest.fixture(scope="session")
def minilm_probe(shared_dir):
    """``(report, embeddings by batch size)`` of the shared trajectories: all-MiniLM-L6-v2, float32,
    batch sizes 8..256 (``LAM_DETERMINISM_BATCH_SIZES`` may name fewer; 64 is always included),
    thresholds 0.99 and 0.95, this process's torch threads (2 under make test)."""
    _real_encoder_or_skip()
    from lam_ref.determinism import probe

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    embs: dict = {}
    sizes = os.environ.get("LAM_DETERMINISM_BATCH_SIZES", "8,16,32,64,128,256").split(",")
    if "64" not in [s.strip() for s in sizes]:
        sizes.append("64")  # the reference batch size (App. D) and the fresh-process comparison
    report = probe([str(shared_dir)], batch_sizes=sizes, embeddings_out=embs)
    return report, embs

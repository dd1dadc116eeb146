"""``--encoder-backend auto``: the fastest installed backend whose decisions are torch's (SPEC §4.5;
issue 37 §1).

:func:`choose_backend` tries :func:`~lam_ref.text.backends.auto_candidates` in order (the certified
backends by :attr:`~lam_ref.text.backends.Backend.auto_rank`: ``openvino``, then ``onnx``, the
fastest measured first, docs/performance.md; then torch, the reference) and takes the first that

1. is installed (its packages importable; a missing one is skipped silently: a light install has
   only torch),
2. loads (its export can be made), and
3. passes the start-up **self-check** (:func:`self_check`): it encodes the 24 fixed windows of
   ``selfcheck_windows.json`` (the determinism probe's default windows of the shipped demo trajectory) and
   the exhaustive greedy rule on them gives, at t = 0.99 and 0.95, the deletion and map digests
   torch gave in the committed determinism report (``determinism/reports/cpu-demo-minilm-f32.json``).

A candidate that fails 2 or 3 is passed over; when any was, the run prints **one line** on stderr
naming each and why, and the backend used. torch is never self-checked: it is the reference. An
encoder without a committed reference (any but all-MiniLM-L6-v2's weights) runs on torch, with the
line. The choice is made once per process and (encoder, device) and named in every report:
``encoder.backend`` (the backend) and ``encoder.backend_choice`` (``"auto: openvino (self-check
passed)"``).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..geometry import LamValueError
from .backends import DEFAULT_BACKEND, auto_candidates, require_backend

__all__ = ["FIXTURE", "Choice", "SelfCheck", "choose_backend", "fixture", "self_check"]

#: The self-check's windows and torch's reference digests (package data).
FIXTURE = Path(__file__).with_name("selfcheck_windows.json")


@dataclass(frozen=True)
class Choice:
    """What ``auto`` chose: ``backend`` (a registered name), ``reason`` (the report's
    ``encoder.backend_choice``) and ``line`` (the one stderr line when it fell back; ``None`` else)."""

    backend: str
    reason: str
    line: str | None = None


@dataclass(frozen=True)
class SelfCheck:
    """A self-check's verdict: ``passed``, and ``detail`` (the first digest that differs, or why none ran)."""

    passed: bool
    detail: str


@functools.lru_cache(maxsize=1)
def fixture() -> dict[str, Any]:
    """The self-check's fixture: ``texts``, ``batch_size``, ``weights_sha256`` of the encoder the
    ``reference`` digests (one per threshold) belong to."""
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def encoder_weights(encoder: Any) -> str | None:
    """The SHA-256 of ``encoder``'s model files (:func:`~lam_ref.text.model_files.weights_sha256`),
    ``None`` when its weights are in no local folder (or it has none, as the hashing encoder)."""
    from .model_files import weights_sha256

    folder = getattr(encoder, "weights_folder", None)
    return None if folder is None else weights_sha256(folder)


def self_check(encoder: Any) -> SelfCheck:
    """Encode the fixture's windows with ``encoder`` and compare the exhaustive greedy rule's
    deletion and map digests at each reference threshold with torch's (SPEC §4.5)."""
    from ..digest import deletion_digest, map_digest
    from ..substitution import substitute

    fx = fixture()
    weights = encoder_weights(encoder)
    if weights != fx["weights_sha256"]:
        return SelfCheck(False, f"no self-check reference for encoder {encoder.name!r} (weights sha256 "
                                f"{(weights or 'unknown')[:12]}; the reference is all-MiniLM-L6-v2's)")
    try:
        e = encoder.encode(fx["texts"], batch_size=int(fx["batch_size"]))
    except Exception as exc:  # noqa: BLE001 - any failure of the backend is a failed check, named
        return SelfCheck(False, f"encoding the self-check windows failed: {type(exc).__name__}: {exc}")
    for ref in fx["reference"]:
        t = float(ref["threshold"])
        pi = np.asarray(substitute(e, t, exhaustive=True).pi, dtype=np.int64)
        got = {"deletion_digest": deletion_digest(np.flatnonzero(pi != np.arange(pi.size))),
               "map_digest": map_digest(pi)}
        for key, value in got.items():
            if value != ref[key]:
                return SelfCheck(False, f"{key.replace('_', ' ')} {value} at t={t} on the self-check windows, "
                                        f"torch's is {ref[key]}")
    return SelfCheck(True, "self-check passed")


def _installed(name: str) -> bool:
    try:
        require_backend(name)
    except LamValueError:
        return False
    return True


@functools.lru_cache(maxsize=8)
def choose_backend(name: str, device: str | None, load: Callable[[str, str | None, str], Any]) -> Choice:
    """The backend ``--encoder-backend auto`` runs ``name`` on ``device`` with (module docstring);
    once per process and (name, device). ``load(name, device, backend)`` loads an encoder
    (:func:`~lam_ref.text.encoders.get_encoder`, which calls this)."""
    passed_over: list[str] = []
    for b in auto_candidates(device):
        if b.name == DEFAULT_BACKEND:
            break
        if not _installed(b.name):
            continue
        try:
            check = self_check(load(name, device, b.name))
        except Exception as exc:  # noqa: BLE001 - a broken optional runtime must not stop the default run
            check = SelfCheck(False, f"could not load: {type(exc).__name__}: {exc}")
        if check.passed:
            if not passed_over:
                return Choice(b.name, f"auto: {b.name} ({check.detail})")
            why = "; ".join(passed_over)
            return Choice(b.name, f"auto: {b.name} ({check.detail}; passed over: {why})",
                          f"--encoder-backend auto: passed over {why}; using {b.name}")
        passed_over.append(f"{b.name} {check.detail}")
        if check.detail.startswith("no self-check reference"):
            break  # the same for every backend: no reference to check any of them against
    if not passed_over:
        return Choice(DEFAULT_BACKEND, f"auto: {DEFAULT_BACKEND} (no faster certified backend installed"
                                       f"{'' if device in (None, 'cpu') else f' for device {device}'})")
    why = "; ".join(passed_over)
    return Choice(DEFAULT_BACKEND, f"auto: {DEFAULT_BACKEND} (the reference; passed over: {why})",
                  f"--encoder-backend auto: passed over {why}; using {DEFAULT_BACKEND}")


def announce(choice: Choice) -> None:
    """Print ``choice``'s one line on stderr (nothing when it did not fall back)."""
    if choice.line:
        print(f"lam-ref: warning: {choice.line}", file=sys.stderr)

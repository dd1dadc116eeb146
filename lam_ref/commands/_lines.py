"""One-line summaries the trajectory commands print under their tables: the run's layer settings
(``compact``, ``compare``), what went through the encoder (``compact``, ``sweep``, ``pairs``,
``compare``; SPEC §4.4) and how it ran (SPEC §4.5, §4.6)."""

from __future__ import annotations

from typing import Any


def config_line(config: Any, *, per_row: bool = False) -> str:
    """The layer settings of a run in one line (compact and compare print it; issue 23 §2);
    ``per_row``: without threshold and layers (``compare`` sets them per row)."""
    c = config.to_json()
    search = "exhaustive" if c["exhaustive"] else f"bands r={c['r']} rel={c['rel']}"
    layers = "->".join(x.upper() for x in c["layers"])
    head = "config (t and layers per row): " if per_row else f"config: t={c['threshold']} (δ={c['delta']:.4f}), layers {layers}, "
    return (f"{head}windows <= {c['window']} {c['tokenizer']} tokens (fit: {c['window_fit']}), driver {c['driver']}, "
            f"{search}, batch {c['batch_size']}, stubs {c['l0_stubs']} (L1 and L0), reuse {c['reuse']}")


def reuse_line(total: dict[str, Any], enabled: bool) -> str:
    """How many windows went through the encoder and how many reused an earlier encoding of the
    same text (SPEC §4.4), for the people's view of compact, sweep, pairs and compare."""
    enc, reused = total.get("windows_encoded", 0), total.get("windows_reused", 0)
    if not enabled:
        return f"encoding: {enc} windows encoded, none reused (--no-reuse)"
    return (f"encoding: {enc} windows encoded, {reused} reused (their exact text was already encoded in this run; "
            "spec §4.4)")


def backend_note(encoder: dict[str, Any]) -> str:
    """``, backend onnx`` when the encoder ran on a backend other than torch; with ``auto``, the
    choice and why (``, backend auto: openvino (self-check passed)``; SPEC §4.5); with the on-disk
    cache, its hits and writes (SPEC §4.6)."""
    backend, choice, cache = encoder.get("backend"), encoder.get("backend_choice"), encoder.get("embedding_cache")
    note = f", backend {choice}" if choice else (f", backend {backend}" if backend not in (None, "torch", "numpy") else "")
    if cache:
        note += (f", embedding cache {cache['hits']} read, {cache['written']} written"
                 + (f", {cache['refused']} refused" if cache["refused"] else "")
                 + (f", {cache['evicted']} evicted" if cache["evicted"] else ""))
    return note

"""Atomic file writes: a temporary file in the same folder, fsync, then rename (never a truncated file);
JSON (:func:`write_json`) and JSON Lines (:func:`write_jsonl`) through them."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> Path:
    """Create ``path`` atomically; ``write`` receives the open binary temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a written file gets the usual mode
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename:  # a full disk: name the file (D18)
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 text atomically."""
    data = text.encode("utf-8")
    return atomic_write(path, lambda fh: fh.write(data))


def write_json(obj: Any, dest: str | os.PathLike[str]) -> None:
    """Write ``obj`` as indented, key-sorted JSON to ``dest`` (``-`` for stdout), files atomically;
    numpy scalars and arrays become numbers and lists."""
    text = json.dumps(obj, indent=2, sort_keys=True, default=_json_default)
    if str(dest) == "-":
        sys.stdout.write(text + "\n")
        return
    atomic_write_text(dest, text + "\n")


#: Characters some line readers (``str.splitlines``, editors) take for line ends inside a JSON
#: string: written escaped, so a JSON Lines file has exactly one line per ``\n`` for every reader.
_LINE_SEPARATORS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def json_line(obj: Any) -> str:
    """One JSON Lines line (with its ``\\n``): non-ASCII kept, except that every Unicode line
    separator is escaped, and a row holding a lone surrogate (a file name with a non-UTF-8 byte)
    is written with ASCII escapes, so the line is valid UTF-8 and reads back to the same value."""
    text = json.dumps(obj, ensure_ascii=False).translate(_LINE_SEPARATORS)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True)
    return text + "\n"


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> Path:
    """Write one JSON object per line (:func:`json_line`: UTF-8, non-ASCII kept, line separators
    escaped), atomically."""
    data = "".join(json_line(r) for r in rows).encode("utf-8")
    return atomic_write(path, lambda fh: fh.write(data))


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


#: np.load parses a .npy header with ast.literal_eval; CPython 3.11's ast module keeps its recursion
#: depth in shared state, so two threads parsing at once can raise "SystemError: AST constructor
#: recursion depth mismatch" (seen with Dask's threaded workers). Header parses are serialised.
_NPY_LOCK = threading.Lock()


def load_npy(path: Any, **kwargs: Any) -> Any:
    """``np.load(path, **kwargs)`` safe to call from several threads at once (see ``_NPY_LOCK``)."""
    import numpy as np

    with _NPY_LOCK:
        return np.load(path, **kwargs)

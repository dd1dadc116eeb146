"""Atomic file writes: a temporary file in the same folder, fsync, then rename (never a truncated file);
JSON (:func:`write_json`) and JSON Lines (:func:`write_jsonl`) through them. And the one way an input
file is read (:func:`read_input`, :func:`read_json_input`, :func:`load_npy_input`): only regular
files, never past :func:`max_input_bytes`, every refusal one :class:`InputError` naming the file."""

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


# ----------------------------------------------------------------------------------------------
# reading: the one input-opening path of every command (docs/reliability.md, issue 39 §3)

#: The largest input file read (bytes; ``LAM_REF_MAX_FILE_BYTES`` overrides it): one file may not
#: cost unbounded memory (a larger file is refused, naming the file and the limit).
MAX_INPUT_BYTES = 1 << 30


class InputError(ValueError):
    """An input file that cannot be read as asked: not a regular file, larger than the limit, not
    UTF-8, not JSON, or past a parser limit. One line naming the file (``path``) and the problem;
    the command line reports it as a usage error (exit 2), per-file readers as that file's failure."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def max_input_bytes() -> int:
    """:data:`MAX_INPUT_BYTES`, or ``$LAM_REF_MAX_FILE_BYTES`` when set to a positive integer."""
    env = os.environ.get("LAM_REF_MAX_FILE_BYTES")
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value > 0:
            return value
    return MAX_INPUT_BYTES


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO``, ``a character device``, ...)."""
    import stat

    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_input_file(path: str | os.PathLike[str]) -> os.stat_result:
    """Refuse, without opening it, an input that is not a regular file (a directory, a FIFO that
    would block, a device that never ends) or is larger than :func:`max_input_bytes`: an
    :class:`InputError` naming the file. Returns its ``stat``."""
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(path, "is a directory, expected a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, f"is not a regular file ({file_kind(st.st_mode)}); only regular files are read")
    limit = max_input_bytes()
    if st.st_size > limit:
        raise InputError(path, f"is {st.st_size} bytes, more than the limit of {limit} bytes (LAM_REF_MAX_FILE_BYTES)")
    return st


def read_input(path: str | os.PathLike[str]) -> bytes:
    """The bytes of an input file, through :func:`check_input_file`: opened non-blocking, checked
    again once open (a file swapped for a FIFO in between), read up to the limit and no further."""
    import stat

    check_input_file(path)
    limit = max_input_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise InputError(path, "is not a regular file; only regular files are read")
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise InputError(path, f"is more than the limit of {limit} bytes (LAM_REF_MAX_FILE_BYTES)")
    return raw


def read_input_text(path: str | os.PathLike[str]) -> str:
    """:func:`read_input` decoded as strict UTF-8 (a leading BOM dropped); invalid UTF-8 is an
    :class:`InputError` naming the offset and line."""
    raw = read_input(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(path, f"is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                               f"(line {line})") from None
    return text[1:] if text.startswith("\ufeff") else text


def parse_json(path: str | os.PathLike[str], text: str) -> Any:
    """``json.loads(text)`` of the file ``path``; invalid JSON and the parser's limits (nesting past
    the recursion limit, an integer of more than ``sys.get_int_max_str_digits()`` digits) are one
    :class:`InputError` naming the file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(path, "invalid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise InputError(path, f"JSON exceeds a parser limit: {exc}") from None


def read_json_input(path: str | os.PathLike[str]) -> Any:
    """An input JSON file: :func:`read_input_text` then :func:`parse_json`."""
    return parse_json(path, read_input_text(path))


def load_npy_input(path: str | os.PathLike[str], **kwargs: Any) -> Any:
    """An input ``.npy``/``.npz`` through :func:`check_input_file` (no FIFO, device or file past the
    limit is opened); numpy's refusals (a bad header, a header past numpy's size limit, a pickled
    array) are one :class:`InputError` naming the file."""
    check_input_file(path)
    kwargs.setdefault("allow_pickle", False)
    try:
        return load_npy(path, **kwargs)
    except (ValueError, OSError, EOFError, SyntaxError, RecursionError, MemoryError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, f"is not a readable .npy/.npz file: {msg}") from None

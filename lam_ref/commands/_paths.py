"""Inputs and outputs of a command, checked before any model loads: input paths exist and can be
read, no output is an input or lies inside an input folder (D1, D12), an output file or folder can
be written (created only with ``--mkdir``). Each refusal is a one-line
:class:`~lam_ref.geometry.LamValueError` naming the option and the path (exit 2)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..geometry import LamValueError
from ..tables import printable


def validate_input_paths(paths: Iterable[str], name: str = "PATH") -> list[str]:
    """Every input path exists and can be read (a file) or listed (a folder): else one
    :class:`LamValueError` naming the path and the problem (exit 2 before any work)."""
    out = []
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise LamValueError(f"{path}: does not exist" + (" (a broken link)" if p.is_symlink() else ""))
        if p.is_dir():
            if not os.access(p, os.R_OK | os.X_OK):
                raise LamValueError(f"{path}: folder cannot be read (permission denied)")
        elif not os.access(p, os.R_OK):
            raise LamValueError(f"{path}: cannot be read (permission denied)")
        out.append(str(path))
    return out


def refuse_outputs_in_inputs(inputs: Iterable[str], outputs: Iterable[tuple[str, str | None]]) -> None:
    """No output may be an input file or lie inside an input folder that is read (D1, D12): each
    ``(option, path)`` of ``outputs`` (``None``: not given) that is one of ``inputs``, or lies
    anywhere under an input folder, is a :class:`LamValueError` naming both (exit 2, before any
    work). Paths are compared resolved (links and ``..`` followed), an existing file also by
    identity (a hard link)."""
    ins = [(Path(i), Path(i).resolve()) for i in inputs]
    for option, out in outputs:
        if not out or out == "-":
            continue
        o = Path(out).resolve()
        for raw, rin in ins:
            if raw.is_dir():
                if o == rin or rin in o.parents:
                    raise LamValueError(f"{option} {printable(out)}: lies inside the input folder {printable(raw)}, "
                                        "which is read; write outputs outside the inputs")
            elif o == rin or (o.exists() and raw.exists() and os.path.samefile(o, raw)):
                raise LamValueError(f"{option} {printable(out)}: is the input file {printable(raw)}; "
                                    "an output never replaces an input")


def _probe_dir(directory: Path, what: str) -> None:
    """Create and remove a temporary file in ``directory``: the only reliable test that a file can
    be written there (permissions, read-only mounts, ACLs, quotas of zero)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lam-ref-probe.", dir=directory)
    except OSError as exc:
        raise LamValueError(f"{what}: folder {str(directory)!r} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(tmp)


def validate_output_file(path: str, name: str, *, mkdir: bool = False) -> None:
    """Refuse, before any work, an output file path that cannot be written: a folder, a file
    inside something that is not a folder, a missing folder (unless ``mkdir``, which creates it
    now), a folder where no file can be created, or an existing file that cannot be replaced."""
    p = Path(path)
    what = f"{name} {path}"
    if p.is_dir():
        raise LamValueError(f"{what}: is a directory; give a file path")
    parent = p.parent
    if not parent.exists():
        anc = parent
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise LamValueError(f"{what}: {str(anc)!r} is not a directory")
        if not mkdir:
            raise LamValueError(f"{what}: folder {str(parent)!r} does not exist (create it, or pass --mkdir)")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LamValueError(f"{what}: cannot create folder {str(parent)!r}: {exc.strerror or exc}") from None
    if not parent.is_dir():
        raise LamValueError(f"{what}: {str(parent)!r} is not a directory")
    _probe_dir(parent, what)
    if p.exists() and not p.is_file():
        raise LamValueError(f"{what}: exists and is not a regular file")


def validate_output_dir(path: str, name: str, *, mkdir: bool = False) -> None:
    """Refuse, before any work, an output folder that exists as something else, is missing (unless
    ``mkdir``, which creates it now) or where no file can be created."""
    p = Path(path)
    what = f"{name} {path}"
    if p.exists() and not p.is_dir():
        raise LamValueError(f"{what}: exists and is not a directory")
    if not p.exists():
        if not mkdir:
            raise LamValueError(f"{what}: folder does not exist (create it, or pass --mkdir)")
        anc = p
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise LamValueError(f"{what}: {str(anc)!r} is not a directory")
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LamValueError(f"{what}: cannot create folder: {exc.strerror or exc}") from None
    _probe_dir(p, what)


def validate_json_dest(dest: str | None, *, mkdir: bool = False) -> None:
    """``--json``: ``-`` (stdout) or a writable file path."""
    if dest and dest != "-":
        validate_output_file(dest, "--json", mkdir=mkdir)

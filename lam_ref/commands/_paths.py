"""Inputs and outputs of a command, checked before any model loads: input paths exist and can be
read, no output is an input or lies inside an input folder (D1, D12), an output file or folder can
be written (created only with ``--mkdir``). Each refusal is a one-line
:class:`~lam_ref.geometry.LamValueError` naming the option and the path (exit 2).

Every path option of every command is declared where it is added, :func:`reads` (an input) or
:func:`writes` (an output); :func:`check_command_paths`, which :func:`lam_ref.cli.main` runs before
any command, is the one check that no output is an input (issue 39 §1) and that no input given as a
file is a FIFO, a device, a folder or past the size limit (issue 39 §3). A new command's options
are covered by declaring them (``tests/test_cmd_paths.py`` finds every undeclared path option)."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from .._io import InputError, check_input_file
from ..geometry import LamValueError
from ..tables import printable

#: What an input option names: ``file`` (one regular file, refused before any work when it is a
#: FIFO, a device, a folder or past the size limit), ``file-or-folder`` (the same, or a folder),
#: ``paths`` (trajectory files or folders: a bad file, given or found in a folder, is that file's
#: failure, reported by the reader), ``name-or-path`` (a name; when it exists, a file or a folder).
InputKind = Literal["file", "file-or-folder", "paths", "name-or-path"]
#: What an output option names: ``file`` or ``folder`` (no input may lie inside it).
OutputKind = Literal["file", "folder"]

_ROLE = "lam_ref_path_role"


def reads(action: argparse.Action, kind: InputKind = "file",
          also: Callable[[str], Iterable[str]] | None = None) -> argparse.Action:
    """Declare ``action`` (what ``add_argument`` returned) an input of its command; ``also``: the
    other files read for one value (``verify``'s ``OUT.ids.json`` beside ``OUT.npy``)."""
    setattr(action, _ROLE, ("input", kind, also))
    return action


def writes(action: argparse.Action, kind: OutputKind = "file",
           also: Callable[[str], Iterable[str]] | None = None) -> argparse.Action:
    """Declare ``action`` an output of its command; ``also``: the other files written for one value
    (``OUT.svg`` beside ``OUT.png``, ``OUT.ids.json`` beside ``OUT.npy``)."""
    setattr(action, _ROLE, ("output", kind, also))
    return action


def path_role(action: argparse.Action) -> tuple[str, str, Callable[[str], Iterable[str]] | None] | None:
    """``(input|output, kind, also)`` as declared by :func:`reads`/:func:`writes`, else ``None``."""
    return getattr(action, _ROLE, None)


def svg_beside(path: str) -> list[str]:
    """``OUT.svg`` beside ``OUT.png`` (every plot option writes both)."""
    return [str(Path(path).with_suffix(".svg"))]


def png_and_svg(stem: str) -> list[str]:
    """``STEM.png`` and ``STEM.svg`` (``cct membership --plot STEM``)."""
    return [stem + ".png", stem + ".svg"]


def _values(args: argparse.Namespace, action: argparse.Action) -> list[str]:
    value = getattr(args, action.dest, None)
    if value is None or value is False:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _option(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)


def check_command_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The one path check of every command (run by :func:`lam_ref.cli.main` before the command):
    an existing input declared ``file`` must be a regular file within the size limit (a FIFO, a
    device, a folder is refused without being opened); no output (nor a file written beside it)
    may be an input, a file read beside an input, lie inside an input folder, or be a folder that
    holds an input (:func:`refuse_outputs_in_inputs`). One :class:`LamValueError` (exit 2)."""
    inputs: list[str] = []
    outputs: list[tuple[str, str | None]] = []
    out_dirs: list[tuple[str, str]] = []
    for action in parser._actions:
        role = path_role(action)
        if role is None:
            continue
        direction, kind, also = role
        for value in _values(args, action):
            if value == "-":
                continue
            if direction == "input":
                if kind == "name-or-path" and not os.path.lexists(value):
                    continue
                if kind != "paths" and os.path.exists(value) and not (kind != "file" and os.path.isdir(value)):
                    try:
                        check_input_file(value)
                    except InputError as exc:
                        raise LamValueError(f"{_option(action)} {printable(value)}: {exc.problem}") from None
                inputs.append(value)
                inputs.extend(also(value) if also else ())
            else:
                outputs.append((_option(action), value))
                outputs.extend((_option(action), extra) for extra in (also(value) if also else ()))
                if kind == "folder":
                    out_dirs.append((_option(action), value))
    refuse_outputs_in_inputs(inputs, outputs)
    for option, folder in out_dirs:  # a folder written into may not hold an input: any name may be written there
        root = Path(folder).resolve()
        for path in inputs:
            if root in Path(path).resolve().parents:
                raise LamValueError(f"{option} {printable(folder)}: holds the input {printable(path)}; "
                                    "write outputs outside the inputs")


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

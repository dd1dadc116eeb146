"""Issue 39 §1, §3: every subcommand, as registered on the command line, refuses an output that is
one of its inputs (or lies inside an input folder) and an input file that is a FIFO or a device, in
one line, exit 2, before any work, leaving the input's bytes unchanged (docs/reliability.md, D1).

The subcommands and their path options are read from the parser (``lam_ref.cli.build_parser``), so
a new subcommand is covered as soon as it declares its path options with
``lam_ref.commands._paths.reads``/``writes``; :func:`test_every_path_option_is_declared` fails for
one that does not."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from lam_ref.cli import build_parser, main
from lam_ref.commands._paths import path_role

#: Contents of every input file: the test checks they are still these bytes after the command.
PRECIOUS = b'{"precious": "input bytes"}\n'

#: Option metavars and names that name a path: each must be declared ``reads`` or ``writes``.
_PATHLIKE = re.compile(r"PATH|OUT|DIR|FILE|STEM|PATCHES|REPORT|PROFILE|\.json|\.npy|\.png")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from _leaves(sub, (*path, name))
                else:
                    yield (*path, name), sub


LEAVES = dict(_leaves(build_parser()))


def _roles(sub: argparse.ArgumentParser, direction: str) -> list[argparse.Action]:
    return [a for a in sub._actions if (path_role(a) or ("",))[0] == direction]


def _cases() -> list[tuple[str, str, str]]:
    return [(" ".join(cmd), _name(o), _name(i)) for cmd, sub in LEAVES.items()
            for o in _roles(sub, "output") for i in _roles(sub, "input")]


def _name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _argv(cmd: str, tmp: Path, values: dict[str, str]) -> list[str]:
    """A command line for ``cmd`` giving ``values`` (by option name or positional dest) and a fresh
    regular file for every other positional input and required option (so argparse accepts it)."""
    sub = LEAVES[tuple(cmd.split())]
    argv = cmd.split()
    given = set()
    for action in sub._actions:
        name = _name(action)
        role = path_role(action)
        if name in values:
            value = values[name]
        elif not action.option_strings and role and action.nargs != argparse.REMAINDER and action.nargs != "*":
            value = str(_file(tmp / f"other-{name}.json"))
        elif action.required and role:
            value = str(tmp / f"other-{name.strip('-')}.out")
        elif action.required:  # a required setting (audit -t): any value argparse accepts
            value = str(action.choices[0]) if action.choices else {float: "0.95", int: "1"}.get(action.type, "x")
        else:
            continue
        given.add(action)
        argv += ([action.option_strings[-1]] if action.option_strings else []) + [value]
    for group in sub._mutually_exclusive_groups:  # audit: one of --kept / --pi
        if group.required and not given & set(group._group_actions):
            first = group._group_actions[0]
            argv += [first.option_strings[-1], str(_file(tmp / f"other-{first.dest}.json"))]
    return argv


def _file(path: Path) -> Path:
    path.write_bytes(PRECIOUS)
    return path


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    return rc, capsys.readouterr().err


def test_the_issue_commands_are_covered():
    """The commands the fault campaign found overwriting their inputs each have both an input and an
    output declared (else the parametrised test below would not run them)."""
    have = {c for c, _, _ in _cases()}
    missing = {"restore", "determinism probe", "substitute", "bands", "audit", "determinism compare", "conform",
               "compact", "sweep", "pairs", "verify", "compare"} - have
    assert not missing, f"commands without a declared input and output pair: {sorted(missing)}"


def test_every_path_option_is_declared():
    """Every option or positional of every subcommand whose name or metavar names a path is declared
    an input or an output, so the one path check sees it (a new option cannot slip past)."""
    undeclared = []
    for cmd, sub in LEAVES.items():
        for a in sub._actions:
            label = f"{a.metavar or ''} {a.dest}"
            pathlike = bool(_PATHLIKE.search(a.metavar or "")) or a.dest in ("paths", "embeddings", "json", "out",
                                                                              "reports", "files")
            if pathlike and path_role(a) is None and a.nargs != 0:
                undeclared.append(f"{' '.join(cmd)}: {_name(a)} ({label.strip()})")
    assert not undeclared, "path options not declared with reads()/writes():\n" + "\n".join(undeclared)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cmd,output,input_", _cases())
def test_an_output_equal_to_an_input_is_refused(cmd, output, input_, tmp_path, capsys):
    """D1: ``lam-ref CMD ... INPUT ... OUTPUT=INPUT`` is one ``error:`` line, exit 2, the input
    unchanged (issue 39 §1: restore --json over the audit store, probe --json over its trajectory)."""
    target = _file(tmp_path / "input.json")
    argv = _argv(cmd, tmp_path, {input_: str(target), output: str(target)})
    rc, err = _run(argv, capsys)
    assert target.read_bytes() == PRECIOUS, f"{argv}: the input was overwritten"
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "error:" in lines[0] and "input" in lines[0], \
        f"{argv}: want one error line and exit 2, got rc={rc}: {err!r}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cmd,output,input_", [c for c in _cases()
                                               if path_role(next(a for a in LEAVES[tuple(c[0].split())]._actions
                                                                 if _name(a) == c[2]))[1] in ("paths", "file-or-folder")])
def test_an_output_inside_an_input_folder_is_refused(cmd, output, input_, tmp_path, capsys):
    """D12: an input folder is read whole, so an output inside it (``restore DIR --json
    DIR/x.audit.json``) is refused in one line, exit 2, the file there unchanged."""
    folder = tmp_path / "in"
    folder.mkdir()
    inner = _file(folder / "x.audit.json")
    kind = path_role(next(a for a in LEAVES[tuple(cmd.split())]._actions if _name(a) == output))[1]
    argv = _argv(cmd, tmp_path, {input_: str(folder), output: str(folder if kind == "folder" else inner)})
    rc, err = _run(argv, capsys)
    assert inner.read_bytes() == PRECIOUS, f"{argv}: a file of the input folder was overwritten"
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "error:" in lines[0] and "input" in lines[0], \
        f"{argv}: want one error line and exit 2, got rc={rc}: {err!r}"


def _file_inputs() -> list[tuple[str, str]]:
    return [(" ".join(cmd), _name(a)) for cmd, sub in LEAVES.items() for a in _roles(sub, "input")
            if path_role(a)[1] in ("file", "file-or-folder", "name-or-path")]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("cmd,input_", _file_inputs())
def test_a_fifo_or_device_input_is_refused_before_reading(cmd, input_, special, tmp_path, capsys):
    """D3 (issue 39 §3): an input file that is a FIFO (reading it would block) or ``/dev/zero`` (it
    never ends) is one line naming it, exit 2, without reading it; the timeout fails a hang."""
    if special == "fifo":
        path = tmp_path / "pipe.json"
        os.mkfifo(path)
    else:
        path = Path(special)
        if not path.exists():
            pytest.skip("no /dev/zero here")
    argv = _argv(cmd, tmp_path, {input_: str(path)})
    rc, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and str(path) in lines[0] and "not a regular file" in lines[0], \
        f"{argv}: want one line naming {path}, exit 2; got rc={rc}: {err!r}"

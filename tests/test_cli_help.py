"""The command line's shared habits (docs/cli.md#conventions; issue 25): every ``--help`` has a
description, an example and the exit-status line; a group of subcommands called bare is a usage
error; ``--json OUT`` means the same everywhere; ``compact --check`` states its verdict; the
command table of docs/cli.md lists exactly the parser's commands."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from lam_ref.cli import EXAMPLES, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _commands(parser: argparse.ArgumentParser, path: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                key = f"{path} {name}".strip()
                yield key, sub
                yield from _commands(sub, key)


def test_every_help_has_a_description_an_example_and_the_exit_status():
    """``lam-ref CMD --help`` for every command and subcommand: a description, an ``Example:``
    whose command line is that command, and the ``Exit status`` line."""
    missing = []
    for key, sub in _commands(build_parser()):
        text = sub.format_help()
        desc = (sub.description or "").strip()
        if len(desc) < 20:
            missing.append(f"{key}: no description")
        if "exit status" not in text.lower():
            missing.append(f"{key}: no exit-status line")
        m = re.search(r"^\s*Example:\s*\n?\s*(lam-ref [^\n]+)", text, re.M)
        if not m:
            missing.append(f"{key}: no example")
        elif not m.group(1).startswith(f"lam-ref {key}") and not m.group(1).startswith(f"lam-ref {key.split()[0]} "):
            missing.append(f"{key}: the example runs another command: {m.group(1)}")
    assert not missing, "--help habits missing (add the command to lam_ref.cli.EXAMPLES or its own epilog):\n" + \
        "\n".join(missing)


def test_examples_name_real_commands():
    """Each entry of :data:`lam_ref.cli.EXAMPLES` belongs to a command the parser has (a renamed
    command would otherwise leave a dead example behind)."""
    keys = {key for key, _ in _commands(build_parser())}
    stale = sorted(set(EXAMPLES) - keys)
    assert not stale, f"examples for commands the parser does not have: {stale}"


@pytest.mark.parametrize("group", ["cct", "bench", "determinism"])
def test_a_bare_command_group_is_a_usage_error(group, capsys):
    """``lam-ref cct`` (no subcommand) prints its usage and an ``error:`` line, exit status 2."""
    with pytest.raises(SystemExit) as exc:
        main([group])
    err = capsys.readouterr().err
    assert exc.value.code == 2, f"lam-ref {group}: exit {exc.value.code}, want 2"
    assert f"lam-ref {group}: error:" in err, f"lam-ref {group}: no error line on stderr: {err!r}"


def test_model_json_takes_out_and_keeps_the_flag_form(tmp_path, capsys):
    """``model --json OUT`` writes OUT and still prints the tables; ``--json -`` and the former bare
    ``--json`` write JSON to stdout and the tables to stderr (issue 25: --json OUT everywhere)."""
    out = tmp_path / "m.json"
    assert main(["model", "--table", "8", "--json", str(out)]) == 0, "model --json OUT"
    cap = capsys.readouterr()
    assert "Table 8" in cap.out, "with --json OUT the tables still go to stdout"
    gains = [r["gain"] for r in json.loads(out.read_text())["tables"]["8"]]
    assert abs(gains[0] - 71.4) / 71.4 < 0.01, f"Table 8's first gain is 71.4 in the paper, the file has {gains}"
    for argv in (["model", "--table", "8", "--json", "-"], ["model", "--table", "8", "--json"]):
        assert main(argv) == 0, argv
        cap = capsys.readouterr()
        assert json.loads(cap.out)["tables"]["8"], f"{argv}: stdout is not the JSON"
        assert "Table 8" in cap.err, f"{argv}: the tables go to stderr when JSON takes stdout"
    assert main(["model", "--json", str(tmp_path / "no" / "m.json")]) == 2, "an unwritable --json OUT is exit 2"
    assert "--json" in capsys.readouterr().err, "the error names --json"


def test_model_numbers_have_one_format(capsys):
    """Every number in ``lam-ref model``'s tables has the same style: no exponent (``1.187e+06``
    next to ``16625.5`` was the issue), thousands grouped with commas."""
    assert main(["model"]) == 0
    out = capsys.readouterr().out
    exponents = re.findall(r"\S*\d[eE][+-]\d+", out)
    assert not exponents, f"numbers in exponent form: {exponents[:5]}"
    ungrouped = re.findall(r"(?<![\d,.])\d{5,}(?![\d,])", out)
    assert not ungrouped, f"ungrouped large numbers: {ungrouped[:5]}"
    assert "1,186,694" in out or "1,18" in out, "Table 8's delete-in-place total is grouped"


def test_compact_check_prints_its_verdict_when_it_passes(tmp_path, capsys):
    """``compact --check`` says so when every check passes (it used to print nothing)."""
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"role": "user", "text": "task"}, {"role": "observation", "text": "a\nb\nc\n" * 3, "turn": 0},
        {"role": "observation", "text": "a\nb\nc\n" * 3, "turn": 1}]) + "\n")
    rc = main(["compact", str(src), "--encoder", "hash", "--check", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert re.search(r"lam-ref compact: check passed on 1 trajectories", err), f"no verdict on stderr: {err!r}"


def _cli_table_commands() -> set[str]:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text.split("| command |", 1)[1].split("\n\n", 1)[0]
    names = set()
    for line in table.splitlines()[2:]:
        first = line.split("|")[1]
        names |= set(re.findall(r"`([a-z][a-z0-9-]*)`", first))
    return names


def test_the_cli_page_lists_every_command():
    """docs/cli.md's command table names exactly the parser's top-level commands (read from the
    parser, so a new command fails here until the page lists it)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    have = set(sub.choices)
    listed = _cli_table_commands()
    assert have - listed == set(), f"commands missing from docs/cli.md's table: {sorted(have - listed)}"
    assert listed - have == set(), f"docs/cli.md lists commands the parser lacks: {sorted(listed - have)}"

"""Every option of every command explains itself in ``--help``: a help text, its default,
and the range its converter enforces (a newcomer should not learn the range from an error).

The commands and options are enumerated from the parser, so a new option is covered
without editing this file.
"""

from __future__ import annotations

import argparse

import pytest

from specdyn.cli import build_parser


def _actions() -> list[tuple[str, argparse.Action]]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    out = []
    for name, parser in sorted(sub.choices.items()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            label = action.option_strings[-1] if action.option_strings else action.metavar
            out.append((f"{name} {label}", action))
    return out


ACTIONS = _actions()


@pytest.mark.parametrize("case, action", ACTIONS, ids=[c for c, _ in ACTIONS])
def test_every_argument_has_a_help_text(case: str, action: argparse.Action) -> None:
    assert action.help and action.help.strip(), f"{case}: no help text"


@pytest.mark.parametrize("case, action", ACTIONS, ids=[c for c, _ in ACTIONS])
def test_an_option_with_a_default_names_it(case: str, action: argparse.Action) -> None:
    if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
        return  # a flag, or an option whose absence means something the help describes
    assert "default" in (action.help or ""), f"{case}: default {action.default!r} not in help"


@pytest.mark.parametrize("case, action", ACTIONS, ids=[c for c, _ in ACTIONS])
def test_a_checked_option_states_its_range(case: str, action: argparse.Action) -> None:
    words = getattr(action.type, "range_text", None)  # set by specdyn.cli._args
    if words is None:
        return
    assert words in (action.help or ""), f"{case}: help does not say {words!r}"


def test_the_table_is_not_empty() -> None:
    # the enumeration reached every command and the checked options of the setting group
    cases = {c for c, _ in ACTIONS}
    assert {"theory --alpha", "regime --margin", "reproduce --threads", "sweep --workers",
            "analyze --top", "report DIR", "results PATH"} <= cases
    ranged = {c for c, a in ACTIONS if getattr(a.type, "range_text", None)}
    assert {"theory --alpha", "regime --margin", "sweep --timeout", "analyze --alpha",
            "results --max-rows"} <= ranged

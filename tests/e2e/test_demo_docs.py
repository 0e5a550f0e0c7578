"""docs/demo.md's option table, `coworkenv demo --help` and the code's defaults (`DemoSettings`) agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main

from coworkenv.cli import app
from coworkenv.commands.demo import SETTING_OF_OPTION, shown_default
from trainers.demo.settings import DemoSettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "demo.md"


def _demo_command() -> Any:
    """The click command typer builds for `coworkenv demo` (typer may vendor its own click)."""
    return typer.main.get_command(app).commands["demo"]  # type: ignore[attr-defined]


def _doc_table() -> dict[str, str]:
    """The Options table of docs/demo.md as {flag: default cell without backticks}."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Options\n"):]
    section = section[:section.index("\n## ", 1)]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        m = re.match(r"\| `(--[a-z-]+)[^`]*` \| ([^|]*) \|", line)
        if m:
            rows[m.group(1)] = m.group(2).strip().strip("`")
    return rows


def _params() -> dict[str, Any]:
    """The demo command's parameters by long flag."""
    return {opt: p for p in _demo_command().params for opt in p.opts if opt.startswith("--")}


def test_every_option_is_in_the_docs_table() -> None:
    documented = set(_doc_table())
    options = set(_params()) - {"--help"}
    assert options - documented == set(), "options missing from docs/demo.md's Options table"
    assert documented - options == set(), "docs/demo.md documents options the command does not have"


@pytest.mark.parametrize("flag, field", sorted(SETTING_OF_OPTION.items()))
def test_documented_default_is_the_codes_and_the_helps(flag: str, field: str) -> None:
    code = shown_default(field)
    # the shown form is the settings' value (so neither the docs nor the help can round it away)
    value = DemoSettings.model_fields[field].default
    assert type(value)(code) == value if not isinstance(value, str) else code == value
    assert _doc_table()[flag] == code, f"docs/demo.md says {flag} defaults to {_doc_table()[flag]}, the code {code}"
    help_text = _params()[flag].help or ""
    assert f"(default {code}" in help_text, f"--help of {flag} does not quote the default {code}: {help_text!r}"
    first = re.findall(r"default ([^\s;,):]+)", help_text)[0].rstrip(".")
    assert first == code, f"--help of {flag} quotes the default {first} first"  # and no other default before it


@pytest.mark.parametrize("flag", ["--out", "--seed", "--profile"])
def test_defaults_the_command_itself_sets(flag: str) -> None:
    param = _params()[flag]
    assert _doc_table()[flag] == str(param.default)
    if flag == "--seed":
        assert param.default == DemoSettings.model_fields["seed"].default


def test_defaults_quoted_in_the_prose_match_the_code() -> None:
    """`--flag` ... default X elsewhere in docs/demo.md (the stage table, the RL section) is the code's X."""
    text = DOC.read_text(encoding="utf-8")
    quoted = re.findall(r"`(--[a-z-]+)`[^`|]{0,40}?\(?default (\d[\w.+-]*)", text)
    assert quoted, "the pattern found nothing: the test no longer reads the prose"
    for flag, value in quoted:
        if flag in SETTING_OF_OPTION:
            assert value.rstrip(".") == shown_default(SETTING_OF_OPTION[flag]), (flag, value)

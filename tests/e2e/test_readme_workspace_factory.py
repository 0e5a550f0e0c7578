"""The README's `workspace_factory` conftest, as written there, gives every test the same start state through the
installed pytest plugin; a factory that returns something else fails with a message saying what it must return."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TESTS = '''
def test_first_edits(workspace):
    assert workspace.call("read_text_file", {"path": "/notes.md"}).text == "draft"
    assert workspace.call("write_file", {"path": "/notes.md", "content": "final"}).ok


def test_second_sees_the_start_state(workspace):
    assert workspace.call("read_text_file", {"path": "/notes.md"}).text == "draft"
'''


def readme_conftest() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```py\n(.*?)```", text, flags=re.S) if b.startswith("# conftest.py")]
    return block


def test_the_readme_conftest_gives_each_test_the_start_state(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(readme_conftest())
    pytester.makepyfile(test_notes=TESTS)
    pytester.runpytest("-p", "no:randomly", "-p", "no:xdist").assert_outcomes(passed=2)


def test_a_factory_that_returns_no_workspace_fails_clearly(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
import pytest


@pytest.fixture(scope="session")
def workspace_factory():
    return {"files": {"files": [{"path": "/notes.md", "content": "draft"}]}}  # the data, not a Workspace
''')
    pytester.makepyfile(test_notes=TESTS)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:xdist")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*workspace_factory must return a workspace_sim.Workspace*got dict*"])

"""Every `coworkenv` command in the shell blocks of docs/*.md is checked: each names only options its command has
(a synopsis line's too) and parses as written; the ones that run in seconds run for real, in the order a reader
meets them, in one folder synthesized once (counts cut to the smallest the docs allow); the rest are listed below
with why they are only parsed (a long run, a model endpoint, a server that runs until stopped, Docker). A new
command in the docs fails `test_every_docs_command_is_listed` until it is added to RUN or PARSE_ONLY."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app, fill_optional_values

ROOT = Path(__file__).resolve().parents[2]
SETUP = ("python3 -m venv",)  # the install line (README's test runs it; tests/e2e/test_demo*.py run the demo)


def docs_commands() -> list[tuple[str, str]]:
    """(page, command line) for every `coworkenv` line in the docs' bash (or unlabelled) blocks, continuations
    joined and comments dropped, in page order."""
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for lang, block in re.findall(r"```(\w*)\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
            if lang not in ("bash", "sh", ""):
                continue
            for line in block.replace("\\\n", " ").splitlines():
                line = "" if line.lstrip().startswith("#") else re.sub(r"\s+#\s.*$", "", line).strip()
                line = re.sub(r"\s+", " ", line)
                if re.match(r"^([A-Z_]+=\S+ )*coworkenv [a-z]", line) and not line.startswith(SETUP):
                    out.append((page.name, line))
    return out


# The commands that run, each with what stands for its placeholders or cuts it short (None: as written).
RUN: dict[str, str | None] = {
    "coworkenv synth -c clarification -c policy_compliance -c ticket_workflow -n 48 -s 200000 -o envs":
        "coworkenv synth -c clarification -c policy_compliance -c ticket_workflow -n 3 -s 200000 -o envs",
    "coworkenv run envs --policy teacher --out teacher.jsonl": None,
    "coworkenv export sft teacher.jsonl --format hf --validation 0 --out sft": None,
    "coworkenv run ENVS... --policy teacher --episodes-per-env 4 --workers 2 -o runs/teacher.jsonl --report runs/report":
        "coworkenv run envs --policy teacher --episodes-per-env 1 --workers 2 -o runs/teacher.jsonl "
        "--report runs/report",
    "coworkenv report runs/teacher.jsonl -o runs/report": None,
    "coworkenv replay runs/teacher.jsonl --envs envs/": None,
    "coworkenv claude-config path/to/spec.yaml --mcp-only": "coworkenv claude-config {spec} --mcp-only",
    "coworkenv episodes runs/episodes": None,  # the fixture's runs/episodes/ holds one record
    "coworkenv eval runs/episodes/ep-1.jsonl": None,
    # a `run` record names no served environment, as the server's do: --spec says which
    'coworkenv eval REC --answer "Done: 1234"':
        'coworkenv eval runs/episodes/ep-1.jsonl --answer "Done: 1234" --spec {spec}',
    "coworkenv eval runs/episodes.jsonl --rescore --spec SPEC":
        "coworkenv eval runs/episodes/ep-1.jsonl --rescore --spec {spec}",
    "coworkenv sandbox status": None,
}
SERVER = "serves until stopped; tests/mcp_server/test_mcp_stdio.py and test_mcp_http.py serve it"
ENDPOINT = "needs a model endpoint; tests/trainers/test_policy_openai.py and test_user_sim.py use a local one"
PARSE_ONLY: dict[str, str] = {
    "coworkenv demo --train-envs 200 --steps 1 --minutes 0 --threads 1 --out /tmp/demo0":
        "the demo's own data run (minutes); tests/e2e/test_demo*.py run the demo",
    "coworkenv train base --data /tmp/demo0/sft/train.jsonl --hidden 128 --layers 2 --batch-size 16 --lr 0.002 "
    "--steps 8000 --minutes 85 --threads 1 --out trainers/demo/base": "85 minutes of training (the shipped base's recipe)",
    "coworkenv run envs --policy hf --max-turns 6 --model demo-out/model/student --out student.jsonl":
        "needs the demo's trained student",
    "coworkenv eval-student --model demo-out/model/student --records student.jsonl --heldout sft/train.jsonl "
    "--train demo-out/sft/train.jsonl": "needs the demo's trained student",
    "coworkenv run envs/ -p openai --model qwen2.5-7b --base-url http://localhost:8000/v1 --temperature 0.7 -g 8":
        ENDPOINT,
    "coworkenv run envs/ -p hf --model path/to/model_folder --max-tokens 256": "needs a model folder",
    "coworkenv run envs/ -p teacher --user llm --user-model gpt-4.1-mini --user-base-url https://api.openai.com/v1":
        ENDPOINT,
    "coworkenv run envs/ -p random --ray --workers 2":
        "starts a local Ray (a minute on 2 cores); tests/trainers/test_ray_episodes.py runs a batch on it",
    "coworkenv run envs/ -p teacher --ray ray://head:10001 -w 16": "needs a Ray cluster",
    "coworkenv synth --generator llm --base-url http://localhost:8000/v1 --model qwen2.5-32b-instruct "
    "--capability scheduling --capability mail_triage --count 20 --seed 0 --max-repairs 3 --out envs/ "
    '--requirement "a weekly sync across three time zones"': ENDPOINT,
    "coworkenv serve --python mcp_server.demo:environment": SERVER,
    "coworkenv serve --python mcp_server.demo:environment --http --port 8765": SERVER,
    "COWORKENV_ADMIN_TOKEN=$TOKEN coworkenv serve --python mcp_server.demo:environment --http &": SERVER,
    "coworkenv sandbox build-image": "builds a Docker image; tests/workspace_sim/test_sandbox_docker.py does",
    "coworkenv sandbox reap": "removes Docker containers; tests/workspace_sim/test_sandbox_docker.py runs it",
}
SYNOPSIS = re.compile(r"\[|\||\.\.\.|\b[A-Z]{2,}\b")  # `[--opt X]`, `a|b`, `ENVS...`, `RECORDS`: a form, not a line


def _command(argv: list[str]) -> tuple[Any, list[str], str]:
    """The click command an argv names, the arguments left for it, and its name."""
    import typer

    cmd: Any = typer.main.get_command(app)
    names = []
    while hasattr(cmd, "commands") and argv and argv[0] in cmd.commands:
        names.append(argv[0])
        cmd, argv = cmd.commands[argv[0]], argv[1:]
    return cmd, argv, " ".join(names)


def _argv(line: str) -> list[str]:
    words = shlex.split(line.rstrip("&").strip())
    while words and re.match(r"^[A-Z_]+=", words[0]):  # an environment assignment before the command
        words = words[1:]
    assert words[0] == "coworkenv", line
    return words[1:]


def test_every_docs_command_is_listed() -> None:
    lines = [line for _, line in docs_commands()]
    synopses = {line for line in lines if SYNOPSIS.search(line) and line not in RUN and line not in PARSE_ONLY}
    unlisted = [line for line in lines if line not in RUN and line not in PARSE_ONLY and line not in synopses]
    assert not unlisted, f"docs commands neither run nor parsed here (add them to RUN or PARSE_ONLY): {unlisted}"
    stale = sorted((set(RUN) | set(PARSE_ONLY)) - set(lines))
    assert not stale, f"listed here but gone from the docs: {stale}"
    assert len(lines) >= 30


@pytest.mark.parametrize(("page", "line"), docs_commands(), ids=lambda x: x[:60])
def test_every_docs_command_names_real_options_and_parses(page: str, line: str) -> None:
    # issue 38 item 6: docs/episodes.md's `-n 16` was `No such option: -n`
    argv = fill_optional_values(_argv(line))
    cmd, rest, name = _command(argv)
    assert name, f"{page}: `{line}` names no coworkenv command"
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    named = re.findall(r"(?<![\w/.-])(--?[A-Za-z][\w-]*)", " ".join(rest))
    unknown = sorted({o for o in named if o not in known})
    assert not unknown, f"{page}: `{line}`: coworkenv {name} has no {', '.join(unknown)}"
    if SYNOPSIS.search(line) and line not in RUN and line not in PARSE_ONLY:
        return  # a synopsis: its options are real, its placeholders are not values
    import typer._click as click

    cmd.make_parser(click.Context(cmd, info_name=name)).parse_args(list(rest))  # raises on a bad option or value


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs")


def test_the_runnable_docs_commands_run_in_order(folder: Path) -> None:
    listed = [line for _, line in docs_commands() if line in RUN]
    assert listed and listed[0].startswith("coworkenv synth"), "the synth line must come first: it makes envs/"
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for line in listed:
            spec = next(iter(sorted((folder / "envs").glob("*.json"))), None)
            if line.startswith("coworkenv episodes") and not (folder / "runs" / "episodes").exists():
                res = runner.invoke(app, ["run", str(spec), "-o", "runs/episodes/ep-1.jsonl"])
                assert res.exit_code == 0, res.output  # the record the mcp.md commands read
            shown = (RUN[line] or line).format(spec=spec)
            res = runner.invoke(app, fill_optional_values(_argv(shown)), env={"COLUMNS": "160"})
            assert res.exit_code == 0, f"`{shown}` exited {res.exit_code}: {res.output[-2000:]}"
    finally:
        os.chdir(cwd)
    assert len(list((folder / "envs").glob("*.json"))) == 3
    assert (folder / "runs" / "report" / "index.html").is_file() and (folder / "sft").is_dir()

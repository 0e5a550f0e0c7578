"""The `coworkenv` commands: one module per command, one package per sub-command group (one module per
sub-command), and `COMMANDS`, the one table that names them. Private modules (`_usage`, `_judge`,
`_environment`, `serving`) hold what several commands share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """A sub-command group (`coworkenv train ...`): its help line and its sub-commands (name -> "module:function")."""

    help: str
    commands: dict[str, str]


#: every command, in the order `coworkenv --help` lists them (groups last): name -> "module:function" under
#: coworkenv.commands, or the Group of its sub-commands
COMMANDS: dict[str, str | Group] = {
    "bench": "bench:bench",
    "claude-config": "claude_config:claude_config",
    "demo": "demo:demo",
    "episodes": "episodes:episodes",
    "eval": "eval_record:eval_record",
    "eval-student": "eval_student:eval_student",
    "run": "run:run",
    "report": "report:report",
    "replay": "replay:replay",
    "serve": "serve:serve",
    "stats": "stats:stats",
    "synth": "synth:synth",
    "schema": "schema:schema",
    "validate": "validate:validate",
    "tools": "tools:tools",
    "version": "version:version",
    "export": Group("Turn episode records into SFT or RL datasets.",
                    {"sft": "export.sft:sft", "rl": "export.rl:rl"}),
    "sandbox": Group("The sandboxes behind run_command (Docker) and run_python (bubblewrap).",
                     {"build-image": "sandbox.build_image:build_image", "status": "sandbox.status:status",
                      "reap": "sandbox.reap:reap"}),
    "train": Group("Train local models on episode data (needs the `train` extra).",
                   {"tiny": "train.tiny:tiny", "base": "train.base:base", "sft": "train.sft:sft",
                    "rl": "train.rl:rl"}),
}

"""Train a local model with TRL's GRPOTrainer inside coworkenv environments (offline, CPU, about a minute).

    python examples/trl_grpo_adapter.py [--model PATH] [--envs FILE|DIR|toy:N] [--steps N] [--envs-per-step K]

Without --model a tiny Qwen2 model and tokenizer are built locally. A folder of environments with
different tools runs in TRL's multi-environment mode (each rollout sees its own environment's
tools). Each step draws --envs-per-step environments (two rollouts of each), so the rollouts
spread across the environments. Every rollout is recorded as
an episode record (rollouts.jsonl), readable with `workspace_sim.record.read_records` and exportable
with `coworkenv export rl`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from coworkenv.commands.train.rl import load_environments  # noqa: E402
from trainers.rewards import RewardConfig  # noqa: E402
from trainers.models.tiny import build_tiny, load  # noqa: E402
from trainers.adapters.trl import TRLAdapter  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="A local causal LM folder; default: build a tiny one.")
    parser.add_argument("--envs", default="toy:4", help="An environment spec file, a folder of them, or toy:N.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--envs-per-step", type=int, default=2, help="Environments each step's rollouts come from.")
    parser.add_argument("--max-completion-length", type=int, default=96, help="Tokens a rollout generates.")
    parser.add_argument("--out", type=Path, default=Path("trl-grpo-out"))
    args = parser.parse_args()
    if args.steps < 1 or args.envs_per_step < 1:
        parser.error("--steps and --envs-per-step must be at least 1")
    try:
        envs = load_environments(args.envs)
    except (ValueError, OSError) as e:  # a bad path or spec: its message names the file and the field
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    adapter = TRLAdapter(envs, RewardConfig(terminal="partial", shaping=True), records_path=args.out / "rollouts.jsonl")
    if args.model is None:  # the tokenizer's corpus: each prompt with the tools its environment offers
        corpus = []
        for row in adapter.dataset():
            probe = adapter.environment_for(row["env_id"])
            tools = [get_json_schema(getattr(probe, n)) for n in adapter.tool_names_of(row["env_id"])]
            corpus.append({"messages": row["prompt"], "tools": tools})
        args.model = build_tiny(args.out / "tiny", corpus)
    model, tokenizer = load(args.model)

    generations = 2  # rollouts per prompt (GRPO's group); a step's batch holds --envs-per-step prompts
    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, num_generations=generations,
        per_device_train_batch_size=generations * min(args.envs_per_step, len(envs)),
        max_completion_length=args.max_completion_length, max_tool_calling_iterations=4, learning_rate=1e-4, use_cpu=True,
        report_to=[], logging_steps=1, save_strategy="no",
    )
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=config, train_dataset=adapter.dataset(repeats=args.steps),
        environment_factory=adapter.environment_factory, reward_funcs=[adapter.reward_func],
    )
    trainer.train()
    passed = sum(r.passed for r in adapter.records)
    per_env = Counter(r.env_id for r in adapter.records)
    print(f"{len(adapter.records)} rollouts from {len(per_env)} environment(s), {passed} passed; records in "
          f"{args.out / 'rollouts.jsonl'}")
    for env_id, n in sorted(per_env.items()):
        print(f"  {n} x {env_id}")


if __name__ == "__main__":
    main()

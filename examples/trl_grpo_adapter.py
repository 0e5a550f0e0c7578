"""Train a local model with TRL's GRPOTrainer inside coworkenv environments (offline, CPU, about a minute).

    python examples/trl_grpo_adapter.py [--model PATH] [--envs DIR|toy:N] [--steps N]

Without --model a tiny Qwen2 model and tokenizer are built locally. A folder of environments with
different tools runs in TRL's multi-environment mode (each rollout sees its own environment's
tools). Every rollout is recorded as
an episode record (rollouts.jsonl), readable with `workspace_sim.record.read_records` and exportable
with `coworkenv export rl`.
"""

from __future__ import annotations

import argparse
import os
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
    parser.add_argument("--envs", default="toy:4", help="Folder of environment specs, or toy:N.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("trl-grpo-out"))
    args = parser.parse_args()

    envs = load_environments(args.envs)
    adapter = TRLAdapter(envs, RewardConfig(terminal="partial", shaping=True), records_path=args.out / "rollouts.jsonl")
    if args.model is None:  # the tokenizer's corpus: each prompt with the tools its environment offers
        corpus = []
        for row in adapter.dataset():
            probe = adapter.environment_for(row["env_id"])
            tools = [get_json_schema(getattr(probe, n)) for n in adapter.tool_names_of(row["env_id"])]
            corpus.append({"messages": row["prompt"], "tools": tools})
        args.model = build_tiny(args.out / "tiny", corpus)
    model, tokenizer = load(args.model)

    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, per_device_train_batch_size=4, num_generations=4,
        max_completion_length=96, max_tool_calling_iterations=4, learning_rate=1e-4, use_cpu=True,
        report_to=[], logging_steps=1, save_strategy="no",
    )
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=config, train_dataset=adapter.dataset(repeats=args.steps),
        environment_factory=adapter.environment_factory, reward_funcs=[adapter.reward_func],
    )
    trainer.train()
    passed = sum(r.passed for r in adapter.records)
    print(f"{len(adapter.records)} rollouts, {passed} passed; records in {args.out / 'rollouts.jsonl'}")


if __name__ == "__main__":
    main()

"""The credit-assignment comparison of `coworkenv demo --rl`, re-run on multi-day environments with per-stage rewards.

Environments: the handwritten three-day example plus multi-day environments of the procedural
generator (its scenario templates: `dynamic_world`, `clarification`, `cross_service`; the first
seeds whose environment has two or more stages and at most `--max-steps` reference steps), split
into training and held-out sets by environment. The student is a tiny Qwen2-architecture model built
here (a byte-level BPE tokenizer trained on the training environments' teacher episodes, compact
tool signatures, no download), fine-tuned on those teacher episodes for `--sft-steps` steps (RL after
SFT, as the demo runs it), playing `choice_rollout`s: each turn it picks,
by its own mean token log-probability, among the next reference step, that call with the stale
arguments an agent that never re-read would send (where the step has them), and an early "Done."
that the simulated user judges (it closes the working day or ends the episode). Rewards are
`RewardConfig(terminal="partial", per_stage=True)`: each day's weighted score over the number of
days, paid in the turn that closed the day, so the turn-level credit assignments see when a day was
won or lost.

For every credit assignment (GRPO episode level; MT-GRPO turn level; GiGPO step groups; each with the
GRPO mean/std baseline) and every seed, GRPO trains from the same start model, then the model is
evaluated greedily (the most likely candidate each turn) on the held-out and the training
environments: strict success, weighted score, and per-stage pass rate (the fraction of all the
environments' days passed). The baseline is the start model evaluated the same way in the same run.

    OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_credit_stages            # the table
    OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_credit_stages --json     # one JSON document
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"
CREDITS = (("GRPO episode", "episode"), ("MT-GRPO turn", "turn"), ("GiGPO step groups", "gigpo"))
SCENARIO_CAPABILITIES = ("dynamic_world", "clarification", "cross_service")


@dataclass
class Score:
    """Greedy figures of one model on a set of environments."""

    success: float
    score: float
    stage_pass: float
    stages: int


@dataclass
class Run:
    """One GRPO run: credit assignment, seed, mean training reward per step, and its held-out and train scores."""

    credit: str
    seed: int
    train_rewards: list[float]
    heldout: Score
    train: Score
    seconds: float


@dataclass
class Comparison:
    """Every run, the start model's scores, and the setting that produced them."""

    settings: dict[str, Any]
    train_envs: list[str]
    heldout_envs: list[str]
    baseline_heldout: Score
    baseline_train: Score
    runs: list[Run] = field(default_factory=list)
    seconds: float = 0.0

    def rows(self) -> list[dict[str, Any]]:
        """Per credit assignment: means and sample standard deviations over seeds."""
        out = []
        for credit in dict.fromkeys(r.credit for r in self.runs):
            mine = [r for r in self.runs if r.credit == credit]
            row: dict[str, Any] = {"credit": credit, "seeds": [r.seed for r in mine]}
            for where in ("heldout", "train"):
                for key in ("success", "score", "stage_pass"):
                    xs = [getattr(getattr(r, where), key) for r in mine]
                    row[f"{where}_{key}"] = statistics.fmean(xs)
                    row[f"{where}_{key}_sd"] = statistics.stdev(xs) if len(xs) > 1 else 0.0
            row["train_reward_first"] = statistics.fmean(r.train_rewards[0] for r in mine)
            row["train_reward_last"] = statistics.fmean(r.train_rewards[-1] for r in mine)
            row["seconds"] = statistics.fmean(r.seconds for r in mine)
            out.append(row)
        return out

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready document of everything measured."""
        return {"settings": self.settings, "train_envs": self.train_envs, "heldout_envs": self.heldout_envs,
                "baseline": {"heldout": asdict(self.baseline_heldout), "train": asdict(self.baseline_train)},
                "rows": self.rows(), "runs": [asdict(r) for r in self.runs], "seconds": round(self.seconds, 1)}


def multiday_environments(n_procedural: int, max_steps: int) -> list[Any]:
    """The handwritten example and the first `n_procedural` small multi-day procedural environments (round-robin
    over the scenario capabilities, seeds counting up)."""
    from synth import load_spec
    from synth.procedural import generate

    out = [load_spec(EXAMPLE)]
    seed = 0
    while len(out) < n_procedural + 1 and seed < 200:
        for cap in SCENARIO_CAPABILITIES:
            spec = generate(cap, seed)
            if len(spec.stages) >= 2 and len(spec.reference.steps) <= max_steps and len(out) < n_procedural + 1:
                out.append(spec)
        seed += 1
    return out


def _student(folder: Path, train: Sequence[Any], vocab: int, sft_steps: int) -> Path:
    """A tiny model whose tokenizer is trained on the training environments' teacher episodes, then fine-tuned
    on them for `sft_steps` steps (RL after SFT, as the demo runs it; 0: random weights)."""
    from trainers.episodes.policies import make_policy
    from trainers.episodes.runner import run_episode
    from trainers.export.sft import to_hf
    from trainers.models.tiny import build_tiny

    examples = [to_hf(run_episode(spec, make_policy("teacher"))) for spec in train]
    base = build_tiny(folder / "base", examples, vocab_size=vocab, compact_tools=True, isolate_spaces=True)
    if not sft_steps:
        return base
    from trainers.training.sft import train_sft

    train_sft(base, examples, folder / "sft", max_steps=sft_steps, batch_size=1, learning_rate=3e-3,
              max_length=16384)
    return folder / "sft"


def evaluate(model_dir: Path, envs: Sequence[Any], settings: Any) -> Score:
    """Greedy choice rollouts of the saved model in `envs`: strict success, weighted score, per-stage pass rate."""
    from trainers.training.rollout import choice_rollout
    from trainers.models.tiny import load

    model, tokenizer = load(model_dir)
    model.eval()
    greedy = settings.model_copy(update={"greedy": True})
    passed, scores, stage_pass, stages = 0, [], 0, 0
    for spec in envs:
        record = choice_rollout(model, tokenizer, spec, greedy, f"eval-{spec.id}").record
        evaluation = record.final.evaluation
        passed += bool(evaluation.get("passed"))
        scores.append(float(evaluation.get("score", 0.0)))
        for st in evaluation.get("stages", []):
            stages += 1
            stage_pass += bool(st["passed"])
    return Score(passed / len(envs), statistics.fmean(scores), stage_pass / max(stages, 1), stages)


def compare(seeds: Sequence[int], steps: int, group: int, envs_per_step: int, n_procedural: int, heldout: int,
            max_steps: int, lr: float, vocab: int, out: Path, sft_steps: int = 0) -> Comparison:
    """Run the whole comparison (see the module doc) under `out`."""
    import torch

    from trainers.credit import CreditConfig
    from trainers.rewards import RewardConfig
    from trainers.training.grpo import GRPOSettings, train_grpo
    from trainers.training.rollout import SPEC_PROMPT, RolloutSettings, choice_rollout

    t0 = time.perf_counter()
    torch.set_num_threads(1)
    envs = multiday_environments(n_procedural, max_steps)
    held, train = envs[-heldout:], envs[:-heldout]
    max_turns = max(len(s.reference.steps) for s in envs) + 2
    rollout = RolloutSettings(max_turns=max_turns, rewards=RewardConfig(terminal="partial", per_stage=True),
                              system_prompt=SPEC_PROMPT)
    base = _student(out / "start", train, vocab, sft_steps)
    settings = {"seeds": list(seeds), "steps": steps, "group_size": group, "envs_per_step": envs_per_step,
                "learning_rate": lr, "vocab": vocab, "sft_steps": sft_steps, "max_turns": max_turns,
                "rollout": "choice",
                "rewards": rollout.rewards.model_dump(), "method": "grpo"}
    result = Comparison(settings, [s.id for s in train], [s.id for s in held],
                        evaluate(base, held, rollout), evaluate(base, train, rollout))
    for label, level in CREDITS:
        for seed in seeds:
            t1 = time.perf_counter()
            grpo = GRPOSettings(steps=steps, group_size=group, envs_per_step=envs_per_step, learning_rate=lr, seed=seed,
                                credit=CreditConfig(level=level),  # type: ignore[arg-type]
                                rollout=rollout.model_copy(update={"seed": seed}))
            folder = out / f"{level}-seed{seed}"
            history = train_grpo(base, train, folder, grpo, choice_rollout)
            result.runs.append(Run(label, seed, [round(h.mean_reward, 4) for h in history],
                                   evaluate(folder, held, rollout), evaluate(folder, train, rollout),
                                   round(time.perf_counter() - t1, 1)))
    result.seconds = time.perf_counter() - t0
    return result


def table(result: Comparison) -> str:
    """The comparison as a Markdown table (means over seeds, sample sd in parentheses)."""
    def f(row: dict[str, Any], key: str) -> str:
        return f"{row[key]:.3f} ({row[key + '_sd']:.3f})"

    lines = ["| credit | held-out success | held-out score | held-out stage pass | train success | train score "
             "| train stage pass | train reward first -> last step |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    b, bt = result.baseline_heldout, result.baseline_train
    lines.append(f"| start model (baseline) | {b.success:.3f} | {b.score:.3f} | {b.stage_pass:.3f} | {bt.success:.3f} "
                 f"| {bt.score:.3f} | {bt.stage_pass:.3f} | |")
    for row in result.rows():
        lines.append(f"| {row['credit']} | {f(row, 'heldout_success')} | {f(row, 'heldout_score')} | "
                     f"{f(row, 'heldout_stage_pass')} | {f(row, 'train_success')} | {f(row, 'train_score')} | "
                     f"{f(row, 'train_stage_pass')} | "
                     f"{row['train_reward_first']:.3f} -> {row['train_reward_last']:.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: run the comparison and print the table (or JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--group", type=int, default=3)
    ap.add_argument("--envs-per-step", type=int, default=1)
    ap.add_argument("--procedural", type=int, default=4, help="Procedural multi-day environments besides the example.")
    ap.add_argument("--heldout", type=int, default=2, help="The last N environments are held out.")
    ap.add_argument("--max-steps", type=int, default=24, help="Largest reference solution (steps) admitted.")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--sft-steps", type=int, default=40, help="SFT steps on the teacher episodes before RL.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        result = compare(args.seeds, args.steps, args.group, args.envs_per_step, args.procedural, args.heldout,
                         args.max_steps, args.lr, args.vocab, Path(tmp), args.sft_steps)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
        return
    print(f"train: {', '.join(result.train_envs)}\nheld-out: {', '.join(result.heldout_envs)}")
    print(f"settings: {json.dumps(result.settings)}")
    print(table(result))
    print(f"wall time: {result.seconds:.1f} s")


if __name__ == "__main__":
    main()

"""What the demo measures: the student's held-out assistant-token loss, the teacher-forced accuracy of
the parts of the teacher's held-out calls, and its episode results.

Success and mean reward come from the same `summarize` the batch runner prints. Two finer
figures show learning that has not yet turned into passing episodes: the cross-entropy of the
teacher's held-out assistant tokens under the student (lower is closer to the teacher), and how
many of the student's tool calls the workspace accepted (a call answered with `Error (...)` was
malformed, named an unknown tool or had wrong arguments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from workspace_sim.record import EpisodeRecord

from ..episodes.batch import summarize
from ..report.calls import call_counts
from ..training.callspans import PARTS, teacher_forced_parts, training_values


def heldout_loss(model: Any, tokenizer: Any, examples: Sequence[dict[str, Any]], max_length: int) -> float | None:
    """Mean cross-entropy (nats per token) of the assistant tokens of `examples` under `model`.

    Tokens are weighted equally across examples, the examples being rendered exactly as SFT
    renders them (`tokenize_examples`); None when no example has an assistant token.
    """
    import torch

    from ..training.sft import tokenize_examples

    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for row in tokenize_examples(tokenizer, list(examples), max_length):
            ids = torch.tensor([row["input_ids"]])
            mask = torch.tensor(row["assistant_masks"][1:], dtype=torch.bool)
            logits = model(input_ids=ids).logits[0, :-1].float()
            nll = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
            total += float(nll[mask].sum())
            count += int(mask.sum())
    return total / count if count else None


@dataclass
class CapabilityScore:
    """One capability's (or `all`'s) episode figures."""

    capability: str
    episodes: int
    passed: int
    success_rate: float
    mean_reward: float


@dataclass
class StudentScore:
    """How the student did on the held-out environments at one point (before or after training)."""

    success_rate: float
    mean_reward: float
    mean_predicate_score: float
    tool_calls: int
    accepted_calls: int
    heldout_loss: float | None
    per_capability: list[CapabilityScore] = field(default_factory=list)
    valid_json_calls: int = 0
    episodes: int = 0
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def part_accuracy(self, part: str) -> float | None:
        """Teacher-forced whole-part accuracy of `part` (see `trainers.training.callspans`), if measured."""
        return (self.parts.get(part) or {}).get("accuracy")

    @property
    def accepted_call_rate(self) -> float:
        """Accepted tool calls over tool calls made (0 when it made none)."""
        return self.accepted_calls / self.tool_calls if self.tool_calls else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready view, with the derived call rate."""
        return {**asdict(self), "accepted_call_rate": self.accepted_call_rate}


def learning_parts(model: Any, tokenizer: Any, heldout_examples: Sequence[dict[str, Any]],
                   train_examples: Sequence[dict[str, Any]], max_length: int = 8192) -> dict[str, dict[str, Any]]:
    """Teacher-forced accuracy of the held-out teacher calls' parts: tool names, constant values, values
    copied from the context that a training call also held (`copied_seen`) and that none did
    (`copied_unseen`), each with its count n (see `trainers.training.callspans`)."""
    parts, missing = teacher_forced_parts(model, tokenizer, heldout_examples, training_values(train_examples),
                                          max_length)
    out = {p: parts[p].to_json() for p in PARTS}
    out["unlocated"] = {"n": missing}
    return out


def student_score(records: Sequence[EpisodeRecord], loss: float | None,
                  parts: dict[str, dict[str, Any]] | None = None) -> StudentScore:
    """Score a batch of student records (plus the held-out loss and teacher-forced parts measured separately)."""
    rows = summarize(records)
    total = rows[-1]
    finished = [r for r in records if r.final is not None]
    scores = [float(r.final.evaluation.get("score", 0.0)) for r in finished]  # type: ignore[union-attr]
    calls, valid, accepted = call_counts(records)
    return StudentScore(
        success_rate=total.success_rate, mean_reward=total.mean_reward,
        mean_predicate_score=sum(scores) / len(scores) if scores else 0.0, tool_calls=calls,
        accepted_calls=accepted, heldout_loss=loss,
        per_capability=[CapabilityScore(r.capability, r.episodes, r.passed, r.success_rate, r.mean_reward)
                        for r in rows],
        valid_json_calls=valid, episodes=len(records), parts=dict(parts or {}),
    )

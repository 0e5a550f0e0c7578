"""The generate-validate-repair loop: ask for a spec, execute it, send the feedback back, K times at most.

The conversation kept for a repair is the task, the model's latest answer and the feedback on it
(earlier failed rounds are dropped), so a request's size does not grow with the round number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence, TypeVar

from pydantic import BaseModel

from .client import ChatClient, Completion
from .errors import LLMError
from .parse import AnswerRejected, Problem, extract_json, validate_model
from .prompt import (FeedbackLike, capability_services, refusal_message, repair_message, select_services,
                     task_messages)
from .settings import LLMSettings

S = TypeVar("S", bound=BaseModel)
# A validator returns feedback items (empty when valid) or a report whose `.feedback` holds them.
Validator = Callable[[Any], Any]


@dataclass
class RoundRecord:
    """What one model answer came to: outcome valid|invalid_json|schema|validation|refusal, and why."""

    round: int
    outcome: str
    problems: list[dict[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class GenerationStats:
    """The record of one generation: rounds, tokens, and whether it ended valid, repaired or discarded."""

    capability: str
    rounds: int = 0
    first_pass_valid: bool = False
    repaired: bool = False
    discarded: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    response_format: str | None = None
    error: str | None = None
    fatal: bool = False
    history: list[RoundRecord] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """Whether the generation produced a validated spec."""
        return self.first_pass_valid or self.repaired

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of these statistics."""
        return asdict(self)


def generate_with_repair(
    capability: Any,
    requirement: str | None,
    settings: LLMSettings | ChatClient,
    validator: Validator,
    max_rounds: int,
    *,
    spec_model: type[S] | Callable[[dict[str, Any]], S],
    spec_schema: dict[str, Any] | None = None,
    services: Iterable[str] | None = None,
    variation: int | None = None,
    seed: int | None = None,
) -> tuple[S | None, GenerationStats]:
    """Ask the model for a spec for `capability` and `requirement`, repairing it up to `max_rounds` times.

    Each answer is parsed (JSON, then `spec_model`, a pydantic model or a loader) and run through
    `validator`, which returns feedback items (path, problem, hint), empty when the spec is valid, or
    a report object (like synth's ValidationReport) whose `feedback` holds them.
    Any failure (bad or truncated JSON, wrong types, a refusal, validation feedback) is sent back
    for a repair while rounds remain; so at most 1 + `max_rounds` completions are requested. HTTP
    and transport failures, after the client's bounded retries, end the generation. Never raises
    for anything the endpoint or the model does: the spec is None and `stats.error` says why.
    `variation` asks for a distinct variant in the prompt; `seed` is sent to the endpoint.
    """
    if max_rounds < 0:
        raise ValueError(f"max_rounds must be zero or more (got {max_rounds})")
    name = capability if isinstance(capability, str) else str(getattr(capability, "id", capability))
    stats = GenerationStats(capability=name)
    if spec_schema is None:
        if not (isinstance(spec_model, type) and issubclass(spec_model, BaseModel)):
            raise ValueError("spec_schema is required when spec_model is a loader function")
        spec_schema = spec_model.model_json_schema()
    chosen = select_services(services if services is not None else capability_services(capability))
    task = task_messages(capability, requirement, spec_schema, chosen, variation)
    owned = isinstance(settings, LLMSettings)
    client = ChatClient(settings) if isinstance(settings, LLMSettings) else settings
    try:
        return _loop(client, task, spec_model, spec_schema, validator, max_rounds, stats, seed)
    finally:
        if owned:
            client.close()


def _loop(client: ChatClient, task: list[dict[str, str]], spec_model: Any, spec_schema: dict[str, Any],
          validator: Validator, max_rounds: int, stats: GenerationStats, seed: int | None) -> tuple[Any, GenerationStats]:
    messages = list(task)
    for round_no in range(max_rounds + 1):
        try:
            completion = client.complete_json(messages, spec_schema, "EnvironmentSpec", seed)
        except LLMError as exc:
            return _discard(stats, f"{exc.kind}: {exc.message}", fatal=exc.fatal)
        stats.rounds += 1
        stats.prompt_tokens += completion.usage.prompt_tokens
        stats.completion_tokens += completion.usage.completion_tokens
        stats.response_format = completion.response_format
        record = RoundRecord(round_no, "valid", [], completion.usage.prompt_tokens, completion.usage.completion_tokens)
        stats.history.append(record)
        spec, follow_up = _judge(completion, spec_model, validator, record, round_no + 1, max_rounds)
        if spec is not None:
            stats.first_pass_valid = round_no == 0
            stats.repaired = round_no > 0
            return spec, stats
        if record.outcome == "validator_error":
            return _discard(stats, record.problems[0]["problem"])
        messages = [*task, {"role": "assistant", "content": completion.text or completion.refusal or ""}, follow_up]
    last = stats.history[-1]
    reasons = "; ".join(f"{p['path']}: {p['problem']}" for p in last.problems[:3])
    more = f" (+{len(last.problems) - 3} more)" if len(last.problems) > 3 else ""
    return _discard(stats, f"still {last.outcome.replace('_', ' ')} after {max_rounds} repair round"
                           f"{'' if max_rounds == 1 else 's'}: {reasons}{more}")


def _judge(completion: Completion, spec_model: Any, validator: Validator, record: RoundRecord,
           next_round: int, max_rounds: int) -> tuple[Any, dict[str, str]]:
    """The validated spec, or None and the message asking for a repair (the record says which)."""
    if completion.refusal is not None and not completion.text:
        record.outcome = "refusal"
        record.problems = [{"path": "$", "problem": f"the model refused: {completion.refusal}", "hint": ""}]
        return None, refusal_message(completion.refusal)
    try:
        obj = extract_json(completion.text or "", completion.finish_reason)
        spec = validate_model(obj, spec_model)
    except AnswerRejected as exc:
        record.outcome = "invalid_json" if exc.stage == "json" else "schema"
        return None, _ask_repair(record, exc.problems, next_round, max_rounds)
    try:
        feedback = feedback_items(validator(spec))
    except Exception as exc:  # a crash on model-written input must not end a batch
        record.outcome = "validator_error"
        record.problems = [{"path": "$", "problem": f"the validator failed on this spec: "
                                                    f"{type(exc).__name__}: {exc}", "hint": ""}]
        return None, {}
    if not feedback:
        return spec, {}
    record.outcome = "validation"
    return None, _ask_repair(record, feedback, next_round, max_rounds)


def feedback_items(verdict: Any) -> list[FeedbackLike]:
    """The feedback items of a validator's verdict: a list of items, or a report with `.feedback`."""
    items = getattr(verdict, "feedback", verdict)
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"a validator must return feedback items or a report with .feedback, got {type(verdict).__name__}")
    return list(items)


def _ask_repair(record: RoundRecord, problems: Sequence[FeedbackLike], next_round: int,
                max_rounds: int) -> dict[str, str]:
    record.problems = [{"path": p.path, "problem": p.problem, "hint": getattr(p, "hint", "") or "",
                        **({"check": p.check} if getattr(p, "check", None) else {})} for p in problems]
    return repair_message(problems, next_round, max_rounds)


def _discard(stats: GenerationStats, reason: str, fatal: bool = False) -> tuple[None, GenerationStats]:
    stats.discarded = True
    stats.error = reason
    stats.fatal = fatal
    return None, stats


__all__ = ["GenerationStats", "Problem", "RoundRecord", "Validator", "feedback_items", "generate_with_repair"]

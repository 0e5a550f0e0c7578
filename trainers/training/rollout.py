"""The rollout interface between a policy model and an environment, and two rollout functions.

A rollout function is any callable `fn(model, tokenizer, env, settings) -> Rollout`. It plays one
episode in the environment and returns the episode record, the token segments the policy produced
(one per assistant turn: the context it saw and the tokens it emitted, so the trainer can recompute
their log-probabilities) and the reward. The episode runner can supply its own; two are here:

- `generate_rollout`: the student writes each turn freely; tool calls are parsed from its text
  (the chat template's `<tool_call>` JSON) and run in the workspace; a turn without a call ends
  the episode as the answer.
- `choice_rollout`: the student picks each turn among candidate completions (the environment's
  solution call, plausible wrong calls, an answer), sampled by its own sequence log-probability.
  A tiny untrained model has a real chance of success this way, so GRPO has a signal at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..record import EpisodeRecord, PolicyInfo, TurnTokens
from ..rewards import RewardConfig, episode_reward
from .episode import EpisodeRecorder, TrainingEnvironment


SPEC_PROMPT = "spec"


class RolloutSettings(BaseModel):
    """How rollouts are played."""

    model_config = ConfigDict(extra="forbid")
    max_turns: int = Field(4, ge=1)
    max_new_tokens: int = Field(96, ge=1)
    temperature: float = Field(1.0, gt=0.0)
    rewards: RewardConfig = RewardConfig()
    system_prompt: str | None = Field("You act for the user in their workspace. Use the tools, then answer briefly.",
                                      description=f"The system message; {SPEC_PROMPT!r}: the runner's own for the "
                                                  "environment (whom the agent acts for, the time), as in SFT data")
    seed: int = 0

    def prompt_for(self, env: Any) -> str | None:
        """The system message of a rollout in `env`."""
        if self.system_prompt != SPEC_PROMPT:
            return self.system_prompt
        from ..episodes.runner import system_prompt

        if not hasattr(env, "world"):
            raise ValueError(f"system_prompt {SPEC_PROMPT!r} needs an environment spec, got {type(env).__name__}")
        return system_prompt(env)


@dataclass
class Segment:
    """Tokens the policy produced in one turn, after `prompt_ids` (everything it saw before)."""

    turn: int
    prompt_ids: list[int]
    completion_ids: list[int]
    old_logprobs: list[float] | None = None


@dataclass
class Rollout:
    """One episode played by the policy: its record, token segments and reward."""

    record: EpisodeRecord
    segments: list[Segment]
    reward: float
    info: dict[str, Any] = field(default_factory=dict)


RolloutFn = Callable[[Any, Any, TrainingEnvironment, RolloutSettings, str], Rollout]

_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


def parse_tool_calls(text: str) -> tuple[str | None, list[tuple[str, dict[str, Any]]], str | None]:
    """Split generated text into (content, calls, problem); `problem` says why a call block was unusable."""
    calls: list[tuple[str, dict[str, Any]]] = []
    problem = None
    for m in _CALL.finditer(text):
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError as e:
            problem = f"tool call is not valid JSON: {e.msg}"
            continue
        if not isinstance(obj, dict):
            problem = "tool call must be a JSON object"
            continue
        name, args = obj.get("name"), obj.get("arguments", {})
        if not isinstance(name, str) or not isinstance(args, dict):
            problem = "tool call needs a string 'name' and an object 'arguments'"
            continue
        calls.append((name, args))
    content = _CALL.sub("", text).replace("<|im_end|>", "").strip() or None
    if problem is None and "<tool_call>" in text and not calls:
        problem = "unterminated <tool_call> block"
    return content, calls, problem


def _prompt_ids(tokenizer: Any, rec: EpisodeRecorder) -> list[int]:
    msgs = [m.to_hf() for m in rec.messages]
    out = tokenizer.apply_chat_template(msgs, tools=rec.tools or None, add_generation_prompt=True, tokenize=True,
                                        return_dict=True)
    return list(out["input_ids"])


def generate_rollout(model: Any, tokenizer: Any, env: TrainingEnvironment, settings: RolloutSettings,
                     episode_id: str) -> Rollout:
    """Play an episode with free generation; tool calls are parsed from the text and run in the workspace."""
    import torch

    rec = EpisodeRecorder(env, episode_id, PolicyInfo(name="student", settings=settings.model_dump(mode="json")),
                          seed=settings.seed, system_prompt=settings.prompt_for(env))
    segments: list[Segment] = []
    stop = "max_turns"
    problems = 0
    for turn in range(settings.max_turns):
        prompt = _prompt_ids(tokenizer, rec)
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                 max_new_tokens=settings.max_new_tokens, do_sample=True,
                                 temperature=settings.temperature, eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.pad_token_id)
        completion = out[0, len(prompt):].tolist()
        text = tokenizer.decode(completion, skip_special_tokens=False)
        content, calls, problem = parse_tool_calls(text)
        problems += problem is not None
        segments.append(Segment(turn, prompt, completion))
        rec.turn(content if (content or not calls) else None, calls,
                 TurnTokens(turn=turn, prompt_ids=prompt, completion_ids=completion))
        if not calls:
            stop = "answered" if tokenizer.eos_token_id in completion else "max_tokens"
            break
    record = rec.finish(stop)  # type: ignore[arg-type]
    reward = episode_reward(record, settings.rewards)
    record.final.reward = reward  # type: ignore[union-attr]
    return Rollout(record, segments, reward, {"malformed_calls": problems})


def _call_text(name: str, args: dict[str, Any]) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": args})}\n</tool_call><|im_end|>'


def solution_calls(env: Any) -> list[tuple[str, dict[str, Any]]]:
    """The environment's reference calls: `env.solution()`, or a spec's `reference.calls()`."""
    if callable(getattr(env, "solution", None)):
        return list(env.solution())
    reference = getattr(env, "reference", None)
    if reference is not None and callable(getattr(reference, "calls", None)):
        return [(c.tool, dict(c.args)) for c in reference.calls()]
    raise ValueError(f"environment {getattr(env, 'id', env)!r} has no reference solution for choice rollouts")


def candidate_turns(env: Any, rec: EpisodeRecorder) -> list[tuple[str | None, list[tuple[str, dict[str, Any]]]]]:
    """Candidate turns: each solution call not yet made, each call applied to a wrong path, and an answer."""
    done = {json.dumps([c.function.name, c.function.arguments], sort_keys=True)
            for m in rec.messages for c in (m.tool_calls or [])}
    out: list[tuple[str | None, list[tuple[str, dict[str, Any]]]]] = []
    for name, args in solution_calls(env):
        if json.dumps([name, args], sort_keys=True) not in done:
            out.append((None, [(name, args)]))
            for other in getattr(env, "others", ()) if hasattr(env, "name") else ():  # a file it must not touch
                wrong = {k: (v.replace(env.name, other) if isinstance(v, str) else v) for k, v in args.items()}
                out.append((None, [(name, wrong)]))
            break
    out.append(("Done.", []))
    return out


def sequence_logprob(model: Any, prompt: Sequence[int], completion: Sequence[int]) -> Any:
    """Sum of log-probabilities of `completion` after `prompt` under the model (a differentiable tensor)."""
    import torch

    ids = torch.tensor([list(prompt) + list(completion)])
    logits = model(input_ids=ids).logits[0, len(prompt) - 1:-1]
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, torch.tensor(list(completion)).unsqueeze(-1)).sum()


def choice_rollout(model: Any, tokenizer: Any, env: Any, settings: RolloutSettings, episode_id: str) -> Rollout:
    """Play an episode by sampling each turn among `candidate_turns` by the model's mean token log-probability.

    The environment needs a `solution()` (list of calls) for the candidates, as `ArchiveEnvironment` has.
    """
    import torch

    rec = EpisodeRecorder(env, episode_id, PolicyInfo(name="student-choice", settings=settings.model_dump(mode="json")),
                          seed=settings.seed, system_prompt=settings.prompt_for(env))
    digest = hashlib.blake2b(f"{settings.seed}:{episode_id}".encode(), digest_size=4).digest()
    gen = torch.Generator().manual_seed(int.from_bytes(digest, "big"))
    segments: list[Segment] = []
    stop = "max_turns"
    for turn in range(settings.max_turns):
        prompt = _prompt_ids(tokenizer, rec)
        cands = candidate_turns(env, rec)
        texts = [(c or "") + "<|im_end|>" if not calls else _call_text(*calls[0]) for c, calls in cands]
        encoded = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        with torch.no_grad():
            # Mean per-token log-probability, so a long tool call is not out-scored by a short answer
            # just for its length.
            scores = torch.stack([sequence_logprob(model, prompt, e) / len(e) for e in encoded]) / settings.temperature
        pick = int(torch.multinomial(torch.softmax(scores, 0), 1, generator=gen))
        content, calls = cands[pick]
        segments.append(Segment(turn, prompt, encoded[pick]))
        rec.turn(content, calls, TurnTokens(turn=turn, prompt_ids=prompt, completion_ids=encoded[pick]))
        if not calls:
            stop = "answered"
            break
    record = rec.finish(stop)  # type: ignore[arg-type]
    reward = episode_reward(record, settings.rewards)
    record.final.reward = reward  # type: ignore[union-attr]
    return Rollout(record, segments, reward)

"""The rollout interface between a policy model and an environment, and two rollout functions.

A rollout function is any callable `fn(model, tokenizer, env, settings) -> Rollout`. It plays one
episode in the environment and returns the episode record, the token segments the policy produced
(one per assistant turn: the context it saw and the tokens it emitted, so the trainer can recompute
their log-probabilities) and the reward. The episode runner can supply its own; two are here:

- `generate_rollout`: the student writes each turn freely; tool calls are parsed from its text
  (the chat template's `<tool_call>` JSON) and run in the workspace.
- `choice_rollout`: the student picks each turn among candidate completions (the environment's
  next reference step, plausible wrong ones, a "Done." report), sampled by its own mean token
  log-probability. A tiny untrained model has a real chance of success this way, so GRPO has a
  signal at once.

Both play an environment spec with the spec's turn semantics (`EpisodeRecorder` over the
runner's `EpisodeSession`): a message without calls goes to the simulated user, who answers it or,
satisfied, lets it close the working day (the next day's instructions and world changes arrive as
the user's next message) or end the episode; the toy environments end at the first turn without
calls. The rollout's reward is `trainers.rewards.episode_reward` under `settings.rewards` (with
`per_stage`, the per-turn rewards the credit assignment sees pay each day in the turn that closed it).

A vision-language student (its `tokenizer` is the processor, as `tiny_vl.load_vl` gives it) is shown the images the
episode has shown so far (`vision_inputs.turn_prompt`): its prompts are rendered by the processor with their image
tokens, and generation, the candidates' scores and each `Segment` (for the update) carry the pixel values, image
grids and token types (`VisionInputs`); the rollout's `info["images"]` names the images it was shown.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from synth.spec import AskStep, CallStep, EndStageStep, SayStep
from workspace_sim.record import EpisodeRecord, PolicyInfo, StopReason, TurnTokens

from ..episodes.prepared import EpisodeLimits
from ..rewards import RewardConfig, episode_reward
from .episode import EpisodeRecorder, TrainingEnvironment
from ..models.vision_messages import text_tokenizer, vision_token_ids
from .vision_inputs import VisionInputs, reset_rope, share_pixels, turn_prompt


SPEC_PROMPT = "spec"


class RolloutSettings(BaseModel):
    """How rollouts are played."""

    model_config = ConfigDict(extra="forbid")
    max_turns: int = Field(4, ge=1)
    max_new_tokens: int = Field(96, ge=1)
    temperature: float = Field(1.0, gt=0.0)
    greedy: bool = Field(False, description="Take the most likely turn instead of sampling (evaluation).")
    rewards: RewardConfig = RewardConfig()
    system_prompt: str | None = Field("You act for the user in their workspace. Use the tools, then answer briefly.",
                                      description=f"The system message; {SPEC_PROMPT!r}: the runner's own for the "
                                                  "environment (whom the agent acts for, the time), as in SFT data")
    seed: int = 0

    def prompt_for(self, env: Any) -> str | None:
        """The system message of a rollout in `env`."""
        if self.system_prompt != SPEC_PROMPT:
            return self.system_prompt
        from ..episodes.prepared import system_prompt

        if not hasattr(env, "world"):
            raise ValueError(f"system_prompt {SPEC_PROMPT!r} needs an environment spec, got {type(env).__name__}")
        return system_prompt(env)

    def recorder(self, env: Any, episode_id: str, policy: str) -> EpisodeRecorder:
        """The recorder of one rollout in `env`: a spec's episode stops itself at `max_turns` (stop reason
        "max_turns") and carries the reward of `rewards`."""
        info = PolicyInfo(name=policy, settings=self.model_dump(mode="json"))
        return EpisodeRecorder(env, episode_id, info, seed=self.seed, system_prompt=self.prompt_for(env),
                               limits=EpisodeLimits(max_turns=self.max_turns), reward=self.rewards)


@dataclass
class Segment:
    """Tokens the policy produced in one turn, after `prompt_ids` (everything it saw before); `vision` holds a vision
    student's images of the prompt (None for a text student)."""

    turn: int
    prompt_ids: list[int]
    completion_ids: list[int]
    old_logprobs: list[float] | None = None
    vision: VisionInputs | None = None

    def model_kwargs(self) -> dict[str, Any]:
        """What a forward pass over prompt and completion feeds the model besides the ids (a vision student's
        pixels, grids and token types; nothing for a text student)."""
        if self.vision is None:
            return {}
        return self.vision.model_kwargs(len(self.prompt_ids) + len(self.completion_ids))


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


def _shown(images: list[str], vision: VisionInputs | None) -> None:
    for name in vision.images if vision is not None else ():
        if name not in images:
            images.append(name)


def _finish(rec: EpisodeRecorder, stop: StopReason, settings: RolloutSettings) -> tuple[EpisodeRecord, float]:
    record = rec.finish(stop)
    reward = episode_reward(record, settings.rewards)
    record.final.reward = reward  # type: ignore[union-attr]
    return record, reward


def generate_rollout(model: Any, tokenizer: Any, env: TrainingEnvironment, settings: RolloutSettings,
                     episode_id: str) -> Rollout:
    """Play an episode with free generation; tool calls are parsed from the text and run in the workspace.

    A turn that ends without the end-of-turn token was cut at `max_new_tokens`: a message cut off ends
    the episode ("max_tokens"); in a spec a cut-off turn of calls does too, as in the runner.
    """
    import torch

    tok = text_tokenizer(tokenizer)
    rec = settings.recorder(env, episode_id, "student")
    segments: list[Segment] = []
    images: list[str] = []
    stop: StopReason = "max_turns"
    problems = 0
    try:
        for turn in range(settings.max_turns):
            prompt, vision = turn_prompt(tokenizer, rec, episode_id, turn)
            _shown(images, vision)
            sampling: dict[str, Any] = {"do_sample": False} if settings.greedy else {
                "do_sample": True, "temperature": settings.temperature}
            pixels = vision.model_kwargs(len(prompt)) if vision is not None else {}
            if vision is not None and vision_token_ids(tokenizer):  # a sampled image marker: a slot with no image
                pixels["suppress_tokens"] = vision_token_ids(tokenizer)
            with torch.no_grad():
                out = model.generate(torch.tensor([prompt]),
                                     attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                     max_new_tokens=settings.max_new_tokens, eos_token_id=tok.eos_token_id,
                                     pad_token_id=tok.pad_token_id, **sampling, **pixels)
            completion = out[0, len(prompt):].tolist()
            text = tok.decode(completion, skip_special_tokens=False)
            content, calls, problem = parse_tool_calls(text)
            problems += problem is not None
            finished = tok.eos_token_id in completion
            segments.append(Segment(turn, prompt, completion, vision=vision))
            rec.turn(content if (content or not calls) else None, calls,
                     TurnTokens(turn=turn, prompt_ids=prompt, completion_ids=completion),
                     truncated=not finished and (not calls or rec.session is not None))
            if not calls and rec.session is None:
                stop = "answered" if finished else "max_tokens"
            if rec.done:
                break
    except BaseException:
        rec.close()
        raise
    share_pixels([s.vision for s in segments])
    record, reward = _finish(rec, stop, settings)
    info: dict[str, Any] = {"malformed_calls": problems}
    if segments and segments[0].vision is not None:
        info["images"] = images
    return Rollout(record, segments, reward, info)


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
    done = {json.dumps([c["function"]["name"], c["function"]["arguments"]], sort_keys=True)
            for m in rec.messages for c in (m.get("tool_calls") or [])}
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


def sequence_logprob(model: Any, prompt: Sequence[int], completion: Sequence[int],
                     vision: VisionInputs | None = None) -> Any:
    """Sum of log-probabilities of `completion` after `prompt` under the model (a differentiable tensor); `vision`:
    the prompt's images, fed to a vision student with the ids."""
    import torch

    ids = torch.tensor([list(prompt) + list(completion)])
    extra = vision.model_kwargs(ids.shape[1]) if vision is not None else {}
    logits = model(input_ids=ids, **extra).logits[0, len(prompt) - 1:-1]
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, torch.tensor(list(completion)).unsqueeze(-1)).sum()


@dataclass(frozen=True)
class Candidate:
    """One turn a choice rollout may pick: text and calls, the user-reply hint, and the reference step it plays
    (None: a turn off the reference, such as an early "Done.")."""

    content: str | None
    calls: list[tuple[str, dict[str, Any]]]
    expects_reply: bool | None = None
    step: int | None = None

    def text(self) -> str:
        """The completion the model would write for this turn."""
        return _call_text(*self.calls[0]) if self.calls else (self.content or "") + "<|im_end|>"


def scenario_candidates(spec: Any, cursor: int, fill: Callable[[Any], Any]) -> list[Candidate]:
    """Candidate turns in a spec at reference step `cursor`: the step as the teacher plays it (a call, a question
    or report awaiting the reply, a day's closing report), the same call with its `stale_args` (what an agent
    that never re-read would send) where it has them, and a "Done." that the user judges; after the last step,
    the reference's final answer and the "Done."."""
    steps = spec.reference.steps
    out: list[Candidate] = []
    if cursor < len(steps):
        step = steps[cursor]
        if isinstance(step, CallStep):
            out.append(Candidate(None, [(step.tool, fill(dict(step.args)))], step=cursor))
            if step.stale_args is not None:
                out.append(Candidate(None, [(step.tool, fill(dict(step.stale_args)))], step=cursor))
        elif isinstance(step, (AskStep, SayStep)):
            out.append(Candidate(fill(step.text), [], expects_reply=True, step=cursor))
        elif isinstance(step, EndStageStep):
            out.append(Candidate(fill(step.text), [], expects_reply=False, step=cursor))
    elif spec.reference.final_answer is not None:
        out.append(Candidate(fill(spec.reference.final_answer), [], expects_reply=False, step=cursor))
    out.append(Candidate("Done.", []))
    return out


def _after_day(spec: Any, day: int) -> int:
    """The reference step after the `day`-th (0-based) end_stage step: where the next day's work starts."""
    ends = [i for i, st in enumerate(spec.reference.steps) if isinstance(st, EndStageStep)]
    return ends[day] + 1 if day < len(ends) else len(spec.reference.steps)


def _cache_of(out: Any) -> Any:
    cache = out.get("cache") if hasattr(out, "get") else None
    return cache if cache is not None else out.past_key_values


def _cache_arg() -> str:
    """The keyword a model's forward takes its key/value cache by (transformers 5 renamed past_key_values)."""
    import transformers

    return "cache" if int(transformers.__version__.split(".")[0]) >= 5 else "past_key_values"



def candidate_logprobs(model: Any, prompt: Sequence[int], candidates: Sequence[Sequence[int]],
                       vision: VisionInputs | None = None) -> list[float]:
    """Mean per-token log-probability of each candidate completion after `prompt` (no gradient).

    The prompt is run once and its key/value cache reused for every candidate (cropped back after each),
    so scoring k candidates costs one pass over the prompt, not k; the figures equal `sequence_logprob`'s
    divided by the candidate's length, up to float rounding. A vision student's prompt pass gets its images
    (`vision`); the candidates continue from the cache with the rope offsets that pass computed.
    """
    import torch

    arg = _cache_arg()
    with torch.no_grad():
        if vision is None:
            out = model(input_ids=torch.tensor([list(prompt)]), use_cache=True)
        else:
            reset_rope(model)
            out = model(input_ids=torch.tensor([list(prompt)]), use_cache=True, **vision.model_kwargs(len(prompt)))
        cache, last = _cache_of(out), out.logits[0, -1:].float()
        scores = []
        for cand in candidates:
            if len(cand) > 1:
                more = model(input_ids=torch.tensor([list(cand[:-1])]), use_cache=True, **{arg: cache})
                logits = torch.cat([last, more.logits[0].float()])
                cache.crop(-(len(cand) - 1))  # back to the prompt alone
            else:
                logits = last
            logp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(list(cand)).unsqueeze(-1))
            scores.append(float(logp.mean()))
    return scores


def _pick(model: Any, tokenizer: Any, prompt: list[int], texts: Sequence[str], settings: RolloutSettings,
          gen: Any, vision: VisionInputs | None = None) -> tuple[int, list[list[int]]]:
    import torch

    tok = text_tokenizer(tokenizer)
    encoded = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    # Mean per-token log-probability, so a long tool call is not out-scored by a short answer just for its length.
    scores = torch.tensor(candidate_logprobs(model, prompt, encoded, vision))
    if settings.greedy:
        return int(torch.argmax(scores)), encoded
    return int(torch.multinomial(torch.softmax(scores / settings.temperature, 0), 1, generator=gen)), encoded


def choice_rollout(model: Any, tokenizer: Any, env: Any, settings: RolloutSettings, episode_id: str) -> Rollout:
    """Play an episode by sampling each turn among candidate turns by the model's mean token log-probability.

    In a spec the candidates are `scenario_candidates` at the reference step reached (a day closed early moves
    it to the next day's first step); other environments need a `solution()` (list of calls) for
    `candidate_turns`, as `ArchiveEnvironment` has.
    """
    import torch

    rec = settings.recorder(env, episode_id, "student-choice")
    digest = hashlib.blake2b(f"{settings.seed}:{episode_id}".encode(), digest_size=4).digest()
    gen = torch.Generator().manual_seed(int.from_bytes(digest, "big"))
    segments: list[Segment] = []
    images: list[str] = []
    cursor = 0
    try:
        for turn in range(settings.max_turns):
            prompt, vision = turn_prompt(tokenizer, rec, episode_id, turn)
            _shown(images, vision)
            if rec.session is not None:
                spec = rec.session.spec
                cands = scenario_candidates(spec, cursor, rec.session.driver.fill)
            else:
                cands = [Candidate(c, calls) for c, calls in candidate_turns(env, rec)]
            pick, encoded = _pick(model, tokenizer, prompt, [c.text() for c in cands], settings, gen, vision)
            chosen = cands[pick]
            segments.append(Segment(turn, prompt, encoded[pick], vision=vision))
            day = rec.session.driver.stage if rec.session is not None else 0
            tokens = TurnTokens(turn=turn, prompt_ids=prompt, completion_ids=encoded[pick])
            rec.turn(chosen.content, chosen.calls, tokens, expects_reply=chosen.expects_reply)
            if chosen.step is not None:
                cursor = chosen.step + 1
            elif rec.session is not None and rec.session.driver.stage > day:  # "Done." closed the day early
                cursor = _after_day(rec.session.spec, day)
            if rec.done:
                break
    except BaseException:
        rec.close()
        raise
    share_pixels([s.vision for s in segments])
    record, reward = _finish(rec, "answered" if rec.done else "max_turns", settings)
    vision_student = bool(segments) and segments[0].vision is not None
    return Rollout(record, segments, reward, {"images": images} if vision_student else {})

"""MCP alone: the control tools and status an episode offers when no harness drives it.

An MCP-only agent (Claude Desktop, an IDE agent, a headless agent CLI) has only the MCP session:
nobody answers its questions, feeds it world events or ends the episode with its answer. With
control on (`coworkenv serve --mcp-only`, or `"mcp_only": true` in an admin create), the episode
offers two more tools and a read-only resource:

- `ask_user(question)`: the environment's simulated user answers (the spec's scripted user, or an
  LLM user when the server was given one); each question opens the next turn, as a message to the
  user does in the direct runner, so turn-triggered world events and follow-ups happen here too;
- `submit_answer(answer)`: the agent says it is done. When the user has more for it (a scripted
  follow-up still to come, or in a multi-day scenario the next working day, which the answer
  closes as the day's report), the reply is the user's next message and the episode goes on;
  otherwise the answer is the final one, the episode ends and is evaluated, and the reply says the
  score only when the server was told it may (`reveal_score`);
- `episode://status`: turn, calls, simulated time, the day (of how many) in a multi-day scenario,
  whether it ended, and the score once it has only with `reveal_score`; nothing that names the test
  (no environment or stage id).

Timed world events fire before the first call at or after their time; every call moves the
simulated clock by the workspace's tick, so they fire at a known call count. The turn semantics
are the environment's own (`Conversation`, which synth implements with its `SpecDriver`); this
module only routes the agent's calls to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Callable, Protocol, runtime_checkable

from pydantic import Field, ValidationError

from workspace_sim.core.registry import ToolHints, make_tool

if TYPE_CHECKING:
    from workspace_sim import Workspace

STATUS_URI = "episode://status"
MAX_TEXT = 20_000
#: the conversation's status an agent is shown (turn, day N of M); never a stage id, which the spec's author
#: named and which may say what is tested
AGENT_STATUS_KEYS = ("turn", "day", "days")
MAX_ASKS = 200  # ask_user calls per episode: each logs two messages, which no workspace limit counts


@runtime_checkable
class Conversation(Protocol):
    """One episode's conversation with the simulated user and the world, as the environment defines it."""

    def start(self) -> str:
        """Open turn 0 (log the request, apply the events due at the start); returns the request."""
        ...

    def before_call(self) -> None:
        """Apply the world events that are due before the agent's next tool call."""
        ...

    def ask(self, message: str) -> str:
        """The agent says `message` to the user; log both sides and return the user's reply."""
        ...

    def submit(self, answer: str) -> str | None:
        """The agent says it is done (`answer`). When the episode goes on (a follow-up is still to come, or the
        answer closes a working day and the next one opens), log both sides and return the user's next message;
        else None, logging nothing: `answer` is the final answer, for the episode to log and evaluate."""
        ...

    def status(self) -> dict[str, Any]:
        """What the agent may know of the conversation (the turn; never hidden facts)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Settings for the record: who plays the user (never keys or hidden facts)."""
        ...

    def checkpoint(self) -> Any:
        """A handle to resume this conversation from (taken with a workspace snapshot)."""
        ...

    def resume(self, checkpoint: Any, workspace: "Workspace") -> None:
        """Return to a checkpoint, now over `workspace` (restored to the matching state)."""
        ...

    def fork(self, workspace: "Workspace") -> "Conversation":
        """An independent copy of this conversation over a forked workspace."""
        ...


#: builds the simulated user of an environment (opaque to this package; synth's SpecDriver asks
#: it for `reply` and `followup`); None means the environment's own scripted user
UserFactory = Callable[[Any], Any]


@dataclass(frozen=True)
class ControlOptions:
    """How an episode serves an MCP-only agent: the control tools on or off, the score revealed on submit
    or not, and who plays the user (None: the environment's scripted user)."""

    enabled: bool = False
    reveal_score: bool = False
    user: UserFactory | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The options as record settings."""
        return {"mcp_only": self.enabled, "reveal_score": self.reveal_score}


def open_conversation(env: Any, workspace: "Workspace", options: ControlOptions) -> Conversation | None:
    """The environment's conversation over `workspace`, or None when it offers none (no simulated user).

    An environment offers one through an optional method `conversation(workspace, user)`; a
    `ServedEnvironment` without it can still be served MCP-only (submit_answer works, ask_user
    says there is nobody to ask).
    """
    make = getattr(env, "conversation", None)
    if not callable(make):
        return None
    user = options.user(env) if options.user is not None else None
    conv = make(workspace, user)
    if conv is not None and not isinstance(conv, Conversation):
        raise TypeError(f"environment {env.id}: conversation() returned {type(conv).__name__}, not a Conversation")
    return conv


# --- the tools: defined once, as functions, so their schemas come from the registry ---------------------


def ask_user(ctx: Any, question: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]) -> str:
    """Ask the person you work for a question, or tell them something, and get their reply. Use it when you need information only they have; each message opens a new turn of the conversation.

    Args:
        question: What you say to them, in plain text.
    """
    raise NotImplementedError("served by EpisodeControl.ask; this function only defines the tool")


def submit_answer(ctx: Any, answer: Annotated[str, Field(max_length=MAX_TEXT)]) -> str:
    """Report to the person you work for that you are done, with your reply. If they have more for you (a follow-up, or in a multi-day task the next working day's instructions, this answer being the day's report), their message comes back and you go on working; otherwise the episode ends and is evaluated, and no tool works afterwards.

    Args:
        answer: Your message to them (what you did, or the answer they asked for); empty to end the episode at once without one.
    """
    raise NotImplementedError("served by EpisodeControl.submit; this function only defines the tool")


ASK_USER = make_tool(ask_user, "control", ToolHints(read_only=True))
SUBMIT_ANSWER = make_tool(submit_answer, "control", ToolHints(destructive=True))
CONTROL_TOOLS = {t.name: t for t in (ASK_USER, SUBMIT_ANSWER)}


class ControlError(ValueError):
    """A control call that cannot be honoured; `code` names the kind (as workspace errors do)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def check_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """The validated arguments of a control tool, or a ControlError naming the field and the problem."""
    tool = CONTROL_TOOLS[name]
    if not isinstance(arguments, dict):
        raise ControlError("invalid_argument", f"the arguments of {name} must be an object, got "
                                               f"{type(arguments).__name__}")
    try:
        return tool.args_model.model_validate(arguments).model_dump()
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        raise ControlError("invalid_argument", f"{name}: {where}: {err['msg']}") from None


class EpisodeControl:
    """The control side of one MCP-only episode: its conversation, its submitted answer."""

    def __init__(self, options: ControlOptions, conversation: Conversation | None) -> None:
        self.options = options
        self.conversation = conversation
        self.submitted = False
        self.final_answer: str | None = None
        self.asked = 0  # ask_user calls answered so far (bounded by MAX_ASKS)

    def tool_names(self) -> list[str]:
        """The control tools offered: ask_user only when someone can answer."""
        return [n for n in CONTROL_TOOLS if n != ASK_USER.name or self.conversation is not None]

    def ask(self, arguments: Any) -> str:
        """The user's reply to the question in `arguments` (ControlError when nobody can answer)."""
        if self.conversation is None:
            raise ControlError("no_user", "this environment has no simulated user to ask; work from the request "
                                          f"(resource workspace://task) and finish with {SUBMIT_ANSWER.name}")
        args = check_arguments(ASK_USER.name, arguments)
        if not args["question"].strip():
            raise ControlError("invalid_argument", f"{ASK_USER.name}: question is blank; say something to the user")
        if self.asked >= MAX_ASKS:
            raise ControlError("limit_exceeded", f"{ASK_USER.name} was called {MAX_ASKS} times, the most an episode "
                                                 f"allows; finish with what you have and call {SUBMIT_ANSWER.name}")
        self.asked += 1
        return self.conversation.ask(args["question"])

    def carry_on(self, answer: str) -> str | None:
        """The user's next message after the agent's `answer` when the episode goes on, else None (the answer is
        final). Continuing submissions count against the same bound as questions: past it, the answer is final."""
        if self.conversation is None or self.asked >= MAX_ASKS:
            return None
        reply = self.conversation.submit(answer)
        if reply is not None:
            self.asked += 1
        return reply

    def submission(self, arguments: Any) -> str | None:
        """The final answer in `arguments` (None for an empty one), checked before anything changes."""
        args = check_arguments(SUBMIT_ANSWER.name, arguments)
        answer = args["answer"]
        return answer if answer.strip() else None

    def status(self) -> dict[str, Any]:
        """The conversation's part of the episode status."""
        conv = self.conversation.status() if self.conversation is not None else {"turn": 0}
        shown = {k: conv[k] for k in AGENT_STATUS_KEYS if k in conv}  # a stage id may name what is tested
        return {**shown, "user": self.conversation is not None, "submitted": self.submitted}


def how_to_finish(status: dict[str, Any]) -> str:
    """How an MCP-only agent finishes, for the start prompt and the task resource: submit_answer, what comes back
    when the user has more, and in a multi-day scenario how days close (`status`: the conversation's status)."""
    days = status.get("days") or 1
    if days > 1:
        return (f"This task spans {days} working days. When the day's work is done, call {SUBMIT_ANSWER.name} "
                f"with your report for the day: it closes the day, and the next day's instructions (with any news) "
                f"come back as its result. Work through each day the same way; {SUBMIT_ANSWER.name} on the last "
                f"day ends the episode. {STATUS_URI} shows which day it is (day N of {days}).")
    return (f"When you are done, call {SUBMIT_ANSWER.name} with a short summary of what you did. If the person "
            f"has more for you, their message comes back as its result: carry on and call {SUBMIT_ANSWER.name} "
            f"again when that is done. The episode ends when the result says so.")


def submit_reply(evaluation: dict[str, Any], reveal: bool) -> str:
    """What submit_answer tells the agent: that the episode ended, and its score only when revealing is allowed."""
    if not reveal:
        return (f"Your answer was recorded and the episode has ended; it is being evaluated. The outcome is in the "
                f"{STATUS_URI} resource. No further tool calls are accepted.")
    results = evaluation.get("results") or []
    lines = [f"Your answer was recorded and the episode has ended. Score: {float(evaluation.get('score', 0.0)):.3f} "
             f"({'passed' if evaluation.get('passed') else 'not passed'})."]
    for i, r in enumerate(results):
        about = f": {r['description']}" if r.get("description") else ""
        lines.append(f"- check {i + 1} ({r.get('kind', '?')}{about}): {'pass' if r.get('passed') else 'fail'}")
    return "\n".join(lines)

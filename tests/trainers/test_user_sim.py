"""User simulators: the scripted one (facts on request, follow-ups, satisfaction) and the LLM one over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripted_openai import HTTPError, Message, RecordedRequest, ScriptedOpenAI, ToolCall, ToolCalls
from episode_helpers import multi_turn_spec

from synth.llm.settings import LLMSettings
from trainers.episodes.batch import UserSpec
from trainers.episodes.policies import make_policy
from trainers.episodes.runner import run_episode
from trainers.episodes.users import DONE, LLMUserSim, ScriptedUserSim, user_system_prompt


def test_scripted_user_is_satisfied_only_when_nothing_is_asked_and_nothing_is_left() -> None:
    spec = multi_turn_spec()
    user = ScriptedUserSim(spec.user_simulator)
    assert not user.satisfied("What name should I use?", 1)  # reveals a fact
    assert not user.satisfied("Done.", 1)  # the follow-up of turn 2 is still to come
    assert user.satisfied("Done.", 3)
    assert user.describe() == {"kind": "scripted"}


def test_system_prompt_carries_persona_request_and_facts_and_forbids_volunteering() -> None:
    spec = multi_turn_spec()
    text = user_system_prompt(spec.user_simulator, spec.request, "Ada Byrne")
    assert "Ada, finance lead; terse" in text and spec.request in text
    assert "Call it q3-final.md." in text and "Never volunteer" in text and DONE in text


def llm_user_factory(server: ScriptedOpenAI) -> Any:
    return UserSpec("llm", {"model": "user-model", "base_url": server.base_url, "max_retries": 2,
                            "backoff": 0.01}).factory()


def test_llm_user_answers_the_teacher_over_http_and_reveals_the_fact() -> None:
    def answer(req: RecordedRequest) -> Message:
        last = req.messages[-1]["content"]
        if "called" in last:
            return Message("q3-final.md, please.")
        return Message(DONE)

    with ScriptedOpenAI(default=answer) as server:
        rec = run_episode(multi_turn_spec(), make_policy("teacher"), user=llm_user_factory(server), seed=4)
        reqs = server.completion_requests
    assert rec.passed, rec.final.evaluation
    assert rec.header.policy.settings["user"] == {"kind": "llm", "model": "user-model", "base_url": server.base_url}
    first = reqs[0]
    assert first.body["model"] == "user-model" and first.body["seed"] == 4
    assert first.messages[0]["role"] == "system" and "Never volunteer" in first.messages[0]["content"]
    # from the user's side: the request is its own (assistant) message, the agent's question is a user message
    assert first.messages[1] == {"role": "assistant", "content": multi_turn_spec().request}
    assert first.messages[2] == {"role": "user", "content": "What should the final file be called?"}
    msgs = rec.final.messages
    assert msgs[3].content.startswith("q3-final.md, please.")
    # turn 2's scripted follow-up is added to the model's reply (here DONE, which is dropped)
    assert msgs[7].content == "Thanks! Please also copy it to /shared."


def test_llm_user_ends_the_conversation_when_it_answers_done() -> None:
    with ScriptedOpenAI(default=Message(DONE)) as server:
        spec = multi_turn_spec(user_simulator={"facts": [], "followups": []})
        rec = run_episode(spec, make_policy("noop"), user=llm_user_factory(server))
        assert len(server.completion_requests) == 1
    assert rec.final.stop_reason == "answered" and len(rec.steps) == 1


def test_llm_user_keeps_talking_until_done_and_the_policy_hears_it() -> None:
    script = [Message("Did you check the drafts folder?"), Message(DONE)]
    agent = [Message("I looked around."), Message("Yes, all checked.")]
    with ScriptedOpenAI(script) as user_server, ScriptedOpenAI(agent) as agent_server:
        spec = multi_turn_spec(user_simulator={"facts": [], "followups": []})
        rec = run_episode(spec, make_policy("openai", model="a", base_url=agent_server.base_url, backoff=0.01),
                          user=llm_user_factory(user_server))
        heard = agent_server.completion_requests[1].messages[-1]["content"]
        assert heard == "Did you check the drafts folder?\n\nFYI: I just put notes.md into /drafts."
    assert rec.final.final_answer == "Yes, all checked."


def test_a_failing_user_endpoint_ends_the_episode_with_error_and_a_clear_detail() -> None:
    with ScriptedOpenAI(default=HTTPError(500, "user model down", retry_after=0)) as server:
        rec = run_episode(multi_turn_spec(), make_policy("noop"), user=llm_user_factory(server))
    assert rec.complete and rec.final.stop_reason == "error"
    assert "simulated user" in rec.final.stop_detail and "user model down" in rec.final.stop_detail


def test_a_user_model_that_calls_tools_or_refuses_still_gives_a_text_reply() -> None:
    with ScriptedOpenAI([ToolCalls([ToolCall("x")]), Message(None, refusal="I'd rather not say.")]) as server:
        sim = LLMUserSim(multi_turn_spec().user_simulator, "req", "Ada",
                         LLMSettings(model="m", base_url=server.base_url))
        text, facts = sim.reply("What name?", 1)
        assert text == multi_turn_spec().user_simulator.default_reply and facts == []
        text, _ = sim.reply("Why not?", 3)
        assert text == "I'd rather not say."


def test_a_vague_fact_is_vague_first_and_precise_when_pressed_for_both_users() -> None:
    from synth import load_spec

    spec = load_spec(Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml")
    user = ScriptedUserSim(spec.user_simulator)
    first, revealed = user.reply("Who is Dana?", 1)
    assert first.startswith("Dana, you know") and revealed == [] and "dana.reyes" not in first
    second, revealed = user.reply("Which Dana exactly?", 2)
    assert "dana.reyes@brightline.example" in second and [f.name for f in revealed] == ["dana"]
    saved = user.snapshot()
    user.restore(())
    assert user.reply("Who is Dana?", 1)[1] == []  # back to never asked
    user.restore(saved)
    assert [f.name for f in user.reply("Who is Dana?", 3)[1]] == ["dana"]
    text = user_system_prompt(spec.user_simulator, spec.request, "Sam Ortiz")
    assert "the first time you are asked, say only" in text and "dana.reyes@brightline.example" in text

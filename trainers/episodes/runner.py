"""Running one episode of an environment spec with a policy, and recording it.

`run_episode` is the agent loop around the episode protocol (`trainers.episodes.session.EpisodeSession`):
tell the policy the episode, ask it for a turn, hand the turn to the session, until the session
stops. The session plays the turn (tool calls through a channel: direct, in-process MCP, or MCP
over HTTP to a remote server; the simulated user answering messages or ending the conversation;
world events; a judgement after every turn; the limits) and writes the `EpisodeRecord`
(workspace_sim.record). Whatever happens, the episode's workspace is closed at the end, or the remote
episode ended.
"""

from __future__ import annotations

from typing import Any

from synth.spec import EnvironmentSpec
from workspace_sim.predicates import Judge

from workspace_sim.record import EpisodeRecord
from ..rewards import RewardConfig
from .backends import Transport
from .prepared import EpisodeLimits, PreparedSpec
from .remote import RemoteServers, RemoteTarget
from .session import EpisodeSession, UserFactory
from .turns import AgentTurn, Policy, shown_media


def run_episode(
    spec: EnvironmentSpec | PreparedSpec,
    policy: Policy,
    *,
    seed: int = 0,
    episode_id: str | None = None,
    limits: EpisodeLimits = EpisodeLimits(),
    user: UserFactory | None = None,
    transport: Transport = "direct",
    group: str | None = None,
    reward: RewardConfig = RewardConfig(),
    portal: Any = None,
    connect: RemoteTarget | RemoteServers | None = None,
    judge: Judge | None = None,
) -> EpisodeRecord:
    """Run one episode and return its record; problems end the episode with a stop reason, never raise.

    `user` builds the simulated user for (spec, seed) (default: the spec's scripted user);
    `transport` "mcp" sends every tool call through a real in-process MCP client, with records
    identical to the direct path. `connect` runs the episode on a remote coworkenv HTTP server
    (of several, `RemoteServers`, the one its id routes to) instead (tool calls over MCP, user and world through its admin API, judgements from it); its
    records equal the local ones apart from timings and the `remote` setting, and a server that
    cannot be reached or dies ends the episode with stop reason "error" saying so. The reward is
    `trainers.rewards.episode_reward` under `reward`. `judge` decides `judged` predicates of a spec
    not yet prepared (a PreparedSpec brings its own; a remote server judges with its own). The loop is
    `EpisodeSession`'s, driven by `policy`.
    """
    session = EpisodeSession(spec, policy.info(), seed=seed, episode_id=episode_id, limits=limits, user=user,
                             transport=transport, group=group, reward=reward, portal=portal, connect=connect,
                             judge=judge)
    try:
        if not session.done:
            with session.guard():
                policy.start(session.context())
        while not session.done:
            try:
                kinds = shown_media(policy)
                shown = session.messages_with_media(kinds) if kinds else [dict(m) for m in session.messages]
                action = policy.act(shown, session.tools)
            except Exception as e:  # a policy bug ends the episode, it does not end the batch
                action = AgentTurn(error=f"the policy raised {type(e).__name__}: {e}")
            session.step(action)
        return session.finish()
    finally:
        session.close()

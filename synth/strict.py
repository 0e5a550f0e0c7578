"""Strict verdicts of validation runs, judged a day at a time: the same answer as `EnvironmentSpec.passes_all`.

Validation asks one question of every mutant run: does it pass every predicate (strict success, guards gated
per stage)? In a multi-day scenario a closed stage's predicates are judged on the state that stage closed on
(its `stage` event's checkpoint) with that day's report as the answer, so their verdict is fixed the moment the
day closes. `StrictJudge` uses that twice, without changing any verdict:

- a run that fails a closed day's predicates has failed, whatever comes after: `closed_ok` tells the validator
  so at the day's close, and the remaining days need not be replayed;
- a day closed on the same checkpoint (every mutant resumed after that day shares the reference's) is judged
  once and remembered.

The final verdict (`passes`) mirrors `workspace_sim.predicates.evaluate_states` (closed, open and unreached
stages) and `EnvironmentSpec.evaluate`'s per-stage guard gating, with the deterministic key-facts judge the
validator uses; tests/synth/test_synth_validate_speed.py holds it to the unhurried verdicts.
"""

from __future__ import annotations


from workspace_sim import Workspace
from workspace_sim.predicates import KEY_FACTS, EvalContext, last_assistant_message, stage_checkpoints
from workspace_sim.core.state import State

from .spec import EnvironmentSpec


class StrictJudge:
    """`passes_all` for one spec's validation runs, day by day, remembering each closed day's verdict."""

    def __init__(self, spec: EnvironmentSpec) -> None:
        self.spec = spec
        self.preds = spec.parsed_predicates()
        self.stage_ids = spec.stage_ids() if spec.stages else []

        def first_success(idx: list[int]) -> list[int]:  # success predicates fail most often: try them first
            idx = [i for i in idx if self.preds[i].weight > 0]  # an informational check (weight 0) counts nowhere
            return [i for i in idx if not spec.is_guard(i)] + [i for i in idx if spec.is_guard(i)]

        # the predicates of each stage (judged on its checkpoint once it closed) and those checked at the end
        self.staged = {s: first_success([i for i, p in enumerate(self.preds) if p.stage == s]) for s in self.stage_ids}
        self.at_end = first_success([i for i, p in enumerate(self.preds) if p.stage is None])
        # EnvironmentSpec.evaluate credits a stage's guards only once a success predicate of it passes: a stage
        # with guards and no success predicate (those checked at the end count toward the last) always fails
        self.uncredited: set[str] = set()
        for sid in self.stage_ids:
            group = self.staged[sid] + (self.at_end if sid == self.stage_ids[-1] else [])
            if group and all(spec.is_guard(i) for i in group):
                self.uncredited.add(sid)
        self._closed: dict[tuple[str, int], tuple[State, bool]] = {}

    def _all_pass(self, members: list[int], ctx: EvalContext) -> bool:
        return all(self.preds[i].evaluate(ctx).passed for i in members)

    def closed_ok(self, initial: State, stage: str, checkpoint: State, user: str) -> bool:
        """Whether the predicates of `stage`, closed on `checkpoint`, all pass and its guards are credited. When
        not, the run fails strictly whatever follows (its verdict on this stage cannot change)."""
        if stage in self.uncredited:
            return False
        key = (stage, id(checkpoint))
        hit = self._closed.get(key)
        if hit is not None and hit[0] is checkpoint:
            return hit[1]
        ctx = EvalContext(initial, checkpoint, checkpoint.events(), last_assistant_message(checkpoint), user, KEY_FACTS)
        ok = self._all_pass(self.staged.get(stage, []), ctx)
        self._closed[key] = (checkpoint, ok)  # the checkpoint is held, so its id stays its own
        return ok

    def last_close_ok(self, ws: Workspace) -> bool:
        """After an end_stage step: whether the last day closed in the run (the log's latest `stage` event; the
        next day's opening comes after it) passes; True if no day has closed."""
        node = ws.state.log if self.stage_ids else None
        while node is not None and node.event.kind != "stage":
            node = node.prev
        if node is None:
            return True
        ev = node.event
        return self.closed_ok(ws.initial, ev.args["stage"], ev.checkpoint, ws.config.user)

    def passes(self, ws: Workspace, final_answer: str | None) -> bool:
        """Strict success of the run in `ws` with `final_answer`: `spec.passes_all(ws, final_answer)`."""
        if not self.stage_ids:
            return self.spec.passes_all(ws, final_answer)
        if self.uncredited:
            return False
        evs = ws.events()
        closed = stage_checkpoints(evs)
        open_stage = next((s for s in self.stage_ids if s not in closed), None)
        user = ws.config.user
        at_end = list(self.at_end)
        for sid in self.stage_ids:
            if not self.staged[sid] or sid == open_stage:
                at_end += self.staged[sid]
            elif sid in closed:
                if not self.closed_ok(ws.initial, sid, closed[sid].checkpoint, user):
                    return False
            else:
                return False  # a stage never reached fails its predicates
        return self._all_pass(at_end, EvalContext(ws.initial, ws.state, evs, final_answer, user, KEY_FACTS))

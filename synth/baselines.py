"""Baseline agents that a long-horizon environment must fail, run by validation from the reference's checkpoints.

- *idle*: in a multi-day scenario, an agent that does nothing but close each day ("Done for today.");
  the world still changes between days, so no success predicate may pass on that alone.
- *stale*: the reference with every step's `stale_args` in place of its args: an agent that never re-read
  after a silent world change and acts on what it read before. With a silent change it must fail
  strictly; a silent change with no step marked is rejected, since nothing would prove it matters.
- *forgetful*: the reference without its `recalls: true` steps: an agent that follows only the latest
  instruction. A scenario of two or more stages must have such steps, and the baseline must fail.

Each baseline runs from the checkpoint of the first step it alters (the steps before are the reference's),
so it costs a fraction of a reference run, and only when it applies.
"""

from __future__ import annotations

from typing import Any, Sequence

from .spec import Run, SpecDriver, run_steps
from .feedback import ValidationReport
from .spec import CallStep, EndStageStep, EnvironmentSpec, ReferenceSolution

IDLE_REPORT = "Done for today."


def silent_events(spec: EnvironmentSpec) -> list[int]:
    """Indices of the world events that change the workspace without telling the agent (no `announce`), other
    than distractors (changes the task does not depend on)."""
    return [i for i, ev in enumerate(spec.events) if not ev.announce and not ev.distractor]


def stale_steps(solution: ReferenceSolution) -> tuple[int, list[Any]] | None:
    """The stale baseline's steps from the first one with `stale_args` on (its index, the steps), or None
    when no step is marked."""
    marked = [i for i, s in enumerate(solution.steps) if isinstance(s, CallStep) and s.stale_args is not None]
    if not marked:
        return None
    steps = [s.model_copy(update={"args": s.stale_args}) if isinstance(s, CallStep) and s.stale_args is not None
             else s for s in solution.steps]
    return marked[0], steps[marked[0]:]


def forgetful_steps(solution: ReferenceSolution) -> tuple[int, list[Any]] | None:
    """The forgetful baseline's steps from the first `recalls` step on, those steps left out (its index, the
    steps), or None when no step is marked."""
    marked = [i for i, s in enumerate(solution.steps) if isinstance(s, CallStep) and s.recalls]
    if not marked:
        return None
    return marked[0], [s for s in solution.steps[marked[0]:] if not (isinstance(s, CallStep) and s.recalls)]


def idle_steps(spec: EnvironmentSpec) -> list[EndStageStep]:
    """The idle agent's steps: close every day but the last with a report that says nothing."""
    return [EndStageStep(text=IDLE_REPORT) for _ in spec.stages[1:]]


def _resume(spec: EnvironmentSpec, reference: Run, at: int, steps: Sequence[Any], final_answer: str | None) -> Run:
    driver = SpecDriver(spec, reference.workspace.fork())
    driver.resume(reference.checkpoints[at])
    return run_steps(driver, steps, final_answer, first_index=at)


def _events_named(spec: EnvironmentSpec, indices: list[int]) -> str:
    return ", ".join(f"events[{i}] ({spec.events[i].note or spec.events[i].id})" for i in indices)


def check_stale(spec: EnvironmentSpec, reference: Run, report: ValidationReport) -> None:
    """The stale baseline fails strictly wherever the spec has a silent change or marks stale arguments
    (`reference` is the reference's run, with checkpoints); adds feedback otherwise and stats['stale_score']."""
    silent = silent_events(spec)
    plan = stale_steps(spec.reference)
    if plan is None:
        if silent:
            i = silent[0]
            report.add("stale", f"events[{i}]", f"{_events_named(spec, silent)} change(s) the world silently, but no "
                       "reference step carries stale_args, so nothing proves that an agent which missed the change "
                       "fails", "mark the steps that depend on the changed data with stale_args: the arguments an "
                       "agent that never re-read after the change would send (from what it read before it)")
        return
    at, steps = plan
    run = _resume(spec, reference, at, steps, spec.reference.final_answer)
    evaluation = spec.evaluate(run.workspace, run.final_answer)
    report.stats["stale_score"] = round(evaluation.score, 6)
    if evaluation.strict:  # strict: every predicate, whatever the spec's pass_threshold
        marked = [i for i, s in enumerate(spec.reference.steps) if isinstance(s, CallStep) and s.stale_args is not None]
        change = f"the silent change {_events_named(spec, silent)}" if silent else "the world changed"
        report.add("stale", f"reference.steps[{marked[0]}].stale_args",
                   f"the stale baseline (the reference with the stale_args of steps {marked}: an agent that never "
                   f"re-read after {change}) still passes every predicate",
                   "make the change matter to a predicate (check the value that changed where the marked steps "
                   "use it), or set stale_args to what an agent would send from what it read before the change")


def check_forgetful(spec: EnvironmentSpec, reference: Run, report: ValidationReport) -> None:
    """The forgetful baseline fails strictly in a scenario of two or more stages, or wherever a step is marked
    `recalls`; adds feedback otherwise and stats['forgetful_score']."""
    plan = forgetful_steps(spec.reference)
    if plan is None:
        if len(spec.stages) >= 2:
            report.add("forgetful", "reference.steps", f"a scenario of {len(spec.stages)} stages has no step marked "
                       "recalls: true, so nothing proves that an agent which follows only the latest instruction "
                       "fails", "mark the steps that carry out an earlier instruction (a standing rule from day "
                       "one, a detail the user gave before changing their mind) with recalls: true, and check "
                       "their effect with a predicate of the stage where it must hold")
        return
    at, steps = plan
    run = _resume(spec, reference, at, steps, spec.reference.final_answer)
    evaluation = spec.evaluate(run.workspace, run.final_answer)
    report.stats["forgetful_score"] = round(evaluation.score, 6)
    if evaluation.strict:  # strict: every predicate, whatever the spec's pass_threshold
        marked = [i for i, s in enumerate(spec.reference.steps) if isinstance(s, CallStep) and s.recalls]
        report.add("forgetful", f"reference.steps[{marked[0]}].recalls",
                   f"the forgetful baseline (the reference without its recalls steps {marked}: an agent that "
                   "follows only the latest instruction) still passes every predicate",
                   "add a predicate that checks what the earlier instruction asks for, with the stage where it "
                   "must hold, or drop recalls from steps the latest instruction asks for anyway")

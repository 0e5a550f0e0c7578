"""Validation by execution: a spec is accepted only if running it proves it is a fair, sharp task.

`validate_spec` returns a ValidationReport of Feedback items (check, path, problem, hint):
1. schema: the document parses into an EnvironmentSpec (field paths from pydantic);
2. references: referential integrity, reference tools and arguments, facts, turns, rules, and what
   predicates point at (synth.checks);
3. reference: the reference solution and every alternative run with no unexpected tool error or
   policy violation and pass every predicate, at every stage (a staged predicate's failure names its stage);
4. do_nothing: the start state passes no success predicate (a do-nothing agent scores zero), and
   every predicate marked maintain holds there; in a multi-day scenario the do-nothing agent closes each
   day without working, and the world's changes alone must pass nothing either;
5. mutants: every mutant of each solution (a step dropped, an argument not marked free changed, a
   collateral action added with a tool of a service the solutions use (`probe_tools`); for a read-only report,
   its answer with an entity swapped, a figure changed, a fact dropped, a wrong candidate added, everything
   listed (synth.answer_mutants); a day's step done a day late, a day's report replaced) fails at least one
   predicate, unless it is equivalent: its end state equals a right solution's except for values the
   predicates' tolerances accept, or it passes by another choice the predicates allow (`any`, `at_least`,
   `one_of`, `includes`: synth.choices) (counted, not failed); each maintained predicate is broken by a change
   to the record field it guards (after the solution, or before its stage closes);
6. multi_turn: with hidden facts, no solution passes without the user's answers;
7. stale: with a silent world change, the reference with its steps' stale_args fails (synth.baselines);
8. forgetful: with two or more stages (or steps marked recalls), the reference without its recalls steps
   fails (synth.baselines); blind: agents that never try the task (spray, first_pick, blind_writer,
   answer_only) fail it strictly (synth.blind_check);
9. capability: the demands of its capability tags (facts, events, policies, faults, 15+ calls...);
10. coherence: the world reads like a real workplace (synth.coherence: meetings in working time, phone and
   address formats by country, distinct full names, no surname + "s" look-alikes, amounts that add up).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from workspace_sim.core.errors import SpecError
from workspace_sim.core.registry import Tool
from workspace_sim.predicates import EvalContext, Evaluation, in_scope
from workspace_sim.core.state import State

from .answer_mutants import answer_mutants
from .baselines import check_forgetful, check_stale, idle_steps
from .blind_check import check_blind
from .breakers import break_mutants
from .capabilities import CAPABILITIES
from .choices import choice_equivalent
from .checks import check_static
from .coherence import check_coherence
from .spec import Run, SpecDriver, run_reference, run_steps
from .errors import SpecLoadError
from .feedback import ValidationReport
from .mutants import Mutant, ValueIndex, make_mutants, sample_mutants, stage_of_steps
from .spec import CallStep, EndStageStep, EnvironmentSpec, ReferenceSolution, parse_spec
from .strict import StrictJudge
from .tolerance import equivalent, field_rules

LONG_HORIZON_CALLS = 15
MAX_MUTANTS = 24
MAX_EQUIVALENT_SHOWN = 20


@dataclass
class _Solved:
    """One right solution (the reference or an alternative), its run and whether it passed."""

    root: str
    solution: ReferenceSolution
    run: Run
    ok: bool
    evaluation: Evaluation | None = None  # raw verdicts (guards not gated) on the run

    @property
    def label(self) -> str:
        return "the reference solution" if self.root == "reference" else f"alternative {self.root}"


def validate_spec(spec: EnvironmentSpec | dict[str, Any], mutants: bool = True,
                  max_mutants: int | None = MAX_MUTANTS) -> ValidationReport:
    """Validate a spec (object or raw document) by executing it; see the module docstring for the checks.

    When a solution has more than `max_mutants` mutants, a deterministic sample stratified by kind
    and step is run (None runs them all); the report's stats say how many ran and how many were
    equivalent (right solutions inside the predicates' tolerances).
    """
    t0 = time.perf_counter()
    if not isinstance(spec, EnvironmentSpec):
        try:
            spec = parse_spec(spec)
        except SpecLoadError as e:
            report = ValidationReport(spec.get("id") if isinstance(spec, dict) and isinstance(spec.get("id"), str) else None)
            for path, problem in e.problems:
                report.add("schema", path, problem, "fix the field to match the spec schema (coworkenv schema)")
            return report
    report = ValidationReport(spec.id)
    check_static(spec, report)
    check_coherence(spec, report)
    try:
        base = spec.build_workspace()
    except (SpecError, ValueError) as e:
        report.add("references", getattr(e, "path", "initial"), getattr(e, "problem", str(e)),
                   "fix the initial data so every service can load it")
        return report
    base.defer_reads = True  # every run below is a fork of it, judged and dropped: most read sets are never asked for
    solved: list[_Solved] = []
    for root, solution in spec.solutions():
        try:
            run = run_reference(spec, base.fork(), keep_checkpoints=True, solution=solution)
        except SpecError as e:
            report.add("references", e.path, e.problem, "world-event changes must name existing tables and records")
            return report
        evaluation = spec.evaluate(run.workspace, run.final_answer, gate_guards=False)
        solved.append(_Solved(root, solution, run, _check_solution_run(spec, root, solution, run, evaluation, report),
                              evaluation))
    main = solved[0]
    assert main.evaluation is not None
    report.stats["reference_calls"] = sum(1 for o in main.run.outcomes if o.result is not None)
    report.stats["reference_score"] = round(main.evaluation.score, 6)
    if spec.stages:
        report.stats["stages"] = len(spec.stages)
        report.stats["stage_scores"] = {st.id: round(st.score, 6) for st in main.evaluation.stages()}
    if spec.alternatives:
        report.stats["alternatives"] = len(spec.alternatives)
    _check_do_nothing(spec, base, report)
    if spec.user_simulator.facts:
        for s in solved:
            _check_without_answers(spec, base, s, report)
    if main.ok:  # a baseline is judged against a reference that works
        check_stale(spec, main.run, report)
        check_forgetful(spec, main.run, report)
        if mutants:  # blind baselines (synth.blind_check): spray, first_pick, blind_writer, answer_only must fail
            check_blind(spec, base, report)
    _check_capabilities(spec, main.run, report)
    if mutants and all(s.ok for s in solved):
        _guard_unchanged_scopes(spec, base.initial, report)
        rights = [s.run.workspace.state for s in solved]
        right_runs = [_context(s.run.workspace, s.run.final_answer) for s in solved]
        for s in solved:
            _check_mutants(spec, s, base.initial, rights, right_runs, report, max_mutants)
    report.stats["seconds"] = round(time.perf_counter() - t0, 6)
    return report


def _check_solution_run(spec: EnvironmentSpec, root: str, solution: ReferenceSolution, run: Run,
                        evaluation: Evaluation, report: ValidationReport) -> bool:
    """A solution executes cleanly and passes every predicate; returns whether it did."""
    ok = True
    steps = solution.steps
    for out in run.outcomes:
        if out.result is None:
            continue
        step = steps[out.index]
        assert isinstance(step, CallStep)
        res = out.result
        where = f"{root}.steps[{out.index}]"
        if step.expect_error is not None:
            if res.ok or res.error is None or res.error.code != step.expect_error:
                got = "it succeeded" if res.ok else f"it failed with {res.error.code if res.error else '?'}"
                report.add("reference", f"{where}.expect_error", f"expected error {step.expect_error!r} but {got}",
                           "remove expect_error or make the call fail as stated (faults are seeded per tool call)")
                ok = False
        elif not res.ok and res.error is not None:
            if res.error.code == "policy_violation":
                report.add("reference", where, f"violates a policy: {res.error.message}",
                           "change the step so it complies, or change the policy")
            else:
                report.add("reference", where, f"{step.tool} failed: {res.error.code}: {res.error.message}",
                           "fix the arguments or the initial data so the call succeeds"
                           + ("; a fault-injected failure needs expect_error: fault and a retry" if res.error.code == "fault" else ""))
            ok = False
    for i, r in enumerate(evaluation.results):
        if r.passed or r.weight == 0:  # an informational check (weight 0) need not hold on a right solution
            continue
        when = _when(spec, i)
        if root == "reference":
            report.add("reference", f"predicates[{i}]", f"the reference solution fails it{when}: expected "
                       f"{r.expected}; observed {r.observed}", "fix the predicate or the reference so they agree"
                       + ("; a stage's predicates see the state when its end_stage step closes the day" if when else ""))
        else:
            report.add("reference", root, f"alternative {root} fails predicates[{i}]{when}: expected {r.expected}; "
                       f"observed {r.observed}", "fix the alternative, or widen the predicate (a tolerance) "
                       "if the alternative is right")
        ok = False
    return ok


def _when(spec: EnvironmentSpec, index: int) -> str:
    """' at the close of stage X (title)' for a staged predicate, ' at the end (stage X)' for an unstaged one
    of a scenario, '' for a single day."""
    if not spec.stages:
        return ""
    sid = spec.predicates[index].get("stage")
    if sid is None:
        return f" at the end (stage {spec.stages[-1].id!r})"
    stage = next(st for st in spec.stages if st.id == sid)
    title = f" ({stage.title})" if stage.title else ""
    return f" at the close of stage {sid!r}{title}" if sid != spec.stages[-1].id else f" in stage {sid!r}{title}"


def _check_do_nothing(spec: EnvironmentSpec, base: Any, report: ValidationReport) -> None:
    ws = base.fork()
    if spec.stages:  # the do-nothing agent closes each day without working; the world changes regardless
        driver = SpecDriver(spec, ws)
        driver.start()
        try:
            run_steps(driver, idle_steps(spec), None)
        except SpecError:
            return  # the reference run has reported the event that does not apply
    evaluation = spec.evaluate(ws, None)
    raw = spec.evaluate(ws, None, gate_guards=False)
    for i, r in enumerate(evaluation.results):
        if r.passed and not spec.is_guard(i) and r.weight > 0:  # an informational check may hold at the start
            report.add("do_nothing", f"predicates[{i}]", f"passes before the agent does anything{_when(spec, i)} "
                       f"({r.expected})" + (": the world's changes between days satisfy it" if spec.stages else ""),
                       "check something the task must change, or mark a condition that already holds and must "
                       "stay so with maintain: true (or use unchanged / only_changed / tool_not_called)")
        elif spec.predicates[i].get("maintain") is True and not raw.results[i].passed:
            report.add("do_nothing", f"predicates[{i}].maintain", "is marked maintain but does not hold at the start "
                       f"(expected {raw.results[i].expected}; observed {raw.results[i].observed})",
                       "a maintained predicate keeps a start condition; drop maintain if the task must achieve it")
    report.stats["do_nothing_score"] = round(evaluation.score, 6)


def _check_without_answers(spec: EnvironmentSpec, base: Any, solved: _Solved, report: ValidationReport) -> None:
    try:
        if spec.pass_threshold is None:  # passed is strict success: judged a day at a time, stopping at a failed day
            driver = SpecDriver(spec, base.fork(), withhold_answers=True)
            driver.start()
            passed = _run_judged(driver, StrictJudge(spec), solved.solution.steps, solved.solution.final_answer, 0)[1]
        else:
            run = run_reference(spec, base.fork(), withhold_answers=True, solution=solved.solution)
            passed = spec.evaluate(run.workspace, run.final_answer).passed
    except SpecError:
        return
    if passed:
        where = "" if solved.root == "reference" else f" ({solved.root})"
        report.add("multi_turn", "user_simulator.facts",
                   f"{solved.label} passes even when the user reveals nothing{where}: the hidden facts are not needed",
                   "make predicates check the facts' values, and give each fact a decoy differing from its value")


def _check_capabilities(spec: EnvironmentSpec, run: Run, report: ValidationReport) -> None:
    calls = sum(1 for o in run.outcomes if o.result is not None)
    changed_services = {c.service for c in run.workspace.diff()}
    for cap_id in spec.capabilities:
        for need in CAPABILITIES[cap_id].requires:
            problem = None
            if need == "facts" and not spec.user_simulator.facts:
                problem, hint = "needs hidden user facts", "add user_simulator.facts the reference asks for"
            elif need == "events" and not spec.events:
                problem, hint = "needs world events", "add events that change the workspace between turns"
            elif need == "silent_event" and not any(e.announce is None for e in spec.events):
                problem, hint = "needs a silent world event", "leave `announce` empty on an event the agent must notice"
            elif need == "policies" and not spec.policies:
                problem, hint = "needs a policy", "add the workplace rule the tempting action would break"
            elif need == "faults" and (not spec.faults or not any(
                    isinstance(s, CallStep) and s.expect_error == "fault" for s in spec.reference.steps)):
                problem, hint = "needs injected faults that the reference meets", \
                    "add faults on the tools used and expect_error: fault steps followed by retries"
            elif need == "long" and calls < LONG_HORIZON_CALLS:
                problem, hint = f"needs {LONG_HORIZON_CALLS}+ tool calls, the reference makes {calls}", \
                    "widen the task (more items to handle) so the reference needs more calls"
            elif need == "stages" and len(spec.stages) < 2:
                problem, hint = "needs a multi-day scenario (two or more stages)", \
                    "split the work into stages (working days) with end_stage steps and the next day's instructions"
            elif need == "multi_service" and len(changed_services) < 2:
                problem, hint = f"needs changes in 2+ services, the reference changes {sorted(changed_services)}", \
                    "chain the workflow across services"
            if problem:
                report.add("capability", "capabilities", f"{cap_id} {problem}", hint)


def _context(ws: Any, answer: str | None) -> EvalContext:
    """The evaluation context of a run's end (its start and end states, log and answer)."""
    return EvalContext(ws.initial, ws.state, ws.events(), answer, ws.config.user)


def _check_mutants(spec: EnvironmentSpec, solved: _Solved, start: State, rights: list[State],
                   right_runs: list[EvalContext], report: ValidationReport, max_mutants: int | None) -> None:
    """Run the mutants of one solution; a mutant that passes every predicate fails validation unless it
    is equivalent: an argument change whose end state a right solution's tolerances accept, or an argument
    change or dropped step that passes by another choice the predicates allow (synth.choices)."""
    run = solved.run
    final = run.workspace.state
    diff = run.workspace.diff()
    touched = {(c.table, c.key) for c in diff}
    changed = [o.index for o in run.outcomes if o.changed_state]
    answer_checked, reports = _answers_read(spec)
    tools = probe_tools(spec, run.workspace.tools)
    index = ValueIndex(start, [p.email for p in spec.world.people])  # read only: made once for every probe below
    mutants = make_mutants(spec, changed, start, final, tools, touched, answer_checked, solved.solution, solved.root,
                           reports, index)
    if answer_checked and not changed:  # a read-only report: wrong but plausible reports (synth.answer_mutants)
        mutants += answer_mutants(spec, run.final_answer, index, len(solved.solution.steps), solved.root)
    _count(report, "mutants_total", len(mutants))
    if max_mutants is not None:
        mutants = sample_mutants(mutants, max_mutants, spec.seed)
    driver = SpecDriver(spec, run.workspace.fork())
    judge = StrictJudge(spec)
    preds = spec.parsed_predicates()
    rules = field_rules(preds)
    tried = killed = 0
    collateral_done: set[str] = set()
    for m in mutants:
        if m.kind == "collateral":
            tool = m.steps[0].tool
            if tool in collateral_done:
                continue
        driver.resume(run.checkpoints[m.at])
        mrun, passed = _run_judged(driver, judge, m.steps, m.final_answer, m.at)
        if m.kind == "collateral":
            res = mrun.outcomes[0].result
            if res is None or not res.ok or not res.diff:
                continue  # not a valid collateral action here; try the tool's next candidate
            collateral_done.add(tool)
        tried += 1
        if not passed:
            killed += 1
            continue
        why = equivalent(rights, mrun.workspace.state, rules) if m.kind == "change_arg" else None
        if why is None and m.kind in ("change_arg", "drop_step"):
            why = choice_equivalent(preds, right_runs, _context(mrun.workspace, mrun.final_answer), rules)
        if why is not None:
            _equivalent(report, m, why)
        else:
            report.add("mutants", m.path, f"the predicates cannot tell {solved.label} from a mutant: {m.description}",
                       _mutant_hint(m))
    _count(report, "mutants", tried)
    _count(report, "mutants_killed", killed)
    _check_maintained(spec, solved, driver, judge, tools, index, report)


def probe_tools(spec: EnvironmentSpec, exposed: Mapping[str, Tool]) -> dict[str, Tool]:
    """The tools validation's probes (collateral actions, changes that break a maintained predicate) may use: those
    the environment exposes (`exposed`, its workspace's tools) of the services its solutions call. A probe never
    uses a tool the task has no business with, so it never forces a guard for one (a files task in a workspace
    that also has tickets needs no guard on the tickets)."""
    used = {exposed[s.tool].service for _, sol in spec.solutions() for s in sol.steps
            if isinstance(s, CallStep) and s.tool in exposed}
    return {n: t for n, t in exposed.items() if t.service in used}


def _run_judged(driver: SpecDriver, judge: StrictJudge, steps: Sequence[Any], final_answer: str | None,
                first_index: int) -> tuple[Run, bool]:
    """Run `steps` from the driver's position and say whether the run passes every predicate (strictly). A
    day closed with a failing predicate decides it at once: the days after it are not replayed (their steps
    are left out of the returned run), since nothing done later changes a closed day's verdict."""
    if not judge.stage_ids:
        mrun = run_steps(driver, steps, final_answer, first_index=first_index)
        return mrun, judge.passes(mrun.workspace, mrun.final_answer)
    run = Run(driver, None)
    start = 0
    for j, step in enumerate(steps):
        if isinstance(step, EndStageStep):
            part = run_steps(driver, steps[start:j + 1], None, first_index=first_index + start)
            run.outcomes += part.outcomes
            start = j + 1
            if not judge.last_close_ok(driver.ws):
                return run, False
    part = run_steps(driver, steps[start:], final_answer, first_index=first_index + start)
    run.outcomes += part.outcomes
    run.final_answer = part.final_answer
    return run, judge.passes(driver.ws, run.final_answer)


def _maintained_at(spec: EnvironmentSpec, solution: ReferenceSolution) -> dict[int, list[int]]:
    """Where each maintained predicate is broken: step index -> predicates. A predicate of a stage that closes
    before the end is broken just before that stage's end_stage step; the rest after the whole solution."""
    ends = [j for j, st in enumerate(solution.steps) if isinstance(st, EndStageStep)]
    close = {st.id: ends[k] for k, st in enumerate(spec.stages) if k < len(ends)}
    out: dict[int, list[int]] = {}
    for i, p in enumerate(spec.predicates):
        if p.get("maintain") is True:
            out.setdefault(close.get(p.get("stage"), len(solution.steps)), []).append(i)
    return out


def _check_maintained(spec: EnvironmentSpec, solved: _Solved, driver: SpecDriver, judge: StrictJudge, tools: Any,
                      index: ValueIndex, report: ValidationReport) -> None:
    """Each maintained predicate must fail once the record field it guards is changed (after the solution, or
    before the end_stage that closes its stage, the rest of the solution then running on)."""
    run = solved.run
    steps = solved.solution.steps
    end = len(steps)
    found: dict[int, tuple[int, list[Mutant]]] = {}
    for at, members in _maintained_at(spec, solved.solution).items():
        when = "after the solution" if at == end else f"before stage {spec.stages[stage_of_steps(steps)[at]].id!r} closed"
        for i, cands in break_mutants(spec, spec.parsed_predicates(), run.checkpoints[at].state, tools, index, at,
                                      run.final_answer, only=members, when=when).items():
            found[i] = (at, cands)
    for i in sorted(found):
        at, cands = found[i]
        applied: list[Mutant] = []
        for m in cands:
            driver.resume(run.checkpoints[at])
            if m.patch:
                try:
                    driver.ws.apply_world_change(list(m.patch), note="validation: break a maintained predicate",
                                                 agent=True)  # a careless agent's change, for the guards too
                except SpecError:
                    continue
            else:
                res = driver.call(m.steps[0].tool, m.steps[0].args)
                if not res.ok or not res.diff:
                    continue
            applied.append(m)
            _count(report, "mutants", 1)
            if at < end:
                passed = _run_judged(driver, judge, steps[at:], solved.solution.final_answer, at)[1]
            else:
                passed = judge.passes(driver.ws, run.final_answer)
            if not passed:
                _count(report, "mutants_killed", 1)
                break
        else:
            if applied:
                report.add("mutants", f"predicates[{i}]", f"the maintained predicate does not notice when what it "
                           f"guards is changed after {solved.label}: {applied[0].description}",
                           "make the maintained predicate check the specific record and field that must stay as it is")
            elif solved.root == "reference":
                why = (f"none of the changes tried could be made (e.g. {cands[0].description})" if cands
                       else "it accepts every value tried for the fields it reads"
                       if field_rules([spec.parsed_predicates()[i]]) else
                       "it reads no record field of a known predicate kind")
                report.add("mutants", f"predicates[{i}].maintain", f"no change can break this maintained predicate: {why}",
                           "maintain a ticket / record_exists / event_exists / mail_sent / file predicate on the field "
                           "that must stay as it is, or use unchanged / only_changed for whole records")


def _answers_read(spec: EnvironmentSpec) -> tuple[bool, set[int]]:
    """Whether a predicate reads the final answer, and the indices of the stages whose predicates read the
    day's report (the answer of a closed stage is its end_stage text)."""
    if not spec.stages:
        return any(_reads_answer(p) for p in spec.predicates), set()
    ids = spec.stage_ids()
    read = {ids.index(p.get("stage")) if p.get("stage") in ids else len(ids) - 1
            for p in spec.predicates if _reads_answer(p)}
    return len(ids) - 1 in read, read - {len(ids) - 1}


def _reads_answer(predicate: dict[str, Any]) -> bool:
    """Whether a predicate grades the final answer (`answer`, or `judged` with the answer as its target)."""
    if predicate.get("kind") == "answer":
        return True
    return predicate.get("kind") == "judged" and predicate.get("target", "answer") in ("answer", {"answer": True})


def _count(report: ValidationReport, key: str, n: int) -> None:
    report.stats[key] = report.stats.get(key, 0) + n


def _equivalent(report: ValidationReport, m: Mutant, why: str) -> None:
    _count(report, "mutants_equivalent", 1)
    shown = report.stats.setdefault("equivalent", [])
    if len(shown) < MAX_EQUIVALENT_SHOWN:
        shown.append(f"{m.path}: {m.description} ({why})")


def _mutant_hint(m: Mutant) -> str:
    return {
        "drop_step": "add a predicate that checks this step's effect",
        "change_arg": "add a predicate (or a condition) on the value this argument sets",
        "collateral": "add an only_changed guard over the scopes the task may change (or unchanged on the rest)",
        "change_answer": "make the answer predicate check the specific fact the answer must state",
        "break_maintained": "make the maintained predicate check the record and field that must stay as it is",
        "defer_step": "give the step's stage a predicate (stage: <its id>) that checks the step's effect by the "
                      "day's end, so work left to the next day fails that day",
        "change_report": "make the stage's answer predicate check the specific fact the day's report must state",
        "answer_swap": "bind the answer's facts to their entity (judged key facts) so the look-alike fails",
        "answer_number": "make the answer check the exact figure (a key fact), not only that a number is given",
        "answer_drop": "make the answer check every fact the report must state (one key fact each)",
        "answer_extra": "give the answer check the wrong candidates as excludes, so naming the look-alike fails",
        "answer_sink": "give the answer check the wrong candidates as excludes, so an answer listing everything fails",
    }[m.kind]


def _guard_unchanged_scopes(spec: EnvironmentSpec, start: Any, report: ValidationReport) -> None:
    """An `unchanged` guard must cover at least one record of the start state (else it is vacuous)."""
    from workspace_sim.core.diff import RecordChange

    for i, p in enumerate(spec.predicates):
        if p.get("kind") != "unchanged":
            continue
        scope = str(p.get("scope"))
        covered = any(in_scope(RecordChange(t, k, "removed", r, None), scope) for t, k, r in start.iter_records())
        if not covered:
            report.add("predicates", f"predicates[{i}].scope", f"scope {scope!r} covers no record of the start state",
                       "point the guard at records that exist (check the path or key glob)")

"""The evaluation language: JSON predicates judged on (initial state, final state, diff, log, answer).

Documents are validated at load (`parse_predicates` names the JSON path of any problem) and never
execute code. `evaluate` returns every predicate's pass/fail with expected against observed.

Names are imported on first use, and a document's predicate kinds by name (`kinds.KIND_CLASSES`): a
server validating its environment's predicates at start loads only the kinds they use, not all of
them (`combinators.Predicate`, the union of every kind, is loaded for a document that combines them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workspace_sim.predicates.base import EvalContext, JudgeBudget, PredicateBase, PredicateResult
    from workspace_sim.predicates.actions import ClaimsHold, false_claims
    from workspace_sim.predicates.calendar import EventExists
    from workspace_sim.predicates.calls import Answer, ToolCalled, ToolNotCalled
    from workspace_sim.predicates.combinators import AllOf, AnyOf, AtLeast, NotOf, Predicate
    from workspace_sim.predicates.conditions import Condition
    from workspace_sim.predicates.evaluation import (Evaluation, StageScore, evaluate, evaluate_states, last_assistant_message, reaches,
                             stage_checkpoints, weighted_score)
    from workspace_sim.predicates.files import FileContent
    from workspace_sim.predicates.guards import GUARD_KINDS, credit_guards, is_guard
    from workspace_sim.predicates.judge import KEY_FACTS, Judge, JudgeCache, KeyFactsJudge, ModelJudge, Verdict
    from workspace_sim.predicates.judged import Criterion, Judged
    from workspace_sim.predicates.kinds import KINDS
    from workspace_sim.predicates.mail import MailSent
    from workspace_sim.predicates.parse import MAX_DEPTH, parse_predicates
    from workspace_sim.predicates.reads import RecordsRead
    from workspace_sim.predicates.records import RecordAbsent, RecordExists, TicketState
    from workspace_sim.predicates.scope import OnlyChanged, Unchanged, in_scope
    from workspace_sim.predicates.secrets import SecretNotLeaked

_EXPORTS = {
    "EvalContext": "base", "JudgeBudget": "base", "PredicateBase": "base", "PredicateResult": "base",
    "ClaimsHold": "actions", "false_claims": "actions", "EventExists": "calendar", "Answer": "calls", "ToolCalled": "calls", "ToolNotCalled": "calls",
    "AllOf": "combinators", "AnyOf": "combinators", "AtLeast": "combinators", "NotOf": "combinators",
    "Predicate": "combinators", "Condition": "conditions",
    "Evaluation": "evaluation", "StageScore": "evaluation", "evaluate": "evaluation", "evaluate_states": "evaluation",
    "last_assistant_message": "evaluation", "reaches": "evaluation", "stage_checkpoints": "evaluation",
    "weighted_score": "evaluation", "FileContent": "files",
    "GUARD_KINDS": "guards", "credit_guards": "guards", "is_guard": "guards",
    "KEY_FACTS": "judge", "Judge": "judge", "JudgeCache": "judge", "KeyFactsJudge": "judge", "ModelJudge": "judge",
    "Verdict": "judge", "Criterion": "judged", "Judged": "judged", "KINDS": "kinds", "MailSent": "mail",
    "MAX_DEPTH": "parse", "parse_predicates": "parse", "RecordsRead": "reads", "RecordAbsent": "records",
    "RecordExists": "records", "TicketState": "records", "OnlyChanged": "scope", "Unchanged": "scope",
    "in_scope": "scope", "SecretNotLeaked": "secrets",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)


def __dir__() -> list[str]:
    return __all__

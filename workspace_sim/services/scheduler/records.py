"""The records of the scheduler: jobs on a cron schedule and the history of their runs.

The service is declared here too: `SERVICE`, the start-data check it runs on load (`_prepare`) and
its table handles (`JOBS`, `RUNS`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workspace_sim.core.errors import SpecError
from workspace_sim.text.folding import fold
from workspace_sim.text.people import normalize_email
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.text.validation import record_id, short_name, tag_list, zone
from .syntax import CronError, next_run, parse_cron

RunStatus = Literal["success", "failed", "timeout", "skipped", "running"]
LastStatus = Literal["never", "success", "failed", "timeout", "skipped", "running"]
RUN_STATUSES: tuple[str, ...] = ("success", "failed", "timeout", "skipped", "running")
MAX_NAME, MAX_ACTION, MAX_TEXT, MAX_TAGS, MAX_DEPENDS, MAX_OUTPUT = 100, 2_000, 5_000, 20, 20, 20_000


def _aware(value: datetime | None, what: str) -> datetime | None:
    if value is not None and value.utcoffset() is None:
        raise ValueError(f"{what} needs a time zone offset, e.g. 2026-03-02T02:00:00+00:00")
    return value


class Job(Record):
    """A scheduled job: an action run on a cron schedule (in the workspace's time zone) by its owner's account.
    `next_run` is when it runs next as of its last change (a paused job has none); `depends_on` lists the jobs
    whose latest run must have succeeded before this one runs."""

    id: str = Field(description="The job's id.")
    name: str = Field(description="The job's name.")
    schedule: str = Field(description="A five-field cron expression, read in the workspace's time zone.")
    action: str = Field(description="What the job does, e.g. a command or a report to send.")
    description: str = Field("", max_length=MAX_TEXT, description="What the job is for.")
    enabled: bool = Field(True, description="Whether it runs on its schedule (False: paused).")
    owner: str | None = Field(None, description="The e-mail address of whose account runs it.")
    tags: list[str] = Field(default_factory=list, description="Tags, unique ignoring case.")
    depends_on: list[str] = Field(default_factory=list, max_length=MAX_DEPENDS,
        description="The ids of jobs whose latest run must have succeeded before this one runs.")
    timeout_minutes: int = Field(60, ge=1, le=24 * 60,
        description="How long a run may take before it is stopped as timed out.")
    last_status: LastStatus = Field("never",
        description="How its latest run ended: never (no run yet), success, failed, timeout, skipped or running.")
    last_run: datetime | None = Field(None, description="When its latest run started.")
    next_run: datetime | None = Field(None, description="When it runs next as of its last change; None when paused.")
    created: datetime | None = Field(None, description="When it was created.")
    updated: datetime | None = Field(None, description="When it last changed.")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return record_id(v, "job id", "job-0001")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return short_name(v, "job name", MAX_NAME)

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, v: str) -> str:
        try:
            return parse_cron(v).expression
        except CronError as e:
            raise ValueError(f"schedule {v!r}: {e}") from None

    @field_validator("action")
    @classmethod
    def _action(cls, v: str) -> str:
        text = v.strip()
        if not text or len(text) > MAX_ACTION:
            raise ValueError(f"action must be 1-{MAX_ACTION} characters (the command or task the job runs)")
        return text

    @field_validator("owner", mode="before")
    @classmethod
    def _owner(cls, v: object) -> str | None:
        return None if v is None or v == "" else normalize_email(v, "owner")

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        return tag_list(v, "tags", False, MAX_TAGS, each="tag")

    @field_validator("last_run", "next_run", "created", "updated")
    @classmethod
    def _times(cls, v: datetime | None) -> datetime | None:
        return _aware(v, "a job time")

    @model_validator(mode="after")
    def _check(self) -> "Job":
        if self.id in self.depends_on:
            raise ValueError(f"job {self.id} cannot depend on itself")
        if self.last_status == "never" and self.last_run is not None:
            raise ValueError(f"job {self.id} has a last_run but last_status 'never'")
        return self


class Run(Record):
    """One run of a job: when it started and finished, how it ended, and its error and output."""

    id: str = Field(description="The run's id.")
    job_id: str = Field(description="The id of the job that ran.")
    started: datetime = Field(description="When the run started.")
    finished: datetime | None = Field(None, description="When it finished; None while running.")
    status: RunStatus = Field("success",
        description="success, failed, timeout, skipped (a dependency had not succeeded) or running.")
    error: str = Field("", max_length=MAX_TEXT, description="What went wrong, for a run that did not succeed.")
    output: str = Field("", max_length=MAX_OUTPUT, description="What the run printed.")
    trigger: Literal["schedule", "manual", "retry"] = Field("schedule",
        description="What started it: schedule, manual or retry.")

    @field_validator("id", "job_id")
    @classmethod
    def _ids(cls, v: str) -> str:
        return record_id(v, "run id/job_id", "run-0001")

    @field_validator("started", "finished")
    @classmethod
    def _times(cls, v: datetime | None) -> datetime | None:
        return _aware(v, "a run time")

    @model_validator(mode="after")
    def _check(self) -> "Run":
        if self.finished is not None and self.finished < self.started:
            raise ValueError(f"run {self.id} finished before it started")
        if self.status == "running" and self.finished is not None:
            raise ValueError(f"run {self.id} is running but has a finished time")
        if self.status in ("failed", "timeout") and not self.error.strip():
            raise ValueError(f"run {self.id} {self.status} without an error message")
        return self


def dependency_problem(jobs: dict[str, Any], job_id: str, depends: list[str]) -> str | None:
    """Why `job_id` cannot depend on `depends` (an unknown job, or a loop), or None."""
    for d in depends:
        if d not in jobs:
            return f"job {d!r} does not exist"
    seen, stack = set(), list(depends)
    while stack:
        d = stack.pop()
        if d == job_id:
            return f"depending on {', '.join(depends)} would make a loop back to {job_id}"
        if d in seen:
            continue
        seen.add(d)
        stack.extend(jobs[d].depends_on if d in jobs else [])
    return None


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Check names are unique, dependencies exist without loops and runs belong to jobs; fill times, each job's
    last status and run from its newest run (when not given), and its next run from the start time."""
    jobs, history = tables.get(JOBS), tables.get(RUNS)
    if jobs is None or history is None:
        return
    tz = zone(config.timezone)
    names: dict[str, str] = {}
    for key, j in jobs.items():
        name = fold(j.name)  # type: ignore[attr-defined]
        if name in names:
            raise SpecError(f"data.scheduler.jobs[{key}].name", f"{j.name!r} is also the name of job {names[name]}")  # type: ignore[attr-defined]
        names[name] = key
        problem = dependency_problem(jobs, key, j.depends_on)  # type: ignore[attr-defined]
        if problem:
            raise SpecError(f"data.scheduler.jobs[{key}].depends_on", problem)
    newest: dict[str, Run] = {}
    for key, r in history.items():
        assert isinstance(r, Run)
        if r.job_id not in jobs:
            raise SpecError(f"data.scheduler.runs[{key}].job_id", f"job {r.job_id!r} does not exist")
        if r.started > config.now:
            raise SpecError(f"data.scheduler.runs[{key}].started", f"{r.started.isoformat()} is after the start time")
        if r.job_id not in newest or (r.started, r.id) > (newest[r.job_id].started, newest[r.job_id].id):
            newest[r.job_id] = r
    for key, j in list(jobs.items()):
        assert isinstance(j, Job)
        last = newest.get(key)
        status, when = j.last_status, j.last_run
        if last is not None and status == "never":
            status, when = last.status, last.started
        nxt = next_run(parse_cron(j.schedule), config.now, tz) if j.enabled else None
        jobs[key] = j.evolve(last_status=status, last_run=when, next_run=nxt, created=j.created or config.now,
                             updated=j.updated or j.created or config.now)


SERVICE = Service("scheduler", {"jobs": Job, "runs": Run}, title="Scheduler", prepare=_prepare)
JOBS, RUNS = SERVICE.table("jobs"), SERVICE.table("runs")

"""Scheduler: jobs that run an action on a cron schedule, with owners, tags, dependencies and a run history.

Modelled on cron and the job schedulers built on it (Kubernetes CronJobs, Airflow's schedules, cloud
schedulers). Schedules are Vixie cron expressions (`syntax`), read in the workspace's time zone on the
simulated clock: a job's next run is always computed from the current simulated time, so it moves on as
the clock does, and a paused job has none. The simulator does not execute jobs; their history is data
(`runs`), and a job's `last_status` and `last_run` come from its newest run unless given. Job names are
unique (ignoring case); dependencies name existing jobs and never loop.
"""

from __future__ import annotations

from .records import JOBS, RUNS, SERVICE, Job, Run
from .syntax import Cron, CronError, next_run, parse_cron
from .tools import (
    list_jobs, get_job, get_job_history, preview_schedule, create_job, update_job, pause_job, resume_job,
    delete_job
)

SERVICE.add_tools(
    list_jobs, get_job, get_job_history, preview_schedule, create_job, update_job, pause_job, resume_job,
    delete_job,
)

__all__ = ["SERVICE", "JOBS", "RUNS", "Job", "Run", "Cron", "CronError", "next_run", "parse_cron"]

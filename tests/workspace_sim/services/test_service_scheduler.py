"""The scheduler: cron parsing (Vixie syntax, clear errors naming the field), next runs in the workspace's zone on the
simulated clock across DST changes (checked against brute-force minute stepping), and every job tool."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import call_error, verdict

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services.scheduler import CronError, next_run, parse_cron

ME, DANA = "me@acme.com", "dana@acme.com"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)  # Monday 10:00 in Berlin
UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
JOBS = [
    {"id": "j-export", "name": "Nightly export", "schedule": "30 2 * * *", "action": "python export.py --db db-1",
     "owner": ME, "tags": ["nightly", "data"]},
    {"id": "j-report", "name": "Weekly report", "schedule": "0 8 * * MON", "action": "python report.py",
     "owner": DANA, "tags": ["reports"], "depends_on": ["j-export"]},
    {"id": "j-clean", "name": "Temp cleanup", "schedule": "@hourly", "action": "rm -rf /tmp/cache", "enabled": False},
]
RUNS = [
    {"id": "r1", "job_id": "j-export", "started": "2026-02-28T01:30:00+00:00", "finished": "2026-02-28T01:34:00+00:00",
     "status": "success", "output": "exported 120 rows"},
    {"id": "r2", "job_id": "j-export", "started": "2026-03-01T01:30:00+00:00", "finished": "2026-03-01T01:30:05+00:00",
     "status": "failed", "error": "could not connect to db-1: host decommissioned"},
    {"id": "r3", "job_id": "j-export", "started": "2026-03-02T01:30:00+00:00", "finished": "2026-03-02T01:30:04+00:00",
     "status": "failed", "error": "could not connect to db-1: host decommissioned"},
]
PEOPLE = [{"email": ME, "name": "Mia Chen"}, {"email": DANA, "name": "Dana Reyes"}]


def make(jobs: list | None = None, runs: list | None = None, tz: str = "Europe/Berlin", now: datetime = NOW) -> Workspace:
    cfg = WorkspaceConfig(services=["scheduler", "contacts"], user=ME, now=now, timezone=tz)
    return Workspace.create(cfg, {"contacts": {"people": PEOPLE},
                                  "scheduler": {"jobs": JOBS if jobs is None else jobs,
                                                "runs": RUNS if runs is None else runs}})


@pytest.fixture
def ws() -> Workspace:
    return make()


err = call_error


# --- the parser -----------------------------------------------------------------------------------


def test_fields_ranges_steps_lists_and_names() -> None:
    c = parse_cron("0,30 9-17/4 1-7 JAN,mar-may sun,7")
    assert c.minutes == {0, 30} and c.hours == {9, 13, 17} and c.days == set(range(1, 8))
    assert c.months == {1, 3, 4, 5} and c.weekdays == {0}
    assert parse_cron("*/20 * * * *").minutes == {0, 20, 40}
    assert parse_cron("5/20 * * * *").minutes == {5, 25, 45}
    assert parse_cron("@weekly").expression == "@weekly" and parse_cron("@weekly").weekdays == {0}
    assert parse_cron("  0   9 * *  mon-fri ").expression == "0 9 * * mon-fri"


@pytest.mark.parametrize("text,words", [
    ("* * * *", "5 fields"), ("* * * * * *", "got 6"), ("", "empty"),
    ("60 * * * *", "minute field: 60 is out of range; use 0-59"), ("* 24 * * *", "hour field: 24"),
    ("* * 0 * *", "day-of-month field: 0"), ("* * * 13 *", "month field: 13"), ("* * * * 8", "day-of-week field: 8"),
    ("* * * foo *", "month field: 'foo'"), ("* * * * funday", "day-of-week field: 'funday'"),
    ("*/0 * * * *", "step '0'"), ("1-5/x * * * *", "step 'x'"), ("10-5 * * * *", "runs backwards"),
    ("1,,2 * * * *", "empty list item"), ("-5 * * * *", "minute field"), ("@often", "unknown macro"),
    ("@reboot", "@reboot"), ("0 0 30 feb *", "never occurs"), ("0 0 31 apr,jun *", "never occurs"),
])
def test_bad_expressions_name_the_field(text: str, words: str) -> None:
    with pytest.raises(CronError) as info:
        parse_cron(text)
    assert words in str(info.value)


def test_vixie_day_rule() -> None:
    both = parse_cron("0 9 1 * mon")  # the 1st OR a Monday
    assert both.day_matches(datetime(2026, 4, 1).date()) and both.day_matches(datetime(2026, 4, 6).date())
    assert not both.day_matches(datetime(2026, 4, 2).date())
    star = parse_cron("0 9 */1 * mon")  # day-of-month starts with *: both must match, so Mondays only
    assert star.day_matches(datetime(2026, 4, 6).date()) and not star.day_matches(datetime(2026, 4, 1).date())
    assert parse_cron("0 0 29 feb *").day_matches(datetime(2028, 2, 29).date())


# --- next runs ------------------------------------------------------------------------------------


def _brute(expr: str, after: datetime, tz: ZoneInfo, minutes: int) -> datetime | None:
    """The first run found by stepping UTC minutes, with the rule the module documents written out independently:
    a minute runs when its wall time matches (in a repeated hour only the first time, unless the hour field starts
    with *), and the first minute after a skipped gap runs when a skipped wall time matched (fixed hour only)."""
    c = parse_cron(expr)
    t = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(minutes):
        local = t.astimezone(tz)
        wall = local.replace(tzinfo=None)
        prev = (t - timedelta(minutes=1)).astimezone(tz).replace(tzinfo=None)
        if c.wall_matches(wall) and (local.fold == 0 or c.hours_star):
            # local.fold is 1 only on the second pass of a repeated hour
            return t
        if wall - prev > timedelta(minutes=1) and not c.hours_star:
            skipped = prev + timedelta(minutes=1)
            while skipped < wall:
                if c.wall_matches(skipped):
                    return t
                skipped += timedelta(minutes=1)
        t += timedelta(minutes=1)
    return None


def _field(lo: int, hi: int, names: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    value = st.integers(lo, hi).map(str)
    if names:
        value = value | st.sampled_from(names)
    rng = st.tuples(st.integers(lo, hi), st.integers(lo, hi)).map(lambda ab: f"{min(ab)}-{max(ab)}")
    step = st.tuples(st.sampled_from(["*", f"{lo}-{hi}", str(lo)]), st.integers(1, hi - lo + 1)).map(
        lambda bs: f"{bs[0]}/{bs[1]}")
    item = value | rng | step
    return st.just("*") | st.lists(item, min_size=1, max_size=3).map(",".join)


CRON = st.tuples(_field(0, 59), _field(0, 23), _field(1, 31), _field(1, 12, ("jan", "mar", "oct", "DEC")),
                 _field(0, 7, ("mon", "fri", "SUN"))).map(" ".join)
ZONES = st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"])
# around the 2026 spring and autumn changes in Europe and the US, and ordinary days
STARTS = st.sampled_from([datetime(2026, 3, 29, 0, 17, tzinfo=UTC), datetime(2026, 3, 8, 6, 40, tzinfo=UTC),
                          datetime(2026, 10, 25, 0, 5, tzinfo=UTC), datetime(2026, 11, 1, 5, 0, tzinfo=UTC),
                          datetime(2026, 4, 5, 15, 0, tzinfo=UTC), datetime(2026, 6, 30, 23, 59, 30, tzinfo=UTC)])


def _valid(expr: str) -> bool:
    try:
        parse_cron(expr)
    except CronError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(expr=CRON.filter(_valid), tz_name=ZONES, start=STARTS, offset=st.integers(0, 60 * 24 * 3))
def test_next_run_is_the_earliest_matching_minute_after_now(expr: str, tz_name: str, start: datetime,
                                                            offset: int) -> None:
    tz, now = ZoneInfo(tz_name), start + timedelta(minutes=offset)
    window = 60 * 24 * 4
    got = next_run(parse_cron(expr), now, tz)
    expected = _brute(expr, now, tz, window)
    assert got is not None and got > now and got.second == 0
    if expected is None:
        assert got >= now + timedelta(minutes=window)
    else:
        assert got == expected, (expr, tz_name, now, got.astimezone(tz), expected.astimezone(tz))


@settings(max_examples=60, deadline=None)
@given(expr=CRON.filter(_valid), tz_name=ZONES, start=STARTS)
def test_a_next_run_matches_the_expression(expr: str, tz_name: str, start: datetime) -> None:
    tz, c = ZoneInfo(tz_name), parse_cron(expr)
    got = next_run(c, start, tz)
    assert got is not None
    wall = got.astimezone(tz).replace(tzinfo=None)
    gap_filler = (got - timedelta(minutes=1)).astimezone(tz).replace(tzinfo=None) < wall - timedelta(minutes=1)
    assert c.wall_matches(wall) or gap_filler


def test_dst_changes_in_berlin() -> None:
    c = parse_cron("30 2 * * *")
    spring = next_run(c, datetime(2026, 3, 28, 12, tzinfo=UTC), BERLIN)
    assert spring.astimezone(BERLIN).isoformat() == "2026-03-29T03:00:00+02:00"  # 02:30 was skipped: run at 03:00
    autumn = next_run(c, datetime(2026, 10, 24, 12, tzinfo=UTC), BERLIN)
    assert autumn.astimezone(BERLIN).isoformat() == "2026-10-25T02:30:00+02:00"
    assert next_run(c, autumn, BERLIN).astimezone(BERLIN).isoformat() == "2026-10-26T02:30:00+01:00"  # once
    every = parse_cron("30 * * * *")
    second = next_run(every, autumn, BERLIN)
    assert second.astimezone(BERLIN).isoformat() == "2026-10-25T02:30:00+01:00"  # hour starts with *: both times
    assert next_run(every, datetime(2026, 3, 29, 0, 45, tzinfo=UTC), BERLIN).astimezone(BERLIN).hour == 3


# --- initial data ---------------------------------------------------------------------------------


def test_initial_data_is_completed(ws: Workspace) -> None:
    jobs = ws.table("scheduler.jobs")
    export = jobs["j-export"]
    assert export.last_status == "failed" and export.last_run == datetime(2026, 3, 2, 1, 30, tzinfo=UTC)
    assert export.next_run == datetime(2026, 3, 3, 1, 30, tzinfo=UTC) and jobs["j-clean"].next_run is None
    assert jobs["j-report"].last_status == "never" and jobs["j-report"].schedule == "0 8 * * MON"


@pytest.mark.parametrize("jobs,runs,where,words", [
    ([{"id": "a", "name": "x", "schedule": "61 * * * *", "action": "y"}], [], "data.scheduler.jobs[0]",
     "minute field: 61"),
    ([{"id": "a", "name": "x", "schedule": "@daily", "action": "y"}, {"id": "b", "name": "X", "schedule": "@daily",
                                                                      "action": "z"}], [],
     "data.scheduler.jobs[b].name", "also the name"),
    ([{"id": "a", "name": "x", "schedule": "@daily", "action": "y", "depends_on": ["zz"]}], [],
     "data.scheduler.jobs[a].depends_on", "'zz' does not exist"),
    ([{"id": "a", "name": "x", "schedule": "@daily", "action": "y", "depends_on": ["b"]},
      {"id": "b", "name": "w", "schedule": "@daily", "action": "y", "depends_on": ["a"]}], [],
     "data.scheduler.jobs[a].depends_on", "loop"),
    ([], [{"id": "r", "job_id": "q", "started": "2026-03-01T00:00:00+00:00"}], "data.scheduler.runs[r].job_id",
     "does not exist"),
    (JOBS, [{"id": "r", "job_id": "j-export", "started": "2026-03-01T00:00:00+00:00", "status": "failed"}],
     "data.scheduler.runs[0]", "without an error"),
    (JOBS, [{"id": "r", "job_id": "j-export", "started": "2026-03-09T00:00:00+00:00"}],
     "data.scheduler.runs[r].started", "after the start time"),
])
def test_bad_initial_data_is_refused_with_its_path(jobs: list, runs: list, where: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        make(jobs=jobs, runs=runs)
    assert str(info.value).startswith(where) and words in str(info.value), str(info.value)


# --- tools ----------------------------------------------------------------------------------------


def names(r) -> list[str]:  # type: ignore[no-untyped-def]
    return [j["name"] for j in r.data["jobs"]]


def test_list_jobs_filters(ws: Workspace) -> None:
    assert names(ws.call("list_jobs", {})) == ["Nightly export", "Temp cleanup", "Weekly report"]
    assert names(ws.call("list_jobs", {"status": "failing"})) == ["Nightly export"]
    assert names(ws.call("list_jobs", {"status": "paused"})) == ["Temp cleanup"]
    assert names(ws.call("list_jobs", {"status": "never_run"})) == ["Temp cleanup", "Weekly report"]
    assert names(ws.call("list_jobs", {"tag": "NIGHTLY"})) == ["Nightly export"]
    assert names(ws.call("list_jobs", {"owner": "Dana Reyes"})) == ["Weekly report"]
    assert names(ws.call("list_jobs", {"query": "report.py"})) == ["Weekly report"]
    r = ws.call("list_jobs", {"status": "enabled"})
    assert [j["next_run"] for j in r.data["jobs"]] == ["2026-03-03T02:30+01:00", "2026-03-09T08:00+01:00"]
    assert "every day at 02:30" in r.text and "at 08:00 on Mon" in r.text
    assert "unknown_tool" not in err(ws, "list_jobs", {"status": "broken"})


def test_get_job_and_history(ws: Workspace) -> None:
    d = ws.call("get_job", {"job": "nightly EXPORT"}).data["job"]
    assert d["id"] == "j-export" and d["dependents"] == [{"id": "j-report", "name": "Weekly report"}]
    assert len(d["upcoming_runs"]) == 5 and d["recent_runs"][0]["id"] == "r3"
    assert d["recent_runs"][0]["error"] == "could not connect to db-1: host decommissioned"
    h = ws.call("get_job_history", {"job": "j-export", "status": "failed"})
    assert [r["id"] for r in h.data["runs"]] == ["r3", "r2"] and h.data["counts"] == {"failed": 2, "success": 1}
    assert h.data["runs"][0]["duration_seconds"] == 4
    assert "did you mean j-export" in err(ws, "get_job", {"job": "j-exprt"})


def test_next_run_follows_the_simulated_clock(ws: Workspace) -> None:
    ws.advance_clock(2 * 86400)
    assert ws.call("get_job", {"job": "j-export"}).data["job"]["next_run"] == "2026-03-05T02:30+01:00"


def test_create_update_pause_resume_delete(ws: Workspace) -> None:
    r = ws.call("create_job", {"name": "Invoice sync", "schedule": "*/15 9-17 * * mon-fri", "action": "sync.sh",
                               "owner": "Dana Reyes", "tags": ["finance"], "depends_on": ["Nightly export"]})
    assert r.ok, r.text
    job = r.data["job"]
    assert job["owner"] == DANA and job["depends_on"] == ["j-export"] and job["next_run"] == "2026-03-02T10:15+01:00"
    assert ws.table("scheduler.jobs")[job["id"]].next_run == datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
    assert "already exists" in err(ws, "create_job", {"name": "invoice SYNC", "schedule": "@daily", "action": "x"})
    assert "day-of-week field: 'fry' is not a number from 0 to 7" in err(ws, "create_job", {"name": "n", "schedule": "0 9 * * mon-fry",
                                                                     "action": "x"})
    assert "loop" in err(ws, "update_job", {"job": "j-export", "depends_on": [job["id"]]})
    assert "itself" in err(ws, "update_job", {"job": "j-export", "depends_on": ["j-export"]})
    u = ws.call("update_job", {"job": "j-export", "schedule": "0 3 * * *", "action": "python export.py --db db-2",
                               "add_tags": ["fixed"]})
    assert u.data["changed"] == ["action", "schedule", "tags"] and u.data["job"]["next_run"] == "2026-03-03T03:00+01:00"
    assert "nothing to change" in err(ws, "update_job", {"job": "j-export"})
    assert "has no tag" in err(ws, "update_job", {"job": "j-export", "remove_tags": ["zzz"]})
    p = ws.call("pause_job", {"job": "j-export"})
    assert p.data["changed"] == ["enabled"] and p.data["job"]["next_run"] is None
    assert ws.table("scheduler.jobs")["j-export"].next_run is None
    before = ws.content_hash
    assert ws.call("pause_job", {"job": "j-export"}).data["changed"] == [] and ws.content_hash == before
    assert ws.call("resume_job", {"job": "j-export"}).data["job"]["next_run"] == "2026-03-03T03:00+01:00"
    assert "is a dependency of" in err(ws, "delete_job", {"job": "j-export"})
    gone = ws.call("delete_job", {"job": "Temp cleanup"})
    assert gone.data == {"deleted": "j-clean", "name": "Temp cleanup", "runs_deleted": 0}
    assert "j-clean" not in ws.table("scheduler.jobs")


def test_preview_schedule(ws: Workspace) -> None:
    r = ws.call("preview_schedule", {"schedule": "0 9 1 * mon", "count": 3})
    assert r.data["runs"] == ["2026-03-09T09:00+01:00", "2026-03-16T09:00+01:00", "2026-03-23T09:00+01:00"]
    assert "hour field" in err(ws, "preview_schedule", {"schedule": "0 25 * * *"})


def test_generic_record_predicates_see_jobs(ws: Workspace) -> None:
    ws.call("update_job", {"job": "j-export", "action": "python export.py --db db-2"})
    assert verdict(ws, {"kind": "record_exists", "table": "scheduler.jobs",
                        "where": {"id": "j-export", "action": {"contains": "db-2"}, "enabled": True}})
    assert verdict(ws, {"kind": "only_changed", "scopes": ["scheduler.jobs:j-export"]})
    assert verdict(ws, {"kind": "unchanged", "scope": "scheduler.runs"})
    assert not verdict(ws, {"kind": "unchanged", "scope": "scheduler.jobs:j-export"})
    assert verdict(ws, {"kind": "record_absent", "table": "scheduler.jobs", "where": {"name": "Old job"}})


def test_snapshot_fork_and_restore(ws: Workspace) -> None:
    snap = ws.snapshot()
    other = ws.fork()
    ws.call("pause_job", {"job": "j-export"})
    assert other.table("scheduler.jobs")["j-export"].enabled and not ws.table("scheduler.jobs")["j-export"].enabled
    ws.restore(snap)
    assert ws.table("scheduler.jobs")["j-export"].enabled

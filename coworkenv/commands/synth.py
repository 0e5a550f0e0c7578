"""`coworkenv synth`: generate environment specs, validate each by execution, repair what fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ._usage import fail_red as _fail


def synth(
    capability: Optional[list[str]] = typer.Option(None, "--capability", "-c", help="Capability id (repeatable); "
                                                   "default: a balanced mix of every capability."),
    count: int = typer.Option(12, "--count", "-n", min=1, help="Environments to attempt."),
    seed: int = typer.Option(0, "--seed", "-s", help="Base seed; the same seed gives the same environments."),
    out: Path = typer.Option(Path("envs"), "--out", "-o", help="Folder to write the valid specs into."),
    fmt: str = typer.Option("json", "--format", "-f", help="json or yaml."),
    generator: str = typer.Option("procedural", "--generator", help="procedural (offline: compositions and "
                                  "templates, the balanced mix), templates (offline, templates only) or llm (with "
                                  "--profile: the profile's mix, each request reworded by the model)."),
    requirement: Optional[str] = typer.Option(None, help="Workflow requirement for the llm generator."),
    base_url: Optional[str] = typer.Option(None, help="llm: the OpenAI-compatible endpoint's base URL (else "
                                                      "COWORKENV_OPENAI_BASE_URL)."),
    model: Optional[str] = typer.Option(None, help="llm: model name (else COWORKENV_OPENAI_MODEL)."),
    api_key: Optional[str] = typer.Option(None, help="llm: API key (else COWORKENV_OPENAI_API_KEY, or "
                                                     "OPENAI_API_KEY)."),
    max_repairs: int = typer.Option(3, min=0, help="Repair rounds per environment (llm generator)."),
    workers: int = typer.Option(1, "--workers", "-w", min=0, help="Worker processes for the procedural generator "
                                "(0: one per core); any number writes the same files."),
    as_json: bool = typer.Option(False, "--json", help="Print {out, written} as JSON instead of the summary."),
    profile: Optional[str] = typer.Option(None, "--profile", help="Draw a mix whose marginals follow a profile: "
                                          "balanced, claw-eval, clawmark, or a profile file (.json/.yaml)."),
) -> None:
    """Generate environments, validate each by execution, and write only the valid ones."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from synth.capabilities import CAPABILITIES
    from synth.pipeline import CapabilityStats

    if fmt not in ("json", "yaml"):
        _fail(f"--format must be json or yaml, got {fmt!r}")
    if generator not in ("procedural", "templates", "llm"):
        _fail(f"--generator must be procedural, templates or llm, got {generator!r}")
    if generator == "llm" and workers != 1 and profile is None:
        _fail("--workers applies to the procedural generator; the llm generator runs its requests one at a time")
    mix_profile = _profile(profile, capability, generator) if profile is not None else None
    unknown = [c for c in capability or [] if c not in CAPABILITIES]
    if unknown:
        _fail(f"unknown capability {', '.join(map(repr, unknown))}; known: {', '.join(CAPABILITIES)}")
    if out.exists() and not out.is_dir():
        _fail(f"--out {out} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    suffix = ".yaml" if fmt == "yaml" else ".json"
    written: list[Path] = []

    def write(spec) -> None:  # type: ignore[no-untyped-def]
        written.append(spec.save(out / f"{spec.id}{suffix}"))

    with Progress(TextColumn("[bold]synth[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        task = progress.add_task("", total=count)
        if generator in ("procedural", "templates") or mix_profile is not None:
            from synth.parallel import SynthJobError
            from synth.pipeline import mixed_attempt, procedural_attempt, synthesize

            reword = _rewording(generator, base_url, model, api_key)

            def step(attempt) -> None:  # type: ignore[no-untyped-def]
                if attempt.spec is not None:
                    write(reword(attempt.spec))
                progress.update(task, advance=1, description=f"{attempt.capability} seed {attempt.seed}"
                                + ("" if attempt.valid else " [red]discarded[/]"))

            try:
                if mix_profile is not None:
                    from synth.profile_mix import synthesize_profile

                    result = synthesize_profile(mix_profile, count, seed, on_attempt=step, workers=workers)
                else:
                    result = synthesize(capability, count, seed, on_attempt=step, workers=workers,
                                        producer=mixed_attempt if generator == "procedural" else procedural_attempt)
            except SynthJobError as e:
                progress.stop()
                _fail(f"{e}\nwrote {len(written)} of {count} environment(s) before it", 1)
            stats = result.stats
        else:
            from synth.llm import LLMSettings, SettingsError, synthesize_llm

            try:
                settings = LLMSettings.from_env(base_url=base_url, model=model, api_key=api_key)
            except SettingsError as e:
                _fail(str(e))

            def on_result(spec, gen_stats) -> None:  # type: ignore[no-untyped-def]
                if spec is not None:
                    write(spec)
                progress.update(task, advance=1, description=f"{gen_stats.capability}"
                                + ("" if spec is not None else " [red]discarded[/]"))

            batch = synthesize_llm(capability, count, settings, requirement=requirement, max_repairs=max_repairs,
                                   seed=seed, on_result=on_result)
            stats = {k: CapabilityStats(t.generated, t.valid, t.repaired, t.discarded)
                     for k, t in batch.by_capability.items() if t.generated}
    stopped = batch.stopped if generator == "llm" and mix_profile is None else None
    if as_json:
        typer.echo(json.dumps({"out": str(out), "written": [p.name for p in written]}))
    else:
        stdout = Console()
        _summary(stdout, stats)
        stdout.print(f"wrote {len(written)} valid environment(s) to {out}")
    _exit_unless_done(stopped, len(written), count)


def _profile(name: str, capability: Optional[list[str]], generator: str):  # type: ignore[no-untyped-def]
    """The profile --profile names, validated; a bad one or a clash with other options exits 2 naming it."""
    from synth.generate.profiles.profile import ProfileError, load_profile

    if capability:
        _fail("--profile draws its own mix of kinds; leave out --capability")
    if generator == "templates":
        _fail("--profile draws kind-directed compositions; it does not combine with --generator templates")
    try:
        return load_profile(name)
    except ProfileError as e:
        _fail(f"--profile: {e}")


def _rewording(generator: str, base_url: Optional[str], model: Optional[str],  # type: ignore[no-untyped-def]
               api_key: Optional[str]):
    """What is done to each valid spec before it is written: with --generator llm (and --profile) the model
    rewrites its request (synth.generate.paraphrase), keeping the procedural wording where a rewrite fails."""
    if generator != "llm":
        return lambda spec: spec
    from synth.generate.paraphrase import paraphrase
    from synth.llm import ChatClient, LLMSettings, SettingsError

    try:
        client = ChatClient(LLMSettings.from_env(base_url=base_url, model=model, api_key=api_key))
    except SettingsError as e:
        _fail(str(e))
    return lambda spec: paraphrase(spec, client, seed=spec.seed)[0]


def _exit_unless_done(stopped: str | None, written: int, attempted: int) -> None:
    """Exit 1 with the reason on stderr when the generator stopped early or no environment came out valid.

    A run that stopped (an endpoint that went away) did not do what it was asked even if some specs
    were written; one that wrote nothing gave the caller nothing to use. Discards among others are normal.
    """
    if stopped:
        _fail(f"{stopped}; wrote {written} of {attempted} environment(s)", 1)
    if not written:
        _fail(f"none of the {attempted} attempted environment(s) came out valid, so nothing was written "
              "(the summary says where they were discarded)", 1)


def _summary(console, stats) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    table = Table(title="synthesis summary")
    for col in ("capability", "generated", "valid", "repaired", "discarded"):
        table.add_column(col, justify="left" if col == "capability" else "right")
    totals = [0, 0, 0, 0]
    for cap, st in stats.items():
        row = [st.generated, st.valid, st.repaired, st.discarded]
        totals = [a + b for a, b in zip(totals, row)]
        table.add_row(cap, *map(str, row))
    table.add_row("[bold]total[/]", *[f"[bold]{t}[/]" for t in totals])
    console.print(table)

"""The `--judge-*` options that `run` and `eval` share (the model that judges `judged` predicates)."""

from __future__ import annotations

import typer

MODEL = typer.Option(None, "--judge-model",
                     help="Model judging `judged` predicates (else COWORKENV_JUDGE_MODEL; none: their key facts).")
BASE_URL = typer.Option(None, "--judge-base-url",
                        help="The judge's OpenAI-compatible base URL (else COWORKENV_JUDGE_BASE_URL).")
API_KEY = typer.Option(None, "--judge-api-key",
                       help="The judge's API key (else COWORKENV_JUDGE_API_KEY, COWORKENV_OPENAI_API_KEY or "
                            "OPENAI_API_KEY).")
CACHE = typer.Option(None, "--judge-cache",
                     help="Folder caching the judge's verdicts across runs (else COWORKENV_JUDGE_CACHE).")

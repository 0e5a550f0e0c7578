"""What every `coworkenv train` sub-command does first: offline transformers, and torch's CPU threads."""

from __future__ import annotations

import os

from .._usage import fail as _fail


def prepare(threads: int) -> None:
    """Keep transformers offline and quiet, and give torch `threads` CPU threads (0: the house default); a usage
    error when torch is not installed."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    try:
        import torch
    except ImportError:
        _fail("torch is not installed; install the training extra: pip install 'coworkenv[train]'")
    from trainers.training.threads import default_torch_threads

    torch.set_num_threads(threads if threads > 0 else default_torch_threads())

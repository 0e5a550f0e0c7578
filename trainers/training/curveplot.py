"""A PNG of a copy-pretraining curve: loss and copy accuracy against tokens seen (from a base's manifest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def plot_copy_curve(manifest: dict[str, Any] | str | Path, png: str | Path, title: str | None = None) -> Path:
    """Draw training loss and teacher-forced copy accuracy (whole values and tokens) against tokens seen.

    `manifest` is a base's manifest.json (a path or the loaded dict); raises ValueError when it holds
    no curve. Uses matplotlib's non-interactive Agg backend.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    doc = json.loads(Path(manifest).read_text(encoding="utf-8")) if isinstance(manifest, (str, Path)) else manifest
    curve = doc.get("curve") or []
    if not curve:
        raise ValueError("the manifest holds no curve to plot")
    tokens = [p["tokens"] / 1e6 for p in curve]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(tokens, [p["copy_accuracy"] for p in curve], label="copy accuracy, whole values (teacher-forced)")
    ax.plot(tokens, [p["copy_token_accuracy"] for p in curve], label="copy accuracy, tokens (teacher-forced)")
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("accuracy on fresh values")
    ax.set_ylim(0, 1)
    loss_ax = ax.twinx()
    loss_ax.plot(tokens[1:], [p["loss"] for p in curve[1:]], color="grey", linestyle="--", label="training loss")
    loss_ax.set_ylabel("loss (nats/token)")
    lines = ax.get_legend_handles_labels()
    more = loss_ax.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="center right", fontsize=8)
    s = doc.get("settings", {})
    ax.set_title(title or f"copy pretraining: hidden {s.get('hidden')}, {s.get('layers')} layers, "
                          f"{doc.get('steps')} steps, {doc.get('torch_threads')} thread(s)", fontsize=10)
    fig.tight_layout()
    out = Path(png)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out

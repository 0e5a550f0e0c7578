"""The LLM as a second wording layer: an OpenAI-compatible model rewrites a drawn environment's request in its own
words, over the same profession packs, compositions and validation as the procedural path.

`paraphrase(spec, client)` asks for `{"request": ...}` in the request's language and keeps the rewrite only when
it still carries every token the task turns on (paths, references, addresses, figures, the people's names), and
when the rewritten spec passes the same validation (solvable, discriminative, the blind baselines failing);
otherwise the procedural wording stays. `coworkenv synth --generator llm --profile NAME` draws a profile's mix
this way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..spec import EnvironmentSpec

SCHEMA = {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"],
          "additionalProperties": False}
_TOKENS = re.compile(r"(/[\w./-]+|[A-Z]{2,5}-\d{2,6}|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d[\d,]*\.\d+|\{\{fact:\w+\}\})")


def must_keep(spec: EnvironmentSpec) -> list[str]:
    """The tokens of the request a rewrite has to keep word for word: paths, references, addresses, figures, and
    the names of the world's people that the request uses."""
    out = _TOKENS.findall(spec.request)
    out += [p.name for p in spec.world.people if p.name in spec.request]
    return list(dict.fromkeys(t.rstrip(".,;:") for t in out))


def _messages(spec: EnvironmentSpec, keep: list[str]) -> list[dict[str, Any]]:
    zh = spec.metadata.get("language") == "zh"
    return [{"role": "system", "content": "You rewrite a workplace request as its author might have written it on "
             "another day: same wants, same facts, never naming tools or steps, no new facts. Answer JSON "
             '{"request": "..."}.'},
            {"role": "user", "content": f"Language: {'Chinese (zh-CN)' if zh else 'English'}.\nKeep these exactly: "
             f"{'; '.join(keep) or '(nothing)'}\n\nRequest:\n{spec.request}"}]


def paraphrase(spec: EnvironmentSpec, client: Any, seed: int | None = None) -> tuple[EnvironmentSpec, str]:
    """The spec with the model's rewrite of its request, or the spec unchanged; and why ('paraphrased', or what
    the rewrite lost). `client` is a synth.llm.ChatClient."""
    from ..validate import validate_spec

    keep = must_keep(spec)
    try:
        answer = client.complete_json(_messages(spec, keep), SCHEMA, "request", seed=seed)
        text = str(json.loads(answer.text or "{}").get("request", "")).strip()
    except Exception as e:  # an endpoint that fails leaves the procedural wording
        return spec, f"kept the procedural wording: {type(e).__name__}: {e}"
    lost = [t for t in keep if t not in text]
    if not text or lost:
        return spec, f"kept the procedural wording: the rewrite lost {', '.join(lost) or 'everything'}"
    out = spec.model_copy(update={"request": text,
                                  "metadata": {**spec.metadata, "wording": "llm", "procedural_request": spec.request}})
    report = validate_spec(EnvironmentSpec.model_validate(out.model_dump()))
    if not report.ok:
        return spec, f"kept the procedural wording: the rewrite failed validation: {report.feedback[0].line()}"
    return out, "paraphrased"

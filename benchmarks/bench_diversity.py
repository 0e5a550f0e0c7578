"""Diversity and speed of the balanced mix: templates only (before) vs compositions + templates (after).

Prints, for N environments of each producer in this process: the largest share of one masked opening
(first 12 words; names, numbers, dates, paths, quotes masked), the top-10 openings' share, the share of
distinct masked sentences used 10+ times, distinct reference tool sequences, workplace kinds, the share in
Chinese, the share whose reference carries a fact across services, and env/s (generate + validate).
Run: PYTHONPATH=. python benchmarks/bench_diversity.py [N]
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter

import synth.pipeline as pipeline
from synth.pipeline import plan, procedural_attempt, synthesis_gc

HAN = re.compile(r"[\u4e00-\u9fff]")
MONTHS = r"(January|February|March|April|May|June|July|August|September|October|November|December)"


def mask(text: str, names: list[str]) -> str:
    """Names, numbers, dates, paths, quotes and e-mail addresses replaced by placeholders."""
    for n in sorted(names, key=len, reverse=True):
        if n:
            text = text.replace(n, "<N>")
    text = re.sub(r"\S+@\S+", "<E>", text)
    text = re.sub(r"/[\w./-]+", "<P>", text)
    text = re.sub(r"\"[^\"]*\"|(?<!\w)'[^']*'(?!\w)|“[^”]*”|「[^」]*」", "<Q>", text)
    text = re.sub(MONTHS, "<D>", text)
    text = re.sub(r"\d[\d,.:]*", "#", text)
    text = re.sub(r"(?<=[a-z,;:] )[A-Z][\w&'-]*", "<N>", text)  # a capitalised word inside a sentence: a name
    return text


def words(text: str) -> list[str]:
    return [c for c in text if not c.isspace()] if HAN.search(text) else text.split()


def user_texts(spec) -> list[str]:  # type: ignore[no-untyped-def]
    out = [spec.request] + [s.instructions for s in spec.stages if s.instructions]
    return out + [f.text for f in spec.user_simulator.followups]


def figures(specs: list) -> dict[str, float]:  # type: ignore[type-arg]
    openings: Counter[str] = Counter()
    sentences: Counter[str] = Counter()
    seqs, kinds = set(), set()
    zh = cross = 0
    for sp in specs:
        names = [p.name for p in sp.world.people] + [sp.world.organisation.name]
        names += [w for p in sp.world.people for w in p.name.split() if len(w) > 2]
        m = mask(sp.request, names)
        w = words(m)
        openings[("" if HAN.search(m) else " ").join(w[:12 if not HAN.search(m) else 20])] += 1
        for t in user_texts(sp):
            for sent in re.split(r"[.!?。！？\n；]+", mask(t, names)):
                if sent.strip():
                    sentences[sent.strip()] += 1
        seqs.add(tuple(getattr(s, "tool", s.kind) for s in sp.reference.steps))
        kinds.add(sp.metadata.get("profession") or sp.world.organisation.industry or "?")
        zh += bool(HAN.search(sp.request))
        cross += bool(sp.metadata.get("data_flow"))
    n = len(specs)
    top = openings.most_common(10)
    return {"envs": n, "top_opening": top[0][1] / n, "top10_openings": sum(c for _, c in top) / n,
            "sentences_10plus": sum(1 for c in sentences.values() if c >= 10) / max(len(sentences), 1),
            "sentence_uses_10plus": sum(c for c in sentences.values() if c >= 10) / max(sum(sentences.values()), 1),
            "distinct_tool_sequences": len(seqs) / n, "workplace_kinds": len(kinds), "chinese": zh / n,
            "cross_service_fact": cross / n,
            "composed": sum(sp.metadata.get("generator") == "compose" for sp in specs) / n}


def run(producer, n: int, seed: int = 0) -> tuple[list, float]:  # type: ignore[no-untyped-def,type-arg]
    jobs = plan(None, n, seed)
    t = time.perf_counter()
    with synthesis_gc():
        specs = [a.spec for a in (producer(c, s) for c, s in jobs) if a.spec is not None]
    return specs, n / (time.perf_counter() - t)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    runs = [("before (templates)", procedural_attempt)]
    if hasattr(pipeline, "mixed_attempt"):  # absent in a checkout from before the compositions
        runs.append(("after (mix)", pipeline.mixed_attempt))
    for _, producer in runs:  # warm both (imports, pools, each capability's first environment) before timing
        run(producer, 34, seed=10_000)
    for name, producer in runs:
        specs, rate = run(producer, n)
        f = figures(specs)
        print(name, f"valid {len(specs)}/{n}", f"{rate:.2f} env/s",
              " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in f.items()))
        mix = pipeline.summarize([pipeline.profile(sp) for sp in specs])
        print("   calls median", mix["calls"]["median"], "shares", mix["share"])


if __name__ == "__main__":
    main()

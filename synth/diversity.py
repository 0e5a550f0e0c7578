"""How varied a set of environments is: masked openings and sentences, tool sequences, workplaces, languages.

A request's opening is its first 12 words (20 characters in Chinese) after masking what differs between
otherwise identical requests (names, numbers, dates, paths, quoted text, addresses: `mask`); a template
that always words its request one way shows up as one opening used by many environments. Sentences are
those of every user turn (the request, each day's instructions, follow-ups), masked the same way.
`benchmarks/bench_diversity.py` and `coworkenv stats` both report `figures(specs)`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

from .spec import EnvironmentSpec

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
    """Words, or characters in a text with Chinese in it."""
    return [c for c in text if not c.isspace()] if HAN.search(text) else text.split()


def user_texts(spec: EnvironmentSpec) -> list[str]:
    """Everything the user says: the request, each day's instructions, the follow-ups."""
    out = [spec.request] + [s.instructions for s in spec.stages if s.instructions]
    return out + [f.text for f in spec.user_simulator.followups]


def _names(spec: EnvironmentSpec) -> list[str]:
    names = [p.name for p in spec.world.people] + [spec.world.organisation.name]
    return names + [w for p in spec.world.people for w in p.name.split() if len(w) > 2]


def opening(spec: EnvironmentSpec) -> str:
    """The request's masked opening."""
    m = mask(spec.request, _names(spec))
    zh = bool(HAN.search(m))
    return ("" if zh else " ").join(words(m)[:20 if zh else 12])


def language(spec: EnvironmentSpec) -> str:
    """The request's language: the spec's metadata, else zh when it holds Chinese, else en."""
    return str(spec.metadata.get("language") or ("zh" if HAN.search(spec.request) else "en"))


def figures(specs: Iterable[EnvironmentSpec]) -> dict[str, Any]:
    """The diversity figures of `specs` (shares are of environments, or of sentence uses where named so)."""
    openings: Counter[str] = Counter()
    sentences: Counter[str] = Counter()
    seqs, kinds = set(), set()
    langs: Counter[str] = Counter()
    cross = composed = n = 0
    for sp in specs:
        n += 1
        openings[opening(sp)] += 1
        names = _names(sp)
        for t in user_texts(sp):
            for sent in re.split(r"[.!?。！？\n；]+", mask(t, names)):
                if sent.strip():
                    sentences[sent.strip()] += 1
        seqs.add(tuple(getattr(s, "tool", s.kind) for s in sp.reference.steps))
        kinds.add(sp.metadata.get("profession") or sp.world.organisation.industry or "?")
        langs[language(sp)] += 1
        cross += bool(sp.metadata.get("data_flow"))
        composed += sp.metadata.get("generator") == "compose"
    n = max(n, 1)
    top = openings.most_common(10)
    uses = max(sum(sentences.values()), 1)
    return {"envs": sum(openings.values()), "distinct_openings": len(openings), "distinct_sentences": len(sentences),
            "top_opening": top[0][1] / n if top else 0.0, "top10_openings": sum(c for _, c in top) / n,
            "sentences_10plus": sum(1 for c in sentences.values() if c >= 10) / max(len(sentences), 1),
            "sentence_uses_10plus": sum(c for c in sentences.values() if c >= 10) / uses,
            "distinct_tool_sequences": len(seqs) / n, "workplace_kinds": len(kinds),
            "chinese": langs.get("zh", 0) / n, "languages": dict(sorted(langs.items())),
            "cross_service_fact": cross / n, "composed": composed / n}


def rows(fig: dict[str, Any]) -> list[tuple[str, str]]:
    """The figures as (label, value) lines for a report."""
    pct = lambda k: f"{fig[k]:.1%}"  # noqa: E731
    return [("environments", str(fig["envs"])), ("distinct masked openings", str(fig["distinct_openings"])),
            ("distinct masked sentences", str(fig["distinct_sentences"])),
            ("largest share of one opening", pct("top_opening")), ("top-10 openings' share", pct("top10_openings")),
            ("sentence uses of sentences used 10+ times", pct("sentence_uses_10plus")),
            ("distinct reference tool sequences", pct("distinct_tool_sequences")),
            ("workplace kinds", str(fig["workplace_kinds"])),
            ("languages", ", ".join(f"{k} {v}" for k, v in fig["languages"].items())),
            ("a fact carried across services", pct("cross_service_fact"))]

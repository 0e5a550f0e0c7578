"""Draw a world from a profession pack and a locale: the organisation, its people, their directory rows.

The user holds one of the pack's titles in its team; the team's other roles (who approves, who
gets told) are filled by colleagues; each of them may have a namesake in another department (same
given name, a surname a careful reader can still tell apart: Thompson / Thomson, 陈 / 程), never
the same full name. Outside parties get their own domain. Every draw comes from one seeded
`random.Random`, so a seed reproduces the world byte for byte.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ...procedural.world import World
from ...spec import Organisation, Person
from .locales import Locale
from .professions import Profession


@dataclass
class Directory:
    """What the contacts service lists for each person: phone, office address, working hours."""

    rows: dict[str, dict[str, object]] = field(default_factory=dict)


@dataclass
class Drawn:
    """A drawn world with its pack, locale, the people by role, the namesakes and the directory."""

    world: World
    profession: Profession
    locale: Locale
    peers: list[Person]  # colleagues in the user's team, one per peer title
    namesakes: dict[str, Person]  # a peer's email -> the namesake in another department
    parties: list[tuple[str, Person]]  # (outside organisation, its contact person)
    directory: Directory
    city: str
    taken: set[int] = field(default_factory=set)  # document numbers already used in this world

    @property
    def lang(self) -> str:
        return self.locale.language


def _slug(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum()) or "org"


class Namer:
    """Draws distinct full names (and addresses for them) from a locale."""

    def __init__(self, loc: Locale, rng: random.Random) -> None:
        self.loc, self.rng = loc, rng
        self.used_names: set[str] = set()
        self.used_emails: set[str] = set()
        self.reserved: set[str] = {s for pair in loc.confusable for s, _ in pair}

    def _email(self, given: str, surname: str, domain: str) -> str:
        base = f"{given}.{surname}" if self.loc.language == "en" else f"{surname}{given}"
        email, n = f"{base}@{domain}", 2
        while email in self.used_emails:
            email, n = f"{base}{n}@{domain}", n + 1
        self.used_emails.add(email)
        return email

    def person(self, domain: str, title: str, dept: str, tz: str, role: str,
               given: tuple[str, str] | None = None, surname: tuple[str, str] | None = None) -> Person:
        """A person with a full name nobody else in the world has."""
        for _ in range(200):
            g = given or self.rng.choice(self.loc.given)
            s = surname or self.rng.choice([x for x in self.loc.surnames if x[0] not in self.reserved])
            name = self.loc.full_name(g[0], s[0])
            if name not in self.used_names:
                break
            given = surname = None
        else:  # pragma: no cover - the lists hold thousands of combinations
            raise RuntimeError("no distinct name left")
        self.used_names.add(name)
        return Person(name=name, email=self._email(g[1], s[1], domain), title=title, department=dept,
                      timezone=tz, role=role)  # type: ignore[arg-type]


def draw_world(prof: Profession, loc: Locale, rng: random.Random, namesakes: int = 2) -> Drawn:
    """A world of `prof` in `loc`: user, manager, team peers, namesakes elsewhere, others, outside contacts."""
    lang = loc.language
    namer = Namer(loc, rng)
    idx = rng.randrange(len(prof.orgs[lang]))
    org_name = prof.orgs[lang][idx]
    words = [w for w in prof.orgs["en"][idx % len(prof.orgs["en"])].split() if w not in ("The", "St")]
    domain = _slug(words[0]) + rng.choice(loc.domains)
    org = Organisation(name=org_name, domain=domain, industry=prof.label["en"])
    tz = rng.choice(loc.timezones)
    team = prof.team[lang]
    user = namer.person(domain, rng.choice(prof.user_titles[lang]), team, tz, "user")
    titles = list(prof.peer_titles[lang])
    pairs = list(loc.confusable)
    rng.shuffle(pairs)
    twinned = set(rng.sample(range(len(titles)), min(namesakes, len(titles))))
    people, peers = [user], []
    twins: dict[str, Person] = {}
    for i, title in enumerate(titles):
        role = "manager" if i == 0 else "colleague"
        if i in twinned:  # the peer takes one surname of a confusable pair, a namesake elsewhere the other
            (a, b), g = pairs.pop(), rng.choice(loc.given)
            peer = namer.person(domain, title, team, tz, role, given=g, surname=a)
            dept = rng.choice(prof.departments[lang])
            twins[peer.email] = namer.person(domain, _elsewhere_title(lang, dept), dept, tz, "colleague",
                                             given=g, surname=b)
        else:
            peer = namer.person(domain, title, team, tz, role)
        peers.append(peer)
        people.append(peer)
    manager = peers[0]
    people.extend(twins.values())
    for dept in rng.sample(list(prof.departments[lang]), 2):
        people.append(namer.person(domain, _elsewhere_title(lang, dept), dept, tz, "colleague"))
    parties: list[tuple[str, Person]] = []
    for party in rng.sample(list(prof.parties[lang]), min(3, len(prof.parties[lang]))):
        en_name = prof.parties["en"][prof.parties[lang].index(party) % len(prof.parties["en"])]
        if prof.party_is_person:  # a private person writes from a mail provider, under their own name
            contact = _private(namer, party, en_name, loc, tz)
        else:
            contact = namer.person(_slug(en_name.split()[0]) + rng.choice(loc.domains), "", party, tz, "external")
        parties.append((party, contact))
        people.append(contact)
    directory = Directory()
    city, region, area = rng.choice(loc.cities)
    for p in people:
        if p.role == "external":
            continue
        directory.rows[p.email] = {"phone": loc.phone(rng, area), "location": f"{city}",
                                   "working_hours_start": f"{loc.work_start:02d}:00",
                                   "working_hours_end": f"{loc.work_end:02d}:00"}
    return Drawn(World(org, people, user, manager), prof, loc, peers, twins, parties, directory, city)


def _private(namer: Namer, name: str, en_name: str, loc: Locale, tz: str) -> Person:
    """A private person (a customer, a patient, a freelancer) with a webmail address."""
    provider = namer.rng.choice(("qq.com", "163.com", "126.com") if loc.language == "zh" else
                                ("gmail.com", "outlook.com", "fastmail.com", "proton.me"))
    local = namer.rng.choice(("{a}.{b}", "{a}{b}", "{a}_{b}{n}")).format(
        a=_slug(en_name.split()[0]), b=_slug(en_name.split()[-1]), n=namer.rng.randint(7, 99))
    if loc.language == "zh":
        local = str(namer.rng.randint(10_000_000, 999_999_999))  # QQ-style numeric mailbox
    namer.used_names.add(name)
    return Person(name=name, email=f"{local}@{provider}", title="", department="", timezone=tz, role="external")


def _elsewhere_title(lang: str, dept: str) -> str:
    """A plain job title for someone in another department."""
    if lang == "zh":
        return f"{dept.rstrip('部处室办')}专员"
    return f"{dept} {'Coordinator' if len(dept) % 2 else 'Specialist'}"

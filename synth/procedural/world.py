"""Procedural worlds: an organisation and its people, with look-alikes, drawn from Faker with a seed.

Names and companies come from Faker; background text (sentences, titles, paragraphs, nouns, product
names) from `prose`, office language rather than lorem; phone numbers follow the country of the
person's time zone; look-alikes have a surname a careful reader can tell apart (never surname + "s").
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from faker import Faker

from ..spec import Organisation, Person
from . import prose

DEPARTMENTS = ("Finance", "Engineering", "Sales", "Operations", "Marketing", "Legal", "Support", "People")
TITLES = {
    "Finance": ("Financial Analyst", "Controller", "Accountant"),
    "Engineering": ("Software Engineer", "Site Reliability Engineer", "Engineering Manager", "QA Engineer"),
    "Sales": ("Account Executive", "Sales Manager", "Solutions Consultant"),
    "Operations": ("Operations Manager", "Logistics Coordinator", "Program Manager"),
    "Marketing": ("Marketing Manager", "Content Strategist", "Brand Designer"),
    "Legal": ("Counsel", "Paralegal", "Compliance Officer"),
    "Support": ("Support Engineer", "Customer Success Manager", "Support Lead"),
    "People": ("HR Partner", "Recruiter", "People Operations Lead"),
}
TIMEZONES = ("Europe/London", "Europe/Berlin", "America/New_York", "America/Chicago", "America/Los_Angeles",
             "Asia/Singapore", "Europe/Madrid", "Australia/Sydney", "Asia/Kolkata", "UTC")
TLDS = (".com", ".io", ".co", ".net", ".example")


POOL_SIZE = 600


@dataclass(frozen=True)
class Pools:
    """Names, companies and text drawn once from Faker (fixed seed); worlds sample them with their own
    seeded `random.Random`. Faker's weighted draws are slow, and sampling pools keeps generation fast
    and the output independent of what was generated before."""

    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    companies: tuple[str, ...]
    words: tuple[str, ...]
    sentences: tuple[str, ...]
    paragraphs: tuple[str, ...]
    titles: tuple[str, ...]


@lru_cache(maxsize=1)
def pools() -> Pools:
    """The shared pools (built on first use, identical in every process)."""
    fake = Faker(["en_US", "en_GB"])  # names and companies from both locales
    fake.seed_instance(20260302)

    def distinct(make, n):  # type: ignore[no-untyped-def]
        out: dict[str, None] = {}
        for _ in range(n * 30):
            out.setdefault(make(), None)
            if len(out) == n:
                break
        return tuple(out)

    return Pools(
        first_names=distinct(fake.first_name, POOL_SIZE),
        last_names=distinct(fake.last_name, POOL_SIZE),
        companies=distinct(lambda: fake.company().replace(",", ""), 300),
        words=_cycle(prose.NOUNS, 500),  # the pools keep their old sizes, so worlds draw the same stream as before
        sentences=_cycle(prose.sentences(POOL_SIZE), POOL_SIZE),
        paragraphs=_cycle(prose.paragraphs(300), 300),
        titles=_cycle(prose.titles(POOL_SIZE), POOL_SIZE),
    )


def _cycle(items: tuple[str, ...], n: int) -> tuple[str, ...]:
    return tuple(items[i % len(items)] for i in range(n))


def ascii_slug(text: str) -> str:
    """Lower-case ASCII letters and digits of `text` (accents dropped)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", plain.lower())


@dataclass
class World:
    """The people of one environment, by role; `people` keeps insertion order for stable output."""

    organisation: Organisation
    people: list[Person]
    user: Person
    manager: Person

    def colleagues(self) -> list[Person]:
        """Internal people other than the user."""
        return [p for p in self.people if p.role in ("colleague", "manager") and p is not self.user]

    def externals(self) -> list[Person]:
        return [p for p in self.people if p.role == "external"]

    def by_email(self, email: str) -> Person:
        return next(p for p in self.people if p.email == email)


class WorldMaker:
    """Draws names, companies and text from the Faker pools with a `random.Random` seeded per environment."""

    def __init__(self, seed: int, salt: str) -> None:
        self.pools = pools()
        self.rng = random.Random(f"{salt}:{seed}")
        self._used: set[str] = set()
        self._names: set[str] = set()

    def company(self) -> Organisation:
        name = self.rng.choice(self.pools.companies)
        slug = ascii_slug(name.split()[0]) or "company"
        return Organisation(name=name, domain=f"{slug}{self.rng.choice(TLDS)}",
                            industry=self.rng.choice(("software", "logistics", "retail", "health", "energy", "media")))

    def _email(self, first: str, last: str, domain: str) -> str:
        base = f"{ascii_slug(first)}.{ascii_slug(last)}" or "person"
        email, n = f"{base}@{domain}", 2
        while email in self._used:
            email, n = f"{base}{n}@{domain}", n + 1
        self._used.add(email)
        return email

    def person(self, domain: str, role: str, department: str | None = None, first: str | None = None,
               last: str | None = None) -> Person:
        drawn = first is None and last is None
        first = first or self.rng.choice(self.pools.first_names)
        last = last or self.rng.choice(self.pools.last_names)
        while drawn and f"{first} {last}" in self._names:  # no two people share a full name
            first, last = self.rng.choice(self.pools.first_names), self.rng.choice(self.pools.last_names)
        self._names.add(f"{first} {last}")
        dept = department or self.rng.choice(DEPARTMENTS)
        title = self.rng.choice(TITLES.get(dept, ("Specialist",)))
        return Person(name=f"{first} {last}", email=self._email(first, last, domain), title=title, department=dept,
                      timezone=self.rng.choice(TIMEZONES), role=role)  # type: ignore[arg-type]

    def lookalike(self, p: Person, domain: str) -> Person:
        """Someone easy to confuse with `p`: same first name, a similar surname, often the same team."""
        first, last = p.name.split(" ", 1)
        twist = similar_surname(last, self.rng, self.pools.last_names)
        dept = p.department if self.rng.random() < 0.6 else self.rng.choice(DEPARTMENTS)
        return self.person(domain, "colleague", dept, first=first, last=twist)

    def world(self, colleagues: int = 7, externals: int = 2, lookalikes: int = 2) -> World:
        org = self.company()
        user = self.person(org.domain, "user")
        manager = self.person(org.domain, "manager", user.department)
        people = [user, manager]
        for _ in range(colleagues):
            people.append(self.person(org.domain, "colleague"))
        for i in range(lookalikes):
            people.append(self.lookalike(people[2 + i % colleagues], org.domain))
        for _ in range(externals):
            other = self.company()
            while other.domain == org.domain:  # an outside party never shares the organisation's domain
                other = self.company()
            people.append(self.person(other.domain, "external"))
        return World(org, people, user, manager)

    def sentence(self, words: int = 8) -> str:
        """A sentence (no final period); under 8 `words`, a short title-like one (a subject, a heading)."""
        return self.rng.choice(self.pools.titles if words < 8 else self.pools.sentences)

    def paragraph(self, sentences: int = 3) -> str:
        """A paragraph (`sentences` of 1 gives one sentence)."""
        if sentences <= 1:
            return self.sentence() + "."
        return self.rng.choice(self.pools.paragraphs)

    def word(self) -> str:
        return self.rng.choice(self.pools.words)

    def phone(self, timezone: str | None = None) -> str:
        """A phone number in the format of the country of `timezone` (a US number when none is known)."""
        k = self.rng.randrange(300)  # one draw, as the old pool of 300 numbers took
        return phone_for(timezone or "America/New_York", random.Random(f"phone:{timezone}:{k}"))

    def brand(self) -> str:
        """A product or brand name."""
        return self.rng.choice(prose.BRANDS)

    def mention(self, product: str) -> str:
        """A sentence (no final period) mentioning `product`."""
        return prose.mention(self.rng, product)


def phone_for(timezone: str, rng: random.Random) -> str:
    """A phone number as written in the country of `timezone` (+1 (312) 555-0142, +44 20 7946 0958...)."""
    n = lambda k: "".join(str(rng.randint(0, 9)) for _ in range(k))  # noqa: E731
    if timezone.startswith("America/"):
        return f"+1 ({rng.choice(('212', '312', '415', '512', '617', '206', '303', '404'))}) {rng.randint(200, 989)}-{n(4)}"
    fmt = {"Europe/London": lambda: f"+44 20 {rng.randint(7000, 8999)} {n(4)}",
           "Europe/Berlin": lambda: f"+49 30 {n(8)}", "Europe/Madrid": lambda: f"+34 91 {n(3)} {n(2)} {n(2)}",
           "Asia/Singapore": lambda: f"+65 {rng.choice('689')}{n(3)} {n(4)}",
           "Australia/Sydney": lambda: f"+61 2 {n(4)} {n(4)}", "Asia/Kolkata": lambda: f"+91 {rng.randint(70, 99)} {n(4)} {n(4)}",
           "Asia/Shanghai": lambda: f"+86 21 {n(4)} {n(4)}"}.get(timezone)
    return fmt() if fmt else f"+1 ({rng.choice(('212', '312', '415'))}) {rng.randint(200, 989)}-{n(4)}"


def similar_surname(last: str, rng: random.Random, pool: tuple[str, ...]) -> str:
    """A surname easy to mistake for `last` that a careful reader still tells apart (Thompson / Thomson,
    Reid / Reed, Phillips / Philips, Petersen / Peterson), never `last` + "s"."""
    options = []
    for a, b in (("mps", "ms"), ("ee", "ei"), ("ei", "ee"), ("ll", "l"), ("ck", "k"), ("sen", "son"), ("son", "sen"),
                 ("ey", "y"), ("ie", "y"), ("ph", "f"), ("th", "t"), ("nn", "n"), ("tt", "t"), ("ai", "ay"), ("c", "k"),
                 ("i", "y"), ("e", "a")):
        if a in last[1:]:
            i = last.index(a, 1)
            options.append(last[:i] + b + last[i + len(a):])
    options = [o for o in options if o != last and o != last + "s" and o.lower() != last.lower()]
    alt = rng.choice(pool)  # the same two draws the old look-alike took
    k = rng.randrange(3)
    return options[k % len(options)] if options else f"{last}-{alt}"

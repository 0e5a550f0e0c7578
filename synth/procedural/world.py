"""Procedural worlds: an organisation and its people, with look-alikes, drawn from Faker with a seed."""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from faker import Faker

from ..spec import Organisation, Person

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
    phones: tuple[str, ...]


@lru_cache(maxsize=1)
def pools() -> Pools:
    """The shared pools (built on first use, identical in every process)."""
    fake = Faker(["en_US", "en_GB"])  # names and companies from both locales
    fake.seed_instance(20260302)
    text = Faker("en_US")  # English lorem (en_GB's is Latin)
    text.seed_instance(20260302)

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
        words=distinct(lambda: text.word().lower(), 500),
        sentences=distinct(lambda: text.sentence(nb_words=8).rstrip("."), POOL_SIZE),
        paragraphs=distinct(lambda: text.paragraph(nb_sentences=3), 300),
        phones=distinct(lambda: fake.numerify("+1-###-###-####"), 300),
    )


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
        first = first or self.rng.choice(self.pools.first_names)
        last = last or self.rng.choice(self.pools.last_names)
        dept = department or self.rng.choice(DEPARTMENTS)
        title = self.rng.choice(TITLES.get(dept, ("Specialist",)))
        return Person(name=f"{first} {last}", email=self._email(first, last, domain), title=title, department=dept,
                      timezone=self.rng.choice(TIMEZONES), role=role)  # type: ignore[arg-type]

    def lookalike(self, p: Person, domain: str) -> Person:
        """Someone easy to confuse with `p`: same first name, a similar surname, often the same team."""
        first, last = p.name.split(" ", 1)
        twist = self.rng.choice((last + "s", last[:-1] + "e" if len(last) > 3 else last + "e", last + "-" + self.rng.choice(self.pools.last_names)))
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
            people.append(self.person(other.domain, "external"))
        return World(org, people, user, manager)

    def sentence(self, words: int = 8) -> str:
        """A sentence of about `words` words (no final period)."""
        text = self.rng.choice(self.pools.sentences)
        return " ".join(text.split()[:words]) if words < 8 else text

    def paragraph(self, sentences: int = 3) -> str:
        """A paragraph (`sentences` of 1 gives one sentence)."""
        if sentences <= 1:
            return self.sentence() + "."
        return self.rng.choice(self.pools.paragraphs)

    def word(self) -> str:
        return self.rng.choice(self.pools.words)

    def phone(self) -> str:
        return self.rng.choice(self.pools.phones)

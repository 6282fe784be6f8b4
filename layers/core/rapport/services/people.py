"""People the user mentions: found in every recorded user message, kept up to date across conversations."""

from __future__ import annotations

from datetime import datetime

from rapport.clock import Clock
from rapport.domain.models import Interaction, MessageRole, Page
from rapport.domain.people import Mention, Person, absorb, find_mentions, record_mention, slugify
from rapport.domain.people_rules import UNIQUE_ROLES
from rapport.domain.scope import Scope
from rapport.domain.signals import find_emotions, mood_delta
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ports.items import ItemQuery, ItemRef, ItemScope, ItemStore, ItemWrite, StoredItem
from rapport.ports.signals import SentimentScorer
from rapport.services.relational_state import interaction_time
from rapport.services.versioned_items import ItemsRead, apply_alone
from rapport.settings import Settings

PERSON_KIND = "PERSON"
# How many people are matched by name against a new message; beyond that, the least recent are not (a person
# with more than this many named people in their life is rare, and a listing still shows them all).
MAX_KNOWN_PEOPLE = 500


class PersonRepository:
    """The people of one end user, one `Person` item each, keyed by slug (so listings come in slug order)."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def page(self, scope: ItemScope, *, limit: int, cursor: str | None) -> Page[Person]:
        page = self._items.list_items(scope, ItemQuery(kind=PERSON_KIND, limit=limit, cursor=cursor))
        return Page[Person](items=[Person.model_validate(i.body) for i in page.items], next_cursor=page.next_cursor)

    def known_items(self, scope: ItemScope, limit: int) -> list[StoredItem]:
        """The first `limit` people in slug order, as stored (with their versions), 100 a query."""
        found: list[StoredItem] = []
        cursor: str | None = None
        while len(found) < limit:
            page = self._items.list_items(scope, ItemQuery(kind=PERSON_KIND, limit=100, cursor=cursor))
            found.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        return found[:limit]

    def get(self, scope: ItemScope, slug: str) -> Person | None:
        item = self._items.get_item(scope, PERSON_KIND, slug)
        return Person.model_validate(item.body) if item else None


class PeopleService:
    def __init__(self, items: ItemStore, scorer: SentimentScorer, settings: Settings, clock: Clock) -> None:
        self._items = items
        self._people = PersonRepository(items)
        self._scorer = scorer
        self._settings = settings
        self._policy = settings.relational
        self._clock = clock

    def list_people(self, scope: Scope, *, limit: int, cursor: str | None) -> Page[Person]:
        """People in slug order, one page at a time."""
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        return self._people.page(ItemScope.of_user(scope), limit=limit, cursor=cursor)

    def get(self, scope: Scope, slug: str) -> Person:
        person = self._people.get(ItemScope.of_user(scope), slug)
        if person is None:
            raise NotFoundError(f"no person {slug!r} for this user; GET /v1/users/{scope.user_id}/people lists them")
        return person

    def _known(self, scope: ItemScope) -> list[Person]:
        return [Person.model_validate(item.body) for item in self._people.known_items(scope, MAX_KNOWN_PEOPLE)]

    def sentence_sentiment(self, sentence: str) -> float:
        """How the sentence sounds, -1..1: the lexicon, or the emotion cues when the lexicon is silent."""
        return mood_delta(self._scorer.polarity(sentence), find_emotions(sentence))

    def mentioned_in(self, scope: Scope, text: str, at: datetime) -> list[Person]:
        """The people this text speaks of, as they would stand with it: for the reply's context. Writes nothing."""
        known = self._known(ItemScope.of_user(scope))
        by_slug = {p.slug: p for p in known}
        mentions = find_mentions(text, known)
        for mention in mentions:
            by_slug[mention.slug] = self._with(by_slug.get(mention.slug), mention, at)
        return [by_slug[slug] for slug in dict.fromkeys(m.slug for m in mentions)]

    def _with(self, person: Person | None, mention: Mention, at: datetime) -> Person:
        return record_mention(
            person,
            mention,
            self.sentence_sentiment(mention.sentence),
            at,
            weight=self._policy.person_sentiment_weight,
            max_facts=self._policy.person_max_facts,
        )

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """Nothing by key: `plan` lists the people (one query), as any of them may be named."""
        return []

    def plan(self, interaction: Interaction, read: ItemsRead) -> list[ItemWrite]:
        """Every person in the user's messages gets the mention; "my mom" said before we knew her name joins "my
        mom Linda" once she is named. The writes expect each person as listed, so a concurrent change is a
        conflict of the whole commit, never a lost mention."""
        at = interaction_time(interaction)
        texts = [m.content for m in interaction.messages if m.role is MessageRole.USER and m.content.strip()]
        if not texts:
            return []
        listed = self._people.known_items(read.scope, MAX_KNOWN_PEOPLE)
        for item in listed:
            read.note(item)
        known = {item.key: Person.model_validate(item.body) for item in listed}
        everyone_listed = len(listed) < MAX_KNOWN_PEOPLE
        changed: dict[str, Person] = {}
        removed: set[str] = set()

        def current(slug: str) -> Person | None:
            if slug in known:  # as stored, or as this interaction changed it
                return known[slug]
            if slug in removed or everyone_listed:
                return None
            item = read.get(PERSON_KIND, slug)  # beyond the people matched by name: read by key
            return Person.model_validate(item.body) if item else None

        for text in texts:
            for mention in find_mentions(text, list(known.values())):
                person = self._with(current(mention.slug), mention, at)
                changed[person.slug] = known[person.slug] = person
                if person.name and person.role in UNIQUE_ROLES and person.slug != slugify(person.role):
                    unnamed_slug = slugify(person.role)
                    unnamed = current(unnamed_slug)
                    if unnamed is None or unnamed.name:
                        continue  # nobody to join, or a person literally named after the role
                    merged = absorb(person, unnamed, max_facts=self._policy.person_max_facts)
                    changed.pop(unnamed_slug, None)
                    known.pop(unnamed_slug, None)
                    removed.add(unnamed_slug)
                    changed[merged.slug] = known[merged.slug] = merged
        writes: list[ItemWrite] = [
            read.put(PERSON_KIND, slug, person.model_dump(mode="json")) for slug, person in changed.items()
        ]
        # Only a stored record is deleted (one created and joined by this same interaction never was).
        writes += [read.delete(PERSON_KIND, slug) for slug in sorted(removed) if read.get(PERSON_KIND, slug)]
        return writes

    def record_interaction(self, interaction: Interaction) -> None:
        """`plan`, read and written on its own (the recorded interaction writes it with the history instead)."""
        apply_alone(self._items, self, interaction, now=self._clock.now(), attempts=self._policy.write_attempts)

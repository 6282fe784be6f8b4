"""People the user mentions: found in every recorded user message, kept up to date across conversations."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from rapport.clock import Clock
from rapport.domain.models import Interaction, MessageRole, Page
from rapport.domain.people import Mention, Person, absorb, find_mentions, record_mention, slugify
from rapport.domain.people_rules import UNIQUE_ROLES
from rapport.domain.scope import Scope
from rapport.domain.signals import find_emotions, mood_delta
from rapport.errors import InvalidInputError, NotFoundError, RapportError
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.ports.signals import SentimentScorer
from rapport.services.relational_state import interaction_time
from rapport.services.versioned_items import modify_model
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

    def get(self, scope: ItemScope, slug: str) -> Person | None:
        item = self._items.get_item(scope, PERSON_KIND, slug)
        return Person.model_validate(item.body) if item else None

    def change(
        self,
        scope: ItemScope,
        slug: str,
        change: Callable[[Person | None], Person],
        *,
        now: datetime,
        attempts: int,
    ) -> Person:
        """Apply `change` to the stored person; a concurrent write makes it read again and re-apply."""
        return modify_model(self._items, scope, PERSON_KIND, slug, Person, change, now=now, attempts=attempts)

    def put(self, scope: ItemScope, person: Person, *, now: datetime) -> None:
        self._items.put_item(scope, PERSON_KIND, person.slug, person.model_dump(mode="json"), now=now)

    def delete(self, scope: ItemScope, slug: str) -> bool:
        """True when this call deleted it."""
        return self._items.delete_item(scope, PERSON_KIND, slug)


class PeopleService:
    def __init__(self, items: ItemStore, scorer: SentimentScorer, settings: Settings, clock: Clock) -> None:
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
        people: list[Person] = []
        cursor: str | None = None
        while len(people) < MAX_KNOWN_PEOPLE:
            page = self._people.page(scope, limit=100, cursor=cursor)
            people.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        return people

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

    def record_interaction(self, interaction: Interaction) -> None:
        """The listener on recorded interactions: every person in the user's messages gets the mention."""
        scope = ItemScope.of_user(interaction.scope)
        at = interaction_time(interaction)
        texts = [m.content for m in interaction.messages if m.role is MessageRole.USER and m.content.strip()]
        if not texts:
            return
        known = {p.slug: p for p in self._known(scope)}
        for text in texts:
            for mention in find_mentions(text, list(known.values())):
                person = self._write_mention(scope, mention, at)
                known[person.slug] = person
                if person.name and person.role in UNIQUE_ROLES and person.slug != slugify(person.role):
                    merged = self._absorb_unnamed(scope, person)
                    if merged is not None:
                        known.pop(slugify(person.role), None)
                        known[merged.slug] = merged

    def _write_mention(self, scope: ItemScope, mention: Mention, at: datetime) -> Person:
        return self._people.change(
            scope,
            mention.slug,
            lambda current: self._with(current, mention, at),
            now=self._clock.now(),
            attempts=self._policy.write_attempts,
        )

    def _absorb_unnamed(self, scope: ItemScope, named: Person) -> Person | None:
        """ "My mom" said before we knew her name is the same person as "my mom Linda": join the two records."""
        assert named.role is not None
        unnamed_slug = slugify(named.role)
        unnamed = self._people.get(scope, unnamed_slug)
        if unnamed is None:
            return None
        if unnamed.name:
            return None  # a person literally named after the role; leave it alone
        # Delete first: of two concurrent absorbs only the one whose delete succeeds adds the mentions.
        if not self._people.delete(scope, unnamed_slug):
            return None
        try:
            return self._people.change(
                scope,
                named.slug,
                lambda current: absorb(
                    named if current is None else current, unnamed, max_facts=self._policy.person_max_facts
                ),
                now=self._clock.now(),
                attempts=self._policy.write_attempts,
            )
        except RapportError:
            # Put the unnamed record back rather than lose its mentions.
            self._people.put(scope, unnamed, now=self._clock.now())
            raise

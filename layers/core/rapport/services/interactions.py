"""Recording conversations: the history item, and one episodic memory per message so recall can find what was said."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.models import (
    Domain,
    Interaction,
    Memory,
    Message,
    MessageRole,
    Page,
    PrecedingMessage,
    Provenance,
    SourceKind,
    Tier,
    UserMemoryType,
)
from rapport.errors import InvalidInputError, RapportError
from rapport.ids import new_id
from rapport.pipeline.models import PipelineRequest
from rapport.ports.pipeline import PipelineRun, PipelineStatus, PipelineTrigger
from rapport.ports.store import MemoryStore
from rapport.services.memories import MemoryService, NewMemory
from rapport.settings import Settings

# What a recorded interaction is handed to next (the extraction pipeline hooks in here).
InteractionListener = Callable[[Interaction], None]
# Runs before the interaction is stored and returns metadata to store with it (detected emotions, intent…).
InteractionEnricher = Callable[[Interaction], dict[str, Any]]

_EPISODE_IMPORTANCE = {MessageRole.USER: 0.5, MessageRole.ASSISTANT: 0.3}


class NewInteraction(BaseModel):
    messages: list[Message]
    channel: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: datetime | None = None
    metadata: dict[str, Any] | None = None


class RecordedInteraction(BaseModel):
    interaction: Interaction
    episodes: list[Memory]
    pipeline: PipelineRun | None = None  # the ingestion pipeline's run, when one is attached


class InteractionService:
    def __init__(
        self,
        store: MemoryStore,
        memories: MemoryService,
        settings: Settings,
        clock: Clock,
        listeners: list[InteractionListener] | None = None,
        enrichers: list[InteractionEnricher] | None = None,
    ) -> None:
        self._store = store
        self._memories = memories
        self._settings = settings
        self._clock = clock
        self._listeners = list(listeners or [])
        self._enrichers = list(enrichers or [])
        self._pipeline: PipelineTrigger | None = None

    def add_listener(self, listener: InteractionListener) -> None:
        self._listeners.append(listener)

    def add_enricher(self, enricher: InteractionEnricher) -> None:
        self._enrichers.append(enricher)

    def set_pipeline(self, pipeline: PipelineTrigger | None) -> None:
        """Every recorded interaction then starts the ingestion pipeline (after the listeners have run)."""
        self._pipeline = pipeline

    def _check(self, new: NewInteraction) -> None:
        limits = self._settings
        if not new.messages:
            raise InvalidInputError("messages is empty: send at least one message with role 'user'")
        if len(new.messages) > limits.max_messages_per_interaction:
            raise InvalidInputError(
                f"{len(new.messages)} messages; the limit is {limits.max_messages_per_interaction} per interaction"
            )
        if not any(m.role is MessageRole.USER and m.content.strip() for m in new.messages):
            raise InvalidInputError("no user message: an interaction needs at least one non-empty 'user' message")
        total = 0
        for position, message in enumerate(new.messages):
            if len(message.content) > limits.max_message_chars:
                raise InvalidInputError(
                    f"message {position} has {len(message.content)} characters; the limit is {limits.max_message_chars}"
                )
            total += len(message.content)
        if total > limits.max_interaction_chars:
            raise InvalidInputError(
                f"the interaction has {total} characters; the limit is {limits.max_interaction_chars}"
            )

    def record(
        self,
        tenant_id: str,
        user_id: str,
        new: NewInteraction,
        *,
        enrichment: dict[str, Any] | None = None,
        wait: bool = True,
    ) -> RecordedInteraction:
        """`enrichment`: metadata a server-side caller already computed (/v1/process detects signals before it
        replies); it replaces the enrichers' run so nothing is computed twice. Client metadata never counts as
        enrichment: enrichers' keys overwrite the client's. `wait`: run the pipeline to the end before returning
        (in process), or only start it."""
        self._check(new)
        now = self._clock.now()
        interaction = Interaction(
            id=new_id(now),
            tenant_id=tenant_id,
            user_id=user_id,
            messages=new.messages,
            channel=new.channel,
            session_id=new.session_id,
            occurred_at=new.occurred_at or now,
            created_at=now,
            metadata=new.metadata or {},
        )
        if enrichment is not None:
            interaction.metadata = {**interaction.metadata, **enrichment}
        else:
            for enricher in self._enrichers:
                interaction.metadata = {**interaction.metadata, **enricher(interaction)}
        before = self._last_said_in_session(tenant_id, user_id, interaction.session_id)
        episodes = [
            self._memories.build(tenant_id, user_id, episode)
            for episode in _episodes_of(interaction, self._settings, before)
        ]
        # Episodes first (they undo themselves on failure), then the history item that lists them.
        stored = self._memories.remember_many(tenant_id, user_id, episodes)
        interaction.memory_ids = [m.id for m in stored]
        try:
            self._store.put_interaction(interaction)
        except RapportError:
            for memory in stored:
                self._memories.delete(tenant_id, user_id, memory.id)
            raise
        for listener in self._listeners:
            listener(interaction)
        return RecordedInteraction(
            interaction=interaction,
            episodes=[m.without_embedding() for m in stored],
            pipeline=self._start_pipeline(interaction, wait),
        )

    def _start_pipeline(self, interaction: Interaction, wait: bool) -> PipelineRun | None:
        if self._pipeline is None:
            return None
        request = PipelineRequest(
            tenant_id=interaction.tenant_id, user_id=interaction.user_id, interaction_id=interaction.id
        )
        try:
            return self._pipeline.start(request, wait=wait)
        except RapportError as exc:
            # The history is written and stays: a pipeline that could not start is reported, not a failed request.
            return PipelineRun(interaction_id=interaction.id, status=PipelineStatus.FAILED, error=str(exc))

    def _last_said_in_session(self, tenant_id: str, user_id: str, session_id: str | None) -> PrecedingMessage | None:
        """The last message of the session's previous interaction, when the latest recorded interaction is of this
        session: a chat often records one exchange at a time, and its first message answers the one before."""
        if session_id is None or self._settings.episode_reply_chars == 0:
            return None
        latest = self._store.list_interactions(tenant_id, user_id, limit=1).items
        if not latest or latest[0].session_id != session_id:
            return None
        said = [m for m in latest[0].messages if m.role is not MessageRole.SYSTEM and m.content.strip()]
        return _preceding(said[-1], self._settings.episode_reply_chars) if said else None

    def history(self, tenant_id: str, user_id: str, *, limit: int, cursor: str | None) -> Page[Interaction]:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        return self._store.list_interactions(tenant_id, user_id, limit=limit, cursor=cursor)

    def get(self, tenant_id: str, user_id: str, interaction_id: str) -> Interaction:
        return self._store.get_interaction(tenant_id, user_id, interaction_id)


def _preceding(message: Message, chars: int) -> PrecedingMessage | None:
    """What an episode keeps of the message before it: who said it and its last `chars` characters (a long message
    ends with what the next one answers)."""
    if chars == 0:
        return None
    return PrecedingMessage(speaker=_speaker_of(message), content=message.content[-chars:])


def _speaker_of(message: Message) -> str:
    return message.name or message.role.value


def _episodes_of(interaction: Interaction, settings: Settings, before: PrecedingMessage | None) -> list[NewMemory]:
    """One episode per user or assistant message; a user's keeps the message said before it (`before` for the first)."""
    episodes: list[NewMemory] = []
    previous = before
    for position, message in enumerate(interaction.messages):
        if message.role is MessageRole.SYSTEM or not message.content.strip():
            continue
        episodes.append(
            NewMemory(
                content=message.content[: settings.max_content_chars],
                domain=Domain.USER,
                type=UserMemoryType.EPISODE.value,
                importance=_EPISODE_IMPORTANCE[message.role],
                tier=Tier.SHORT_TERM,
                occurred_at=interaction.occurred_at,
                source=Provenance(
                    kind=SourceKind.INTERACTION,
                    interaction_id=interaction.id,
                    message_index=position,
                    session_id=interaction.session_id,
                    channel=interaction.channel,
                    speaker=_speaker_of(message),
                ),
                # A person's message is read after what it answers ("Rex." to "what's your dog called?"); the
                # assistant's own replies are not, or they would resurface whenever the person repeats themselves.
                in_reply_to=previous if message.role is MessageRole.USER else None,
            )
        )
        previous = _preceding(message, settings.episode_reply_chars)
    return episodes

"""Recording conversations: the history item, and one episodic memory per message so recall can find what was said."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.models import (
    Domain,
    Interaction,
    Memory,
    MemoryStatus,
    Message,
    MessageRole,
    Page,
    PrecedingMessage,
    Provenance,
    SourceKind,
    Tier,
    Trust,
    UserMemoryType,
)
from rapport.domain.quarantine import QUARANTINE_KEY, instructions_in
from rapport.domain.scope import Scope
from rapport.domain.time_expressions import time_spans
from rapport.errors import ConflictError, InvalidInputError, NotFoundError, RapportError
from rapport.ids import derived_id, new_id
from rapport.ports.dead_letters import DeadLetter, DeadLetters, Failure
from rapport.ports.items import ItemRef, ItemScope, ItemStore, ItemWrite
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineRuns, PipelineStatus, PipelineTrigger
from rapport.ports.store import MemoryStore
from rapport.services.embedding import EmbeddedAhead
from rapport.services.memories import MemoryService, NewMemory
from rapport.services.signals import SignalService
from rapport.services.versioned_items import ItemsRead, Plan, back_off
from rapport.settings import Settings

logger = logging.getLogger(__name__)

_EPISODE_IMPORTANCE = {MessageRole.USER: 0.5, MessageRole.ASSISTANT: 0.3}
_TRUST_OF_ROLE = {MessageRole.USER: Trust.USER_SAID, MessageRole.ASSISTANT: Trust.ASSISTANT_SAID}


class NewInteraction(BaseModel):
    messages: list[Message]
    channel: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: datetime | None = None
    metadata: dict[str, Any] | None = None


class RecordedInteraction(BaseModel):
    interaction: Interaction
    episodes: list[Memory]
    pipeline: PipelineRun | None = None  # the ingestion pipeline's run, when a pipeline is configured
    replayed: bool = False  # recorded by an earlier attempt of the same request (the same interaction id)


class InteractionProgress(BaseModel):
    """How far an interaction's pipeline got: `pending` until a run has finished, then `done` or `failed` (a failed
    run is repeated by a replay or the next attempt). With no pipeline configured there is nothing to wait for: done."""

    interaction: Interaction
    status: str = Field(pattern="^(pending|done|failed)$")
    run: PipelineRun | None


class InteractionFollower(Protocol):
    """A consequence of a recorded interaction that belongs to the request (relational state, profile, people): it
    names the items it builds on, read together with every other participant's in one batch, and plans its writes
    from them; they are committed with the history item in one write."""

    def reads(self, interaction: Interaction) -> Sequence[ItemRef]: ...

    def plan(self, interaction: Interaction, read: ItemsRead) -> Sequence[ItemWrite]: ...


class DerivedWork(Protocol):
    """Work derived from a recorded interaction that a later run redoes (working memory, the retention cap): planned
    from the same batched read, its writes ride on the commit; what it does once the interaction is stored is its
    plan's `then` (trimming the history past its cap)."""

    def reads(self, interaction: Interaction) -> Sequence[ItemRef]: ...

    def plan(self, interaction: Interaction, read: ItemsRead) -> Plan: ...


class InteractionService:
    """Records a conversation, then reads the history back.

    Failure policy of `record`, one for every side effect:
    1. Before any write: validate, detect signals, build and embed the episodes. A failure stores nothing.
    2. What the interaction means for the relationship (relational state, profile, people) is part of the request:
       each follower plans its writes from one batched read of every participant's items; if planning fails, with
       an error of any kind, nothing is written and the request fails.
    3. The commit: the history item, its episodes, the registration and every planned write in one atomic write,
       then the episodes indexed. A concurrent change of an item read makes the write a conflict that stores
       nothing: read again and plan again. An index failure takes the commit back, planned writes included. Either
       way a failed request leaves nothing stored, so a client's retry cannot store the conversation twice.
    4. Derived work (working memory, the retention cap, graph links) never fails a stored request: a plan that
       fails is logged and its writes left out of the commit, what follows the commit (trimming) is logged when it
       fails, and each is redone by a later run (the next interaction, the nightly jobs, `rapport reindex`).
    5. The pipeline is started last; a pipeline that cannot start is reported in the answer, not raised.
    """

    def __init__(
        self,
        *,
        store: MemoryStore,
        items: ItemStore,
        memories: MemoryService,
        signals: SignalService,
        followers: Sequence[InteractionFollower],
        derived: Sequence[DerivedWork],
        pipeline: PipelineTrigger | None,
        runs: PipelineRuns | None,
        settings: Settings,
        clock: Clock,
        dead_letters: DeadLetters | None = None,
        ahead: EmbeddedAhead | None = None,
    ) -> None:
        self._store = store
        self._items = items  # the store's own items: the planned writes are committed through the store
        self._dead_letters = dead_letters  # where a start that failed waits for `rapport dlq replay`
        self._ahead = ahead  # the in-process pipeline's sentences, embedded with the episodes
        self._runs = runs
        self._memories = memories
        self._signals = signals
        self._followers = list(followers)
        self._derived = list(derived)
        self._pipeline = pipeline
        self._settings = settings
        self._clock = clock

    def record(
        self,
        scope: Scope,
        new: NewInteraction,
        *,
        enrichment: dict[str, Any] | None = None,
        interaction_id: str | None = None,
        wait: bool = True,
    ) -> RecordedInteraction:
        """`enrichment`: signals a server-side caller already detected (/v1/process detects them before it replies),
        so nothing is computed twice; client metadata never counts as enrichment: detected keys overwrite the
        client's. `interaction_id`: the id a caller fixed beforehand (a turn's), so its retries record one
        interaction. `wait`: run the pipeline to the end before returning (in process), or only start it."""
        self._check(new)
        if interaction_id is not None:
            # A retry of a write that got far (an earlier attempt timed out after its commit) answers what that
            # attempt recorded, and starts its pipeline again: a completed run is not repeated, a lost start is
            # made up for.
            earlier = self._recorded_before(scope, interaction_id, wait)
            if earlier is not None:
                return earlier
        interaction = self._interaction_of(scope, new, interaction_id)
        episodes = self._embedded_episodes(interaction)
        # Signals after the episodes' embedder call: a reading by meaning finds the messages' vectors kept by it.
        detected = enrichment if enrichment is not None else self._signals.enrich(interaction)
        interaction.metadata = {**interaction.metadata, **detected}
        interaction.memory_ids = [m.id for m in episodes]
        for then in self._commit(interaction, episodes):
            _run_derived(then, interaction)
        self._memories.note_assistant(scope)
        self._memories.announce_stored(scope, episodes)
        return RecordedInteraction(
            interaction=interaction,
            episodes=[m.without_embedding() for m in episodes],
            pipeline=self._start_pipeline(interaction, wait, recorded=True),
        )

    def history(self, scope: Scope, *, limit: int, cursor: str | None) -> Page[Interaction]:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        return self._store.list_interactions(scope, limit=limit, cursor=cursor)

    def get(self, scope: Scope, interaction_id: str) -> Interaction:
        return self._store.get_interaction(scope, interaction_id)

    def recorded(self, scope: Scope, interaction_id: str, pipeline: PipelineRun | None) -> RecordedInteraction:
        """A recorded interaction's answer, read back: its episodes, and the memories `pipeline`'s outcome names."""
        interaction = self._store.get_interaction(scope, interaction_id)
        if pipeline is not None and pipeline.outcome is not None:
            ids = [*pipeline.outcome.stored, *pipeline.outcome.reinforced]
            found = {m.id: m for m in self._store.get_memories(scope, ids)}
            memories = [found[i].without_embedding() for i in ids if i in found]
            pipeline = pipeline.model_copy(update={"memories": memories})
        return RecordedInteraction(
            interaction=interaction, episodes=self._episodes_stored(interaction), pipeline=pipeline, replayed=True
        )

    def _recorded_before(self, scope: Scope, interaction_id: str, wait: bool) -> RecordedInteraction | None:
        try:
            interaction = self._store.get_interaction(scope, interaction_id)
        except NotFoundError:
            return None
        return RecordedInteraction(
            interaction=interaction,
            episodes=self._episodes_stored(interaction),
            pipeline=self._start_pipeline(interaction, wait, recorded=False),
            replayed=True,
        )

    def _episodes_stored(self, interaction: Interaction) -> list[Memory]:
        found = {m.id: m for m in self._store.get_memories(interaction.scope, interaction.memory_ids)}
        return [found[i].without_embedding() for i in interaction.memory_ids if i in found]

    def progress(self, scope: Scope, interaction_id: str) -> InteractionProgress:
        interaction = self._store.get_interaction(scope, interaction_id)
        if self._pipeline is None or self._runs is None:
            return InteractionProgress(interaction=interaction, status="done", run=None)
        run = self._runs.get(scope, interaction_id)
        status = {PipelineStatus.COMPLETED: "done", PipelineStatus.FAILED: "failed"}.get(
            run.status if run else PipelineStatus.RUNNING, "pending"
        )
        return InteractionProgress(interaction=interaction, status=status, run=run)

    # the steps of `record`

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

    def _interaction_of(self, scope: Scope, new: NewInteraction, interaction_id: str | None) -> Interaction:
        now = self._clock.now()
        return Interaction(
            id=interaction_id or new_id(now),
            tenant_id=scope.tenant_id,
            user_id=scope.user_id,
            messages=new.messages,
            channel=new.channel,
            session_id=new.session_id,
            occurred_at=new.occurred_at or now,
            created_at=now,
            metadata=new.metadata or {},
            agent_id=scope.agent_id,
        )

    def _embedded_episodes(self, interaction: Interaction) -> list[Memory]:
        """The episodes with their vectors, and in the same embedder call the texts the pipeline will embed next."""
        also = self._ahead.texts_for(interaction) if self._ahead is not None else []
        if not also:
            return self._memories.embedded(self._episodes_of(interaction))
        episodes, vectors = self._memories.embedded_with(self._episodes_of(interaction), also)
        if self._ahead is not None:
            self._ahead.keep(also, vectors)
        return episodes

    def _episodes_of(self, interaction: Interaction) -> list[Memory]:
        before = self._last_said_in_session(interaction.scope, interaction.session_id)
        return [
            self._memories.build(interaction.scope, episode)
            for episode in _episodes_of(interaction, self._settings, before)
        ]

    def _last_said_in_session(self, scope: Scope, session_id: str | None) -> PrecedingMessage | None:
        """The last message of the session's previous interaction, when the latest recorded interaction is of this
        session: a chat often records one exchange at a time, and its first message answers the one before."""
        if session_id is None or self._settings.episode_reply_chars == 0:
            return None
        latest = self._store.list_interactions(scope, limit=1).items
        if not latest or latest[0].session_id != session_id:
            return None
        said = [m for m in latest[0].messages if m.role is not MessageRole.SYSTEM and m.content.strip()]
        return _preceding(said[-1], self._settings.episode_reply_chars) if said else None

    def _commit(self, interaction: Interaction, episodes: list[Memory]) -> list[Callable[[], None]]:
        """Points 2 and 3 of the failure policy: every participant's items read together, the followers' and derived
        work's writes planned from them, then all of it stored with the history in one write. Returns what derived
        work does next."""
        scope = ItemScope.of_user(interaction.scope)
        participants: list[InteractionFollower | DerivedWork] = [*self._followers, *self._derived]
        refs = [ref for participant in participants for ref in participant.reads(interaction)]
        attempts = self._settings.relational.write_attempts
        for attempt in range(attempts):
            read = ItemsRead(self._items, scope, refs)
            writes = [write for follower in self._followers for write in follower.plan(interaction, read)]
            plans = [plan for work in self._derived if (plan := _planned(work, interaction, read)) is not None]
            writes += [write for plan in plans for write in plan.writes]
            try:
                self._memories.remember_interaction(
                    interaction,
                    episodes,
                    with_items=writes,
                    # An item of theirs exists only once an interaction of theirs was recorded, which registered them.
                    known_user=read.found_any(),
                    undo_items=partial(read.take_back, writes, now=self._clock.now()),
                )
            except ConflictError:
                back_off(attempt)
                continue
            return [plan.then for plan in plans if plan.then is not None]
        raise ConflictError("this user's state kept changing while the interaction was recorded; retry the request")

    def _start_pipeline(self, interaction: Interaction, wait: bool, *, recorded: bool) -> PipelineRun | None:
        """`recorded`: this request has just stored the interaction, so no run of it has started yet."""
        if self._pipeline is None:
            return None
        request = PipelineRequest(
            tenant_id=interaction.tenant_id,
            user_id=interaction.user_id,
            interaction_id=interaction.id,
            agent_id=interaction.agent_id,
        )
        try:
            return self._pipeline.start(request, wait=wait, recorded=interaction if recorded else None)
        except Exception as exc:
            # The history is written and stays: a pipeline that could not start is reported, not a failed request.
            logger.warning("pipeline not started for interaction %s", interaction.id, exc_info=True)
            self._park(request, exc)
            message = str(exc) if isinstance(exc, RapportError) else f"{type(exc).__name__}: {exc}"
            return PipelineRun(interaction_id=interaction.id, status=PipelineStatus.FAILED, error=message)

    def _park(self, request: PipelineRequest, exc: Exception) -> None:
        if self._dead_letters is None:
            return
        letter = DeadLetter(request=request, failure=Failure(error=type(exc).__name__, cause=str(exc)))
        try:
            self._dead_letters.send(letter)
        except Exception:
            logger.exception("could not park the unstarted run of interaction %s", request.interaction_id)


def _planned(work: DerivedWork, interaction: Interaction, read: ItemsRead) -> Plan | None:
    try:
        return work.plan(interaction, read)
    except Exception:
        logger.warning("derived work %r not planned for interaction %s", work, interaction.id, exc_info=True)
        return None


def _run_derived(then: Callable[[], None], interaction: Interaction) -> None:
    try:
        then()
    except Exception:
        logger.warning("derived work %r failed after interaction %s", then, interaction.id, exc_info=True)


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
        # Words that read as instructions to the assistant are kept as said, but quarantined: never recalled into a
        # prompt until the tenant restores them (docs/security.md).
        finding = instructions_in(message.content)
        episodes.append(
            NewMemory(
                # Named after the interaction: a retry of a write that stopped half way writes the same episodes.
                id=derived_id(interaction.id, f"episode#{position}"),
                content=message.content[: settings.max_content_chars],
                domain=Domain.USER,
                type=UserMemoryType.EPISODE.value,
                importance=_EPISODE_IMPORTANCE[message.role],
                tier=Tier.SHORT_TERM,
                trust=_TRUST_OF_ROLE[message.role],
                status=MemoryStatus.ACTIVE if finding is None else MemoryStatus.QUARANTINED,
                metadata=None if finding is None else {QUARANTINE_KEY: finding.marker()},
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
                # "yesterday" means a date only beside when it was said: resolved now, matched on by recall.
                mentioned_dates=time_spans(message.content, interaction.occurred_at)
                if settings.resolve_message_dates
                else [],
            )
        )
        previous = _preceding(message, settings.episode_reply_chars)
    return episodes

"""`/v1/process`: one user message in; signals, state, memories, people, a system prompt and a reply out."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from rapport.clock import Clock
from rapport.domain.models import DomainFilter, Interaction, Message, MessageRole
from rapport.domain.profile import Profile
from rapport.domain.recall import RecallHit, RecallQuery
from rapport.domain.relational_state import StateReading
from rapport.domain.reply_context import ReplyContext, build_system_prompt
from rapport.domain.scope import Scope
from rapport.domain.signals import Signals, to_metadata
from rapport.errors import InvalidInputError
from rapport.ports.items import ItemScope
from rapport.ports.language_model import LanguageModel
from rapport.services.idempotency import IdempotentRequests, KeyedRequest, RemainingTime
from rapport.services.interactions import InteractionService
from rapport.services.memories import MemoryService
from rapport.services.people import PeopleService
from rapport.services.profiles import ProfileService
from rapport.services.recall import Recall
from rapport.services.relational_state import RelationalStateService
from rapport.services.signals import SignalService
from rapport.services.turns import TurnService, TurnStatus
from rapport.settings import Settings

_HISTORY_PAGE = 10  # interactions looked at for earlier turns of the conversation


class PreviousReply(BaseModel):
    """The caller's own model's reply to this person's previous turn, sent along with their next message."""

    turn_id: str
    reply: str


class ProcessOutcome(BaseModel):
    reply: str | None
    memories: list[RecallHit]  # top-K of both domains above the bar, most relevant first
    relational_notes: list[RecallHit]  # how we work with this person, when the top-K left it out
    total_stored: int
    profile: Profile | None
    state: StateReading  # as this message leaves it
    context_state: StateReading  # what the prompt was built from
    system_prompt: str
    signals: Signals
    crisis: bool
    turn_id: str  # the id the turn is (or will be) recorded under, as an interaction
    turn_status: TurnStatus
    interaction: Interaction | None  # recorded when we wrote the reply; otherwise when the caller sends its reply
    replayed: bool | None = None  # a keyed request's retry (True), its first answer (False); None without a key


class ProcessService:
    def __init__(
        self,
        *,
        memories: MemoryService,
        recall: Recall,
        interactions: InteractionService,
        turns: TurnService,
        once: IdempotentRequests,
        signals: SignalService,
        state: RelationalStateService,
        profiles: ProfileService,
        people: PeopleService,
        language_model: LanguageModel | None,
        settings: Settings,
        clock: Clock,
    ) -> None:
        self._memories = memories
        self._recall = recall
        self._interactions = interactions
        self._turns = turns
        self._once = once
        self._signals = signals
        self._state = state
        self._profiles = profiles
        self._people = people
        self._model = language_model
        self._settings = settings
        self._policy = settings.relational
        self._clock = clock

    def _check(self, message: str) -> str:
        text = message.strip()
        if not text:
            raise InvalidInputError("message is empty: send what the user said")
        if len(message) > self._settings.max_message_chars:
            raise InvalidInputError(
                f"message has {len(message)} characters; the limit is {self._settings.max_message_chars}"
            )
        return text

    def process(
        self,
        scope: Scope,
        message: str,
        *,
        channel: str | None = None,
        session_id: str | None = None,
        previous: PreviousReply | None = None,
        keyed: KeyedRequest | None = None,
        deadline: RemainingTime | None = None,
    ) -> ProcessOutcome:
        """One turn: the message is kept as a turn at once; the turn is recorded as an interaction (history, state,
        people, the pipeline) when its reply is known — ours, when a language model is configured, or the caller's,
        sent to `TurnService.reply` or as `previous` with the next message.

        Under an Idempotency-Key the turn's id derives from the key: a retry answers the same turn (and the reply
        the first attempt recorded, without asking the model again), with the context as it stands now, and
        neither records nor reinforces anything a second time."""
        text = self._check(message)
        if keyed is None:
            return self._turn(scope, text, message, channel, session_id, previous, turn_id=None)
        fresh: list[ProcessOutcome] = []

        def write(turn_id: str) -> dict[str, Any]:
            fresh.append(self._turn(scope, text, message, channel, session_id, previous, turn_id=turn_id))
            return {"turn_id": turn_id}

        once = self._once.run(ItemScope.of_user(scope), keyed, write, deadline=deadline)
        if fresh:
            return fresh[0].model_copy(update={"replayed": False})
        turn_id = str(once.value["turn_id"])
        again = self._turn(scope, text, message, channel, session_id, previous, turn_id=turn_id)
        return again.model_copy(update={"replayed": True})

    def _turn(
        self,
        scope: Scope,
        text: str,
        message: str,
        channel: str | None,
        session_id: str | None,
        previous: PreviousReply | None,
        *,
        turn_id: str | None,
    ) -> ProcessOutcome:
        if previous is not None:
            self._turns.reply(scope, previous.turn_id, previous.reply, wait=False)
        # A keyed retry finds the turn its first attempt began (and maybe recorded).
        earlier = self._turns.find(scope, turn_id) if turn_id else None
        now = self._clock.now()
        signals = self._signals.detect(text)
        # The prompt is built from the state as this message leaves it; the state itself moves once, when the turn
        # is recorded (through the interaction's followers), so a message is never counted twice.
        recorded_before = earlier is not None and earlier.status is TurnStatus.RECORDED
        context_state = self._state.read(scope, now) if recorded_before else self._state.preview(scope, signals, now)
        hits, notes = self._relevant_memories(scope, text)
        crisis = signals.crisis or context_state.crisis_open
        system_prompt = build_system_prompt(
            ReplyContext(
                state=context_state,
                memories=[h.memory for h in [*hits, *notes]],
                people=self._people.mentioned_in(scope, text, now),
                emotions=signals.emotions,
                intent=signals.intent,
                crisis=crisis,
            )
        )
        reply: str | None = earlier.reply if earlier is not None and recorded_before else None
        if self._model is not None and not recorded_before:
            history = self._earlier_turns(scope, session_id, now)
            reply = self._model.reply(
                system=system_prompt, messages=[*history, Message(role=MessageRole.USER, content=text)]
            )
        turn = earlier or self._turns.begin(
            scope, message, enrichment=to_metadata(signals), channel=channel, session_id=session_id, turn_id=turn_id
        )
        interaction: Interaction | None = None
        if recorded_before:
            interaction = self._interactions.get(scope, turn.id)
            state, profile = context_state, self._profiles.get(scope)
        elif reply and reply.strip():
            # A long model answer must not make the turn fail the history's size rule.
            answered = self._turns.answered(scope, turn, reply[: self._settings.max_message_chars])
            turn, interaction = answered.turn, answered.recorded.interaction
            state, profile = self._state.read(scope, now), self._profiles.get(scope)
        else:
            reply = None
            # The state and profile returned are the ones this turn will leave once its reply is recorded.
            state, profile = context_state, self._profiles.preview(scope, now)
        if earlier is None:
            # The memories went into the reply's context (ours, or the caller's own model with our prompt).
            self._memories.reinforce(scope, [h.memory.id for h in [*hits, *notes]], self._policy.reinforcement_boost)
        return ProcessOutcome(
            reply=reply,
            memories=hits,
            relational_notes=notes,
            total_stored=self._memories.count(scope),
            profile=profile,
            state=state,
            context_state=context_state,
            system_prompt=system_prompt,
            signals=signals,
            crisis=crisis,
            turn_id=turn.id,
            turn_status=turn.status,
            interaction=interaction,
        )

    def _relevant_memories(self, scope: Scope, text: str) -> tuple[list[RecallHit], list[RecallHit]]:
        """Top-K of both domains above the similarity bar, then (apart) the relational memories above it that the
        top-K left out: how we work with this person matters to a reply even when a fact outranks it. Both search
        by the same text, so it is embedded once."""
        query = text[: self._settings.max_content_chars]
        policy = self._policy
        vector = self._recall.query_vector(query)
        hits = self._recall.recall(
            scope,
            RecallQuery(
                query=query,
                domain=DomainFilter.BOTH,
                limit=policy.process_top_k,
                min_similarity=policy.process_min_similarity,
            ),
            vector=vector,
        )
        notes: list[RecallHit] = []
        if policy.process_relational_limit:
            seen = {h.memory.id for h in hits}
            relational = self._recall.recall(
                scope,
                RecallQuery(
                    query=query,
                    domain=DomainFilter.RELATIONAL,
                    limit=policy.process_relational_limit,
                    min_similarity=policy.process_min_similarity,
                ),
                vector=vector,
            )
            notes = [h for h in relational if h.memory.id not in seen]
        return hits, notes

    def _earlier_turns(self, scope: Scope, session_id: str | None, now: datetime) -> list[Message]:
        """The conversation so far, for the model: the same session's last turns, or (without a session id)
        the turns of the last working-memory window."""
        limit = self._policy.process_history_messages
        if limit == 0:
            return []
        window_start = now - timedelta(minutes=self._policy.process_history_window_minutes)
        turns: list[Message] = []
        page = self._interactions.history(scope, limit=_HISTORY_PAGE, cursor=None)
        for interaction in page.items:  # newest first
            if interaction.agent_id != scope.agent_id:
                continue  # the history is shared, a conversation is one assistant's
            same = (
                interaction.session_id == session_id
                if session_id
                else interaction.session_id is None and interaction.occurred_at >= window_start
            )
            if not same:
                continue
            turns = [m for m in interaction.messages if m.role is not MessageRole.SYSTEM] + turns
            if len(turns) >= limit:
                break
        return turns[-limit:]

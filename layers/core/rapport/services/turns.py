"""One conversational turn: what the person said (kept when `/v1/process` sees it) and the assistant's reply (attached
by the caller when its own model has answered); together they are recorded as one interaction.

A turn's id is the id its interaction will be recorded under, fixed when the turn begins: a reply sent twice, or
retried after a write that got half way, records that one interaction and no other. Only one reply is recorded at
a time: the first claims the turn (a versioned write), a simultaneous second is told the turn is being recorded.
A turn that never gets a reply expires unrecorded: a caller that records the exchange itself (`POST
/interactions`, as before turns existed) must not find the person's message in the history twice.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import ConflictError, InvalidInputError, NotFoundError
from rapport.ids import new_id
from rapport.ports.items import ItemScope, ItemStore, StoredItem
from rapport.services.interactions import InteractionService, NewInteraction, RecordedInteraction
from rapport.settings import Settings

TURN_KIND = "TURN"
# A claim older than this is taken to be a reply whose request died; a retry may take the turn over.
_CLAIM_LEASE = timedelta(minutes=5)


class TurnStatus(StrEnum):
    AWAITING_REPLY = "awaiting_reply"
    RECORDING = "recording"  # a reply claimed the turn and is being recorded
    RECORDED = "recorded"


class Turn(BaseModel):
    id: str = Field(description="Also the id of the interaction the turn is recorded as.")
    message: str
    channel: str | None = None
    session_id: str | None = None
    enrichment: dict[str, Any] = Field(default_factory=dict)  # the signals detected when the person spoke
    began_at: datetime
    status: TurnStatus = TurnStatus.AWAITING_REPLY
    reply: str | None = None
    claimed_at: datetime | None = None
    agent_id: str = DEFAULT_AGENT  # the assistant the person spoke to: the reply is recorded as its interaction


class TurnReply(BaseModel):
    turn: Turn
    recorded: RecordedInteraction
    replayed: bool  # the reply had been recorded already, by an earlier request


class TurnService:
    def __init__(self, *, items: ItemStore, interactions: InteractionService, settings: Settings, clock: Clock) -> None:
        self._items = items
        self._interactions = interactions
        self._settings = settings
        self._clock = clock

    def begin(
        self,
        scope: Scope,
        message: str,
        *,
        enrichment: dict[str, Any],
        channel: str | None,
        session_id: str | None,
        turn_id: str | None = None,
    ) -> Turn:
        """Keep what the person said until a reply comes. `turn_id`: an id fixed beforehand (a keyed request's)."""
        now = self._clock.now()
        turn = Turn(
            id=turn_id or new_id(now),
            message=message,
            channel=channel,
            session_id=session_id,
            enrichment=enrichment,
            began_at=now,
            agent_id=scope.agent_id,
        )
        self._put(scope, turn, expected_version=0)
        return turn

    def find(self, scope: Scope, turn_id: str) -> Turn | None:
        try:
            return Turn.model_validate(self._get(scope, turn_id).body)
        except NotFoundError:
            return None

    def answered(self, scope: Scope, turn: Turn, reply: str) -> TurnReply:
        """A turn whose reply is known at once (the server's own model wrote it): recorded in the same request."""
        return self.reply(scope, turn.id, reply, wait=False)

    def reply(self, scope: Scope, turn_id: str, reply: str, *, wait: bool = True) -> TurnReply:
        if not reply.strip():
            raise InvalidInputError("reply is empty: send what the assistant answered")
        if len(reply) > self._settings.max_message_chars:
            raise InvalidInputError(
                f"reply has {len(reply)} characters; the limit is {self._settings.max_message_chars}"
            )
        now = self._clock.now()
        item = self._get(scope, turn_id)
        turn = Turn.model_validate(item.body)
        if turn.status is not TurnStatus.AWAITING_REPLY and turn.reply != reply:
            raise ConflictError(f"turn {turn_id} already has a different reply")
        if turn.status is TurnStatus.RECORDED:
            return TurnReply(turn=turn, recorded=_recorded(self._interactions.get(scope, turn.id)), replayed=True)
        if turn.status is TurnStatus.RECORDING and turn.claimed_at and now - turn.claimed_at < _CLAIM_LEASE:
            raise ConflictError(f"a reply to turn {turn_id} is being recorded; retry in a few seconds")
        claimed = turn.model_copy(update={"status": TurnStatus.RECORDING, "reply": reply, "claimed_at": now})
        claim = self._put(scope, claimed, expected_version=item.version)
        # A claim that expired may have recorded the interaction and died before it could close the turn: recording
        # under the turn's id then answers that interaction as a replay, writing nothing again.
        try:
            recorded = self._record(scope, claimed, wait=wait)
        except BaseException:
            self._put(scope, turn, expected_version=claim.version)  # nothing was stored: it awaits a reply
            raise
        done = claimed.model_copy(update={"status": TurnStatus.RECORDED})
        self._put(scope, done, expected_version=claim.version)
        return TurnReply(turn=done, recorded=recorded, replayed=recorded.replayed)

    def _record(self, scope: Scope, turn: Turn, *, wait: bool) -> RecordedInteraction:
        messages = [Message(role=MessageRole.USER, content=turn.message)]
        if turn.reply is not None:
            messages.append(Message(role=MessageRole.ASSISTANT, content=turn.reply))
        return self._interactions.record(
            # Whoever sends the reply, the turn was the assistant's that began it.
            scope.for_agent(turn.agent_id),
            NewInteraction(
                messages=messages, channel=turn.channel, session_id=turn.session_id, occurred_at=turn.began_at
            ),
            enrichment=turn.enrichment,
            interaction_id=turn.id,
            wait=wait,
        )

    def _get(self, scope: Scope, turn_id: str) -> StoredItem:
        item = self._items.get_item(ItemScope.of_user(scope), TURN_KIND, turn_id)
        if item is None or not item.is_live(self._clock.now()):
            raise NotFoundError(f"turn {turn_id} not found")
        return item

    def _put(self, scope: Scope, turn: Turn, *, expected_version: int) -> StoredItem:
        return self._items.put_item(
            ItemScope.of_user(scope),
            TURN_KIND,
            turn.id,
            turn.model_dump(mode="json"),
            now=self._clock.now(),
            expected_version=expected_version,
            expires_at=turn.began_at + timedelta(days=self._settings.relational.turn_retention_days),
        )


def _recorded(interaction: Interaction) -> RecordedInteraction:
    return RecordedInteraction(interaction=interaction, episodes=[], pipeline=None)

"""LangChain over Rapport: `RapportRetriever` (recall → Documents) and `RapportChatMessageHistory` (a chat's
messages recorded as interactions, its history read back as messages)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from rapport_client.client import AsyncRapport, Rapport
from rapport_client.models import Interaction, Message, RecallHit

# Retrieval


class RapportRetriever(BaseRetriever):
    """Rapport's recall as a LangChain retriever, for one end user: the best `k` memories for the query, each a
    `Document` whose `page_content` is the memory and whose metadata carries its id, `similarity`, composed
    `score`, `match_strength`, `match_reasons`, domain, type and times. Pass `async_client` for a native
    `ainvoke`; without one the blocking client runs in a worker thread."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Rapport
    user_id: str
    k: int = Field(5, ge=1, le=100)
    domain: Literal["user", "relational", "both"] = "both"
    min_similarity: float | None = None
    async_client: AsyncRapport | None = None
    agent_id: str | None = None  # the tenant's assistant recalling (None: the client's, else the default)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        found = self.client.memories.search(
            self.user_id,
            query,
            limit=self.k,
            domain=self.domain,
            min_similarity=self.min_similarity,
            agent_id=self.agent_id,
        )
        return [_document(hit) for hit in found.memories]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        found = await self.async_client.memories.search(
            self.user_id,
            query,
            limit=self.k,
            domain=self.domain,
            min_similarity=self.min_similarity,
            agent_id=self.agent_id,
        )
        return [_document(hit) for hit in found.memories]


def _document(hit: RecallHit) -> Document:
    return Document(
        id=hit.id,
        page_content=hit.content,
        metadata={
            "id": hit.id,
            "user_id": hit.user_id,
            "domain": hit.domain,
            "type": hit.type,
            "similarity": hit.similarity,
            "score": hit.score,
            "match_strength": hit.match_strength,
            "match_reasons": list(hit.match_reasons),
            "created_at": hit.created_at.isoformat(),
            "occurred_at": hit.occurred_at.isoformat() if hit.occurred_at else None,
        },
    )


# Chat history

_ROLE_OF: dict[type[BaseMessage], str] = {HumanMessage: "user", AIMessage: "assistant", SystemMessage: "system"}
_ROLES = frozenset(_ROLE_OF.values())


class RapportChatMessageHistory(BaseChatMessageHistory):
    """A chat's messages for one end user as Rapport interactions. `add_messages` records the messages given in one
    call as one interaction (with `RunnableWithMessageHistory`, one per turn: the question and its answer), so
    Rapport's pipeline learns from them; `messages` reads the latest `max_interactions` interactions back, oldest
    first, only those of `session_id` when one is given.

    Human, AI and system messages are recorded; tool messages and AI messages without text (a tool call alone) are
    not, as they are not said to the person. `clear()` raises `NotImplementedError` unless `erase_on_clear=True`:
    Rapport deletes history only by erasing everything about the user (memories, state, people too)."""

    def __init__(
        self,
        client: Rapport,
        user_id: str,
        *,
        session_id: str | None = None,
        channel: str | None = "langchain",
        max_interactions: int = 50,
        wait: bool = False,
        erase_on_clear: bool = False,
        agent_id: str | None = None,
    ) -> None:
        if not user_id:
            raise ValueError("user_id is required: the end user whose conversation this is")
        if max_interactions < 1:
            raise ValueError("max_interactions must be at least 1")
        self.client = client
        self.user_id = user_id
        self.session_id = session_id
        self.channel = channel
        self.max_interactions = max_interactions
        # False: a chat turn is answered as soon as the exchange is stored; the pipeline's memories follow.
        self.wait = wait
        self.erase_on_clear = erase_on_clear
        # The tenant's assistant this chat is with (None: the client's): its messages are read back, and recorded as
        # its interactions.
        self.agent_id = agent_id

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        newest_first = islice(self._interactions(), self.max_interactions)
        return [_message(m) for interaction in reversed(list(newest_first)) for m in interaction.messages]

    def _interactions(self) -> Iterator[Interaction]:
        page = min(self.max_interactions, 100)
        for interaction in self.client.interactions.history(self.user_id, page_size=page):
            if self.agent_id is not None and interaction.agent_id != self.agent_id:
                continue  # the history is the tenant's; a chat is one assistant's
            if self.session_id is None or interaction.session_id == self.session_id:
                yield interaction

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        sent = [wire for wire in (_wire(m) for m in messages) if wire is not None]
        if not sent:
            return
        self.client.interactions.record(
            self.user_id, sent, channel=self.channel, session_id=self.session_id, wait=self.wait, agent_id=self.agent_id
        )

    def clear(self) -> None:
        if not self.erase_on_clear:
            raise NotImplementedError(
                "Rapport deletes a conversation history only with everything else about the user: pass "
                "erase_on_clear=True to make clear() erase the user (client.users.erase)"
            )
        self.client.users.erase(self.user_id)


def _wire(message: BaseMessage) -> dict[str, Any] | None:
    role = next((r for kind, r in _ROLE_OF.items() if isinstance(message, kind)), None)
    if role is None and isinstance(message, ChatMessage) and message.role in _ROLES:
        role = message.role
    text = message.text
    if role is None or not text.strip():
        return None
    wire: dict[str, Any] = {"role": role, "content": text}
    if message.name:
        wire["name"] = message.name[:128]
    return wire


def _message(message: Message) -> BaseMessage:
    kind = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}.get(message.role)
    if kind is None:
        return ChatMessage(role=message.role, content=message.content, name=message.name)
    built: BaseMessage = kind(content=message.content, name=message.name)
    return built

"""The conversation as the extraction prompts show it: numbered messages, newest kept when it is too long."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from rapport.domain.models import Interaction, MessageRole


class PromptMessage(BaseModel):
    index: int = Field(description="Position of the message in the interaction; cite it as evidence.")
    role: MessageRole
    content: str
    name: str | None = None


class ConversationInput(BaseModel):
    messages: list[PromptMessage]
    channel: str | None = None
    occurred_at: str | None = None
    truncated: bool = Field(False, description="True when older messages were left out to fit the prompt.")
    withheld: list[int] = Field(
        default_factory=list,
        description="Indexes of messages left out because they read as instructions to the assistant; nothing is to "
        "be remembered from them.",
    )

    @classmethod
    def of(cls, interaction: Interaction, max_chars: int, withheld: frozenset[int] = frozenset()) -> ConversationInput:
        """The newest messages that fit in `max_chars` (at least the last one, cut to fit): a long session's end is
        where its outcome and the user's reaction are. `withheld`: positions of messages the extractor must not
        read (rapport.domain.quarantine.withheld_messages)."""
        kept: list[PromptMessage] = []
        budget = max_chars
        for index in range(len(interaction.messages) - 1, -1, -1):
            message = interaction.messages[index]
            if message.role is MessageRole.SYSTEM or not message.content.strip() or index in withheld:
                continue
            content = message.content
            if len(content) > budget:
                if kept:
                    break
                content = content[-budget:]
            kept.append(PromptMessage(index=index, role=message.role, content=content, name=message.name))
            budget -= len(content)
            if budget <= 0:
                break
        kept.reverse()
        shown = {m.index for m in kept}
        dropped = any(
            i not in shown and i not in withheld and m.role is not MessageRole.SYSTEM and m.content.strip()
            for i, m in enumerate(interaction.messages)
        )
        return cls(
            messages=kept,
            channel=interaction.channel,
            occurred_at=interaction.occurred_at.isoformat(),
            truncated=dropped,
            withheld=sorted(withheld),
        )

    def with_user_texts(self, rewrite: Callable[[str], str]) -> ConversationInput:
        """The conversation with each user message's text rewritten (the others as they are)."""
        messages = [
            m.model_copy(update={"content": rewrite(m.content)}) if m.role is MessageRole.USER else m
            for m in self.messages
        ]
        return self.model_copy(update={"messages": messages})

    def among_several(self) -> bool:
        """People talking among themselves: user messages under two or more names (a group chat, a transcript). What
        is said there is not said to me, and "the user" is not one person."""
        names = {m.name.strip().lower() for m in self.messages if m.role is MessageRole.USER and m.name}
        return len(names) > 1

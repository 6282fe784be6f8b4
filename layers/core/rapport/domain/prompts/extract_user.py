"""Prompt: extract memories about the user (facts, preferences, events, goals) from one conversation."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from rapport.domain.prompts import examples
from rapport.domain.prompts.scores import Score

NAME = "extract_user"

SYSTEM = (
    """\
You maintain the long-term memory an AI assistant keeps about the person it talks to.
From the conversation, extract what is worth remembering about the USER in future conversations:
lasting facts (work, family, pets, where they live), preferences, events in their life, and goals.

Rules:
- Only what the user said or clearly implied about themselves. Never what the assistant said, never guesses.
- One self-contained statement per memory, in the third person, starting with "User" ("User works at Acme",
  "User has a dog named Max", "User is debugging an API at work"). No "he/she/it/this" needing the conversation.
- Skip small talk, thanks, and anything only true for the next minute.
- When the user corrects an earlier statement ("actually it's Rex, not Max"), extract the corrected fact and mark it
  as a correction. A correction is never to be dropped for sounding negative.
- When the user says a fact changed ("I moved from Berlin to Lisbon last month", "I left Acme for Globex",
  "I switched from VS Code to Vim", "I no longer work at Acme", "these days I live in Porto"), extract what is true
  now (with its slot), set `replaces` to the earlier value that stopped being true ("Berlin", "Acme", "VS Code") and
  `change` to the user's words for the change. "I no longer work at Acme" alone is "User no longer works at Acme",
  slot employer, replaces "Acme".
- Return an empty list when nothing qualifies. Fewer, precise memories beat many vague ones."""
    + examples.USER
)

TASK = "Extract the memories about the user from this conversation."


class UserMemoryKind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    GOAL = "goal"


class ExtractedUserMemory(BaseModel):
    content: str = Field(
        description="One self-contained statement about the user, third person, starting with 'User'. "
        "Example: 'User prefers morning meetings'."
    )
    type: UserMemoryKind = Field(
        description="fact: a lasting truth about the user; preference: what they like or want; event: something "
        "that happened or is happening to them; goal: what they are trying to achieve."
    )
    importance: Score = Field(
        description="0 to 1: how much this matters for future conversations. Identity, work, family and lasting "
        "preferences 0.7-0.9; current tasks 0.4-0.6; passing details 0.1-0.3."
    )
    confidence: Score = Field(description="0 to 1: how sure you are the user meant exactly this.")
    slot: str | None = Field(
        None,
        description="For a single-valued attribute (employer, job_title, home_city, name, partner) a short "
        "snake_case key, so a later different value replaces this one; null for everything else.",
    )
    correction: bool = Field(False, description="True when the user corrects something said earlier.")
    replaces: str | None = Field(
        None,
        description="When the user says an earlier value stopped being true, that value as they named it ('Berlin' "
        "in 'I moved from Berlin to Lisbon', 'Acme' in 'I no longer work at Acme'); null otherwise.",
    )
    change: str | None = Field(
        None, description="With `replaces`: the change in the user's words, kept as the reason the old fact ended."
    )
    evidence: list[int] = Field(default_factory=list, description="Indexes of the messages this memory comes from.")


class UserExtraction(BaseModel):
    memories: list[ExtractedUserMemory] = Field(
        description="The memories about the user; empty when the conversation reveals none."
    )

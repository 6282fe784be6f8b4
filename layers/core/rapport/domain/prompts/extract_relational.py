"""Prompt: extract relational memories, the shared history written from the assistant's side, from one conversation."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from rapport.domain.prompts import examples
from rapport.domain.prompts.scores import Score

NAME = "extract_relational"

SYSTEM = (
    """\
You are the relational memory of an AI assistant: you remember how working with this person goes.
From the conversation, extract what the assistant should remember about its RELATIONSHIP with the user, written
from the assistant's side ("We ...", "... works well with this user", "User ... when ..."):

- collaboration_outcome: what we achieved together and what it took ("We debugged a 500 on /users together — the
  auth layer was the root cause").
- approach_effectiveness: an approach that worked or did not ("Systematic logging worked well with this user").
- communication_preference: how the user likes to be answered ("Bullet points work better with this user").
- interaction_pattern: a recurring way our conversations go ("User comes back when the deploy fails").
- shared_context: projects, names and background we both refer to ("We are working on the Atlas project").
- working_style: how the user likes to work ("User likes to try a fix before asking for the next step").

Rules:
- Write lessons that help the next conversation. Prefer the constructive form: not "User got confused by my
  explanation" but "User benefits from simpler explanations first".
- Only what the conversation shows. One self-contained statement per memory.
- Where people talk among themselves (user messages under two or more names), nothing was said to the assistant:
  return an empty list.
- Return an empty list when nothing qualifies."""
    + examples.RELATIONAL
)

TASK = "Extract the relational memories from this conversation."


class RelationalMemoryKind(StrEnum):
    INTERACTION_PATTERN = "interaction_pattern"
    COLLABORATION_OUTCOME = "collaboration_outcome"
    APPROACH_EFFECTIVENESS = "approach_effectiveness"
    COMMUNICATION_PREFERENCE = "communication_preference"
    SHARED_CONTEXT = "shared_context"
    WORKING_STYLE = "working_style"


class ExtractedRelationalMemory(BaseModel):
    content: str = Field(
        description="One self-contained statement from the assistant's side, e.g. 'We solved the CORS issue "
        "together — it was the proxy config'."
    )
    type: RelationalMemoryKind = Field(description="Which of the six relational types this is.")
    importance: Score = Field(
        description="0 to 1: how much this should shape future conversations. A solved problem or a clear "
        "preference 0.6-0.9; a weak signal 0.2-0.4."
    )
    confidence: Score = Field(description="0 to 1: how clearly the conversation shows it.")
    evidence: list[int] = Field(default_factory=list, description="Indexes of the messages that show it.")


class RelationalExtraction(BaseModel):
    memories: list[ExtractedRelationalMemory] = Field(
        description="The relational memories; empty when the conversation shows none."
    )

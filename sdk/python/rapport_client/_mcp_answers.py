"""What the MCP tools answer: the client's models cut down to what an assistant acts on, as JSON-ready dicts, and
the API's errors as the text of a tool error."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rapport_client import models
from rapport_client.errors import RapportError


def memory(m: models.Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "domain": m.domain,
        "type": m.type,
        "content": m.content,
        "importance": m.importance,
        "status": m.status,
        "created_at": m.created_at.isoformat(),
        "occurred_at": m.occurred_at.isoformat() if m.occurred_at else None,
    }


def recall(results: models.SearchResults) -> dict[str, Any]:
    hits = [
        {
            **memory(hit),
            "similarity": round(hit.similarity, 4),
            "score": round(hit.score, 4),
            "match_strength": hit.match_strength,
            "match_reasons": hit.match_reasons,
        }
        for hit in results.memories
    ]
    return {"memories": hits, "total_stored": results.total_stored}


def recorded(answer: models.RecordedInteraction) -> dict[str, Any]:
    pipeline = answer.pipeline
    return {
        "interaction_id": answer.interaction.id,
        "messages": len(answer.interaction.messages),
        "pipeline": pipeline.status if pipeline else None,
        # What the pipeline kept from the conversation: what an assistant may want to confirm to the person.
        "memories_stored": [memory(m) for m in pipeline.memories] if pipeline else [],
        "reinforced": pipeline.reinforced if pipeline else [],
        "invalidated": pipeline.invalidated if pipeline else [],
    }


def _relevant(items: Iterable[models.RelevantMemory]) -> list[dict[str, Any]]:
    return [
        {"id": i.id, "text": i.text, "similarity": round(i.similarity, 4), "at": i.timestamp.isoformat()} for i in items
    ]


def context(processed: models.ProcessResult) -> dict[str, Any]:
    mem = processed.memory
    return {
        "system_prompt": processed.context.system_prompt,
        "memories": _relevant(mem.relevant_memories),
        "relational_notes": _relevant(mem.relational_notes),
        "state": processed.user.model_dump(mode="json"),
        "tone": {
            "tone_grudge_modifier": processed.context.tone_grudge_modifier,
            "relation_bias": processed.context.relation_bias,
        },
        "crisis": processed.safety.crisis,
        "known": {
            "total_stored": mem.total_stored,
            "interaction_count": mem.interaction_count,
            "known_since": mem.known_since.isoformat() if mem.known_since else None,
            "last_seen": mem.last_seen.isoformat() if mem.last_seen else None,
        },
        # The server's own model's reply when it has one; else the turn waits for `record_reply`.
        "reply": processed.reply,
        "turn_id": processed.turn_id,
        "turn_status": processed.turn_status,
        "interaction_id": processed.interaction_id,
    }


def turn_recorded(answer: models.TurnRecorded) -> dict[str, Any]:
    pipeline = answer.pipeline
    return {
        "turn_id": answer.turn_id,
        "status": answer.status,
        "replayed": answer.replayed,
        "interaction_id": answer.interaction.id,
        "memories_stored": [memory(m) for m in pipeline.memories] if pipeline else [],
    }


def state(s: models.RelationalState) -> dict[str, Any]:
    return s.model_dump(mode="json")


def person(p: models.Person, facts: int = 5) -> dict[str, Any]:
    return {
        "slug": p.slug,
        "name": p.name,
        "role": p.role,
        "sentiment": round(p.sentiment, 3),
        "sentiment_label": p.sentiment_label,
        "mention_count": p.mention_count,
        "last_mentioned": p.last_mentioned.isoformat(),
        # The latest first: what the person said most recently is what a reply should not contradict.
        "facts": [f.text for f in sorted(p.facts, key=lambda f: f.at, reverse=True)[:facts]],
    }


def error_text(exc: RapportError) -> str:
    """A tool error's text: the API's stable code and its message (what to fix), as JSON a model reads easily."""
    body: dict[str, Any] = {"error": exc.error, "message": exc.message}
    if exc.status is not None:
        body["status"] = exc.status
    if exc.details:
        body["details"] = exc.details
    return json.dumps(body, default=str)


def argument_error_text(message: str) -> str:
    return json.dumps({"error": "invalid_argument", "message": message})

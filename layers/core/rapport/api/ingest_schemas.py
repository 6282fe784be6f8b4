"""API output of the signed ingest routes: an acknowledgement, or the answer to Slack's URL handshake."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rapport.ingestion.service import Outcome


class IngestAckOut(BaseModel):
    ok: bool = True
    outcome: Outcome = Field(
        description="accepted (put on the bus), duplicate (seen before) or ignored (nothing to remember)."
    )
    event_id: str | None = Field(None, description="The event's id, when it has one; omitted otherwise.")


class SlackChallengeOut(BaseModel):
    challenge: str = Field(description="Slack's url_verification challenge, echoed back.")

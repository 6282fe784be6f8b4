"""Port `DeadLetters`: where a pipeline run that could not start or finish waits to be replayed, in one format.

The format is the state machine's own dead-letter message (infra/constructs/pipeline.py), so every producer — the
state machine's catch, the stream starter, the API's and the local runner's failed starts — writes the same thing:
`{"request": {tenant_id, user_id, interaction_id}, "failure": {"Error", "Cause"}, "execution_id"}`.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from rapport.ports.pipeline import PipelineRequest


class Failure(BaseModel):
    """What failed, as Step Functions spells a caught error."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    error: str = Field(alias="Error")
    cause: str = Field("", alias="Cause")


class DeadLetter(BaseModel):
    model_config = ConfigDict(extra="ignore")

    request: PipelineRequest
    failure: Failure
    execution_id: str | None = None  # the execution that failed; none when it never started

    def to_message(self) -> str:
        return self.model_dump_json(by_alias=True)


class ReceivedLetter(BaseModel):
    """A letter taken from the queue: `receipt` deletes it once its run is replayed."""

    letter: DeadLetter
    receipt: str


class DeadLetters(Protocol):
    def send(self, letter: DeadLetter) -> None: ...

    def receive(self, limit: int) -> list[ReceivedLetter]:
        """Up to `limit` letters; one that does not parse is not returned (it stays for a person to read)."""

    def delete(self, receipt: str) -> None: ...

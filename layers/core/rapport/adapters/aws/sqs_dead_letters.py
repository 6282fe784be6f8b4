"""SQS adapter of `DeadLetters`: the pipeline's dead-letter queue (the state machine's catch writes to it too)."""

from __future__ import annotations

import logging
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from rapport.errors import StorageError
from rapport.ports.dead_letters import DeadLetter, ReceivedLetter

logger = logging.getLogger(__name__)

_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})
_RECEIVE_MAX = 10  # ReceiveMessage's maximum
# Long enough to replay the letters received (a start per letter); a replay that dies leaves them to reappear.
_VISIBILITY_SECONDS = 120


class SqsDeadLetters:
    def __init__(self, queue_url: str, *, sqs_client: Any = None, region_name: str | None = None) -> None:
        self._queue_url = queue_url
        self._client = sqs_client
        self._region_name = region_name

    @property
    def _sqs(self) -> Any:
        # Built on first use: constructing the adapter touches no network.
        if self._client is None:
            self._client = boto3.client("sqs", region_name=self._region_name, config=_CLIENT_CONFIG)
        return self._client

    def send(self, letter: DeadLetter) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._queue_url, MessageBody=letter.to_message())
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(f"the dead-letter queue refused a message: {type(exc).__name__}") from exc

    def receive(self, limit: int) -> list[ReceivedLetter]:
        received: list[ReceivedLetter] = []
        while len(received) < limit:
            try:
                response = self._sqs.receive_message(
                    QueueUrl=self._queue_url,
                    MaxNumberOfMessages=min(_RECEIVE_MAX, limit - len(received)),
                    WaitTimeSeconds=0,
                    VisibilityTimeout=_VISIBILITY_SECONDS,
                )
            except (ClientError, BotoCoreError) as exc:
                raise StorageError(f"the dead-letter queue could not be read: {type(exc).__name__}") from exc
            messages = response.get("Messages", [])
            if not messages:
                break
            for message in messages:
                try:
                    letter = DeadLetter.model_validate_json(message["Body"])
                except ValidationError:
                    # Not a pipeline letter (a stream batch pointer, a hand-written message): left for a person.
                    logger.warning("dead letter %s is not a pipeline request; left in the queue", message["MessageId"])
                    continue
                received.append(ReceivedLetter(letter=letter, receipt=message["ReceiptHandle"]))
        return received

    def delete(self, receipt: str) -> None:
        try:
            self._sqs.delete_message(QueueUrl=self._queue_url, ReceiptHandle=receipt)
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(f"the dead-letter queue refused a delete: {type(exc).__name__}") from exc

"""SQS adapter of `DeadLetters`: the pipeline's dead-letter queue (the state machine's catch writes to it too)."""

from __future__ import annotations

import logging

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from rapport.adapters.aws.sqs import SqsQueue
from rapport.errors import StorageError
from rapport.ports.dead_letters import DeadLetter, ReceivedLetter

logger = logging.getLogger(__name__)

_RECEIVE_MAX = 10  # ReceiveMessage's maximum
# Long enough to replay the letters received (a start per letter); a replay that dies leaves them to reappear.
_VISIBILITY_SECONDS = 120


class SqsDeadLetters(SqsQueue):
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

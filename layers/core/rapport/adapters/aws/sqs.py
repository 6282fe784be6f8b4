"""SQS adapter of `WorkQueue`: batches of ten, retrying the entries SQS reports as failed."""

from __future__ import annotations

import random
import time
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from rapport.errors import StorageError

_BATCH = 10  # SendMessageBatch's maximum
_ATTEMPTS = 5
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})


class SqsQueue:
    """One queue's URL and a client built on first use: constructing an adapter (at cold start, in tests) touches
    no network."""

    def __init__(self, queue_url: str, *, sqs_client: Any = None, region_name: str | None = None) -> None:
        self._queue_url = queue_url
        self._client = sqs_client
        self._region_name = region_name

    @property
    def _sqs(self) -> Any:
        if self._client is None:
            self._client = boto3.client("sqs", region_name=self._region_name, config=_CLIENT_CONFIG)
        return self._client


class SqsWorkQueue(SqsQueue):
    def send(self, bodies: list[str]) -> None:
        for start in range(0, len(bodies), _BATCH):
            pending = {str(n): body for n, body in enumerate(bodies[start : start + _BATCH])}
            for attempt in range(_ATTEMPTS):
                entries = [{"Id": entry_id, "MessageBody": body} for entry_id, body in pending.items()]
                try:
                    response = self._sqs.send_message_batch(QueueUrl=self._queue_url, Entries=entries)
                except (ClientError, BotoCoreError) as exc:
                    raise StorageError(f"SQS send failed: {exc}") from exc
                failed = {entry["Id"] for entry in response.get("Failed", [])}
                pending = {entry_id: body for entry_id, body in pending.items() if entry_id in failed}
                if not pending:
                    break
                time.sleep(random.uniform(0, 0.05 * 2**attempt))  # jittered: failures here mean throttling
            else:
                raise StorageError(f"SQS refused {len(pending)} messages {_ATTEMPTS} times; the run must be retried")

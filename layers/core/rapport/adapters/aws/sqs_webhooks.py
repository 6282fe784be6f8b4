"""SQS adapter of `WebhookDispatch`: one message per delivery job, its retry delay as the message's own delay."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from rapport.adapters.aws.sqs import SqsQueue
from rapport.domain.webhooks import DeliveryJob
from rapport.errors import UpstreamError

MAX_DELAY_SECONDS = 900  # SQS's ceiling for DelaySeconds; the retry schedule's cap stays under it


class SqsWebhookDispatch(SqsQueue):
    def enqueue(self, job: DeliveryJob, *, delay_seconds: float = 0.0) -> None:
        try:
            self._sqs.send_message(
                QueueUrl=self._queue_url,
                MessageBody=job.model_dump_json(),
                DelaySeconds=max(0, min(MAX_DELAY_SECONDS, round(delay_seconds))),
            )
        except (ClientError, BotoCoreError) as exc:
            raise UpstreamError(f"SQS send of a webhook delivery failed: {exc}") from exc

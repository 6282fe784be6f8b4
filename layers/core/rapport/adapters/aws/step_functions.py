"""The AWS `PipelineTrigger`: starts an execution of the Express state machine, named after the interaction."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from rapport.domain.models import Interaction
from rapport.errors import UpstreamError
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineStatus

_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})


class StepFunctionsPipeline:
    """Asynchronous whatever `wait` says: an Express execution may take longer than the API may hold a request.

    The execution is named after the interaction. Express workflows do not deduplicate names (they run
    at-least-once), so the name serves tracing; idempotency comes from the steps themselves.
    """

    def __init__(self, state_machine_arn: str, *, sfn_client: Any = None, region_name: str | None = None) -> None:
        self._arn = state_machine_arn
        self._client = sfn_client
        self._region_name = region_name

    @property
    def _sfn(self) -> Any:
        # Built on first use, never at construction (cold starts and tests construct freely).
        if self._client is None:
            self._client = boto3.client("stepfunctions", region_name=self._region_name, config=_CLIENT_CONFIG)
        return self._client

    def start(self, request: PipelineRequest, *, wait: bool, recorded: Interaction | None = None) -> PipelineRun:
        # The execution's tasks read the interaction themselves: their state carries no text.
        try:
            response = self._sfn.start_execution(
                stateMachineArn=self._arn, name=request.interaction_id, input=request.model_dump_json()
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "ExecutionAlreadyExists":
                return PipelineRun(interaction_id=request.interaction_id, status=PipelineStatus.STARTED)
            raise UpstreamError(f"could not start the ingestion pipeline: {code or 'error'}") from exc
        except BotoCoreError as exc:
            raise UpstreamError(f"could not start the ingestion pipeline: {type(exc).__name__}") from exc
        return PipelineRun(
            interaction_id=request.interaction_id, status=PipelineStatus.STARTED, execution_id=response["executionArn"]
        )

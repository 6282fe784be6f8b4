"""The OpenAI key in AWS: read from Secrets Manager at cold start, then re-read as it rotates, by warm functions."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import boto3
import httpx
import openai
import pytest
from aws_lambda_powertools.utilities import parameters
from moto import mock_aws

from rapport.adapters.aws.cached_secret import SECRET_MAX_AGE_SECONDS, CachedSecret
from rapport.composition.adapters import openai_key_source, resolve_secrets
from rapport.composition.embedders import build_embedder
from rapport.settings import Settings
from tests.integration.test_openai_embedder import BASE_URL, embeddings_response

pytestmark = pytest.mark.integration

REGION = "us-east-1"


@pytest.fixture
def secret_arn(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    parameters.clear_caches()
    with mock_aws():
        client = boto3.client("secretsmanager", region_name=REGION)
        yield client.create_secret(Name="rapport/openai", SecretString="sk-first")["ARN"]
    parameters.clear_caches()


@pytest.fixture
def seen_keys(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every OpenAI client gets an in-process embeddings API that records the bearer key of each request."""
    keys: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["authorization"].removeprefix("Bearer "))
        return embeddings_response(request)

    transport = httpx.Client(transport=httpx.MockTransport(answer))
    monkeypatch.setattr(openai, "OpenAI", functools.partial(openai.OpenAI, http_client=transport))
    return keys


def test_a_rotated_key_reaches_a_warm_embedder_once_its_cache_expires(secret_arn: str, seen_keys: list[str]) -> None:
    # Given an embedder wired as in Lambda: only the secret's ARN configured
    settings = resolve_secrets(
        Settings(
            embedder="openai",
            openai_api_key_secret_arn=secret_arn,
            openai_base_url=BASE_URL,
            embedding_dimensions=16,
        )
    )
    embedder = build_embedder(settings)
    embedder.embed(["first"])
    # When the operator rotates the key, requests within the cache's age still use the key read before
    boto3.client("secretsmanager", region_name=REGION).put_secret_value(SecretId=secret_arn, SecretString="sk-second")
    embedder.embed(["still cached"])
    # ...and once it expired (Powertools' cache, emptied here as its max_age would), the new one, with no cold start
    parameters.clear_caches()
    embedder.embed(["after rotation"])
    assert seen_keys == ["sk-first", "sk-first", "sk-second"]


def test_an_explicit_key_is_used_as_is_and_never_looked_up(seen_keys: list[str]) -> None:
    settings = resolve_secrets(
        Settings(embedder="openai", openai_api_key="sk-local", openai_base_url=BASE_URL, embedding_dimensions=16)
    )
    assert openai_key_source(settings, "sk-local") == "sk-local"
    build_embedder(settings).embed(["hello"])
    assert seen_keys == ["sk-local"]


def test_the_secret_is_re_read_every_few_minutes(secret_arn: str) -> None:
    settings = resolve_secrets(Settings(openai_api_key_secret_arn=secret_arn))
    source = openai_key_source(settings, "ignored")
    assert isinstance(source, CachedSecret) and source.secret_id == secret_arn
    assert source() == "sk-first"
    assert SECRET_MAX_AGE_SECONDS == 300  # the window docs/operations.md and the SMG4 reason promise

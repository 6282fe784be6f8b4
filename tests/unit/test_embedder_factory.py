"""Which embedder the settings choose; building one must neither load a model nor open a connection."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.adapters.openai.embedder import OpenAiEmbedder
from rapport.composition.embedders import build_embedder
from rapport.settings import EmbedderKind, EmbeddingPrecision, Settings

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The developer's shell may export a key or a base URL; these tests say exactly what the settings hold.
    for name in ("OPENAI_API_KEY", "RAPPORT_OPENAI_API_KEY", "OPENAI_BASE_URL", "RAPPORT_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def settings(**values: object) -> Settings:
    return Settings.model_validate(values)


def test_auto_with_a_key_chooses_openai_with_the_configured_model() -> None:
    embedder = build_embedder(
        settings(
            embedder="auto",
            openai_api_key="sk-test",
            embedding_model="text-embedding-3-large",
            embedding_dimensions=1024,
            openai_base_url="https://proxy.example.test/v1",
        )
    )

    assert isinstance(embedder, OpenAiEmbedder)
    assert embedder.dimensions == 1024
    assert embedder.name == "openai:text-embedding-3-large:1024"
    client = embedder._client
    assert str(client.base_url).rstrip("/") == "https://proxy.example.test/v1"
    # Our retry policy is the only one: the SDK's would multiply attempts.
    assert client.max_retries == 0


def test_openai_client_defaults_to_the_public_api_and_the_configured_timeout() -> None:
    embedder = build_embedder(settings(embedder="openai", openai_api_key="sk-test", openai_timeout_seconds=7.5))

    assert isinstance(embedder, OpenAiEmbedder)
    assert str(embedder._client.base_url).rstrip("/") == "https://api.openai.com/v1"
    assert embedder._client.timeout == 7.5


def test_auto_without_a_key_chooses_minilm_without_loading_it() -> None:
    embedder = build_embedder(settings(embedder="auto"))

    assert isinstance(embedder, MiniLmEmbedder)
    assert embedder.dimensions == 384
    assert not embedder.loaded


def test_an_empty_key_counts_as_no_key() -> None:
    assert isinstance(build_embedder(settings(embedder="auto", openai_api_key="  ")), MiniLmEmbedder)


def test_minilm_is_chosen_explicitly_even_with_a_key() -> None:
    assert isinstance(build_embedder(settings(embedder="minilm", openai_api_key="sk-test")), MiniLmEmbedder)


def test_minilm_runs_in_the_precision_the_settings_ask_for() -> None:
    for kind in ("auto", "minilm"):
        for precision in EmbeddingPrecision:
            embedder = build_embedder(settings(embedder=kind, embedding_precision=precision.value))

            assert isinstance(embedder, MiniLmEmbedder)
            assert embedder._precision is precision and not embedder.loaded


def test_hashing_uses_its_own_width() -> None:
    embedder = build_embedder(settings(embedder=EmbedderKind.HASHING, hashing_dimensions=64))

    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimensions == 64


def test_openai_without_a_key_is_refused_with_the_variable_to_set() -> None:
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        build_embedder(settings(embedder="openai"))


def test_api_key_is_read_from_the_standard_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")

    assert isinstance(build_embedder(Settings()), OpenAiEmbedder)


def test_wiring_minilm_imports_neither_torch_nor_sentence_transformers() -> None:
    # The Lambda bundle has no torch: importing and wiring the embedders must not need it.
    code = (
        "import sys\n"
        "from rapport.composition.embedders import build_embedder\n"
        "from rapport.settings import Settings\n"
        "build_embedder(Settings(embedder='minilm'))\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)

    assert result.stdout.strip() == "[]"

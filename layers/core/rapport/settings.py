"""The one settings model: every number of the product brief, read from RAPPORT_* variables or a file."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class StoreBackend(StrEnum):
    SQLITE = "sqlite"
    DYNAMODB = "dynamodb"


class VectorBackend(StrEnum):
    EMBEDDED = "embedded"
    OPENSEARCH = "opensearch"


class EmbedderKind(StrEnum):
    AUTO = "auto"  # OpenAI when OPENAI_API_KEY is set, else MiniLM
    MINILM = "minilm"
    OPENAI = "openai"
    HASHING = "hashing"


class RecallWeights(BaseSettings):
    """Weights of the hybrid recall score; they need not sum to one (scores are compared, not read as probabilities)."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_WEIGHT_")

    vector: float = Field(0.55, ge=0)
    keyword: float = Field(0.25, ge=0)
    recency: float = Field(0.08, ge=0)
    importance: float = Field(0.07, ge=0)
    strength: float = Field(0.05, ge=0)


class Settings(BaseSettings):
    """Runtime configuration. Domain code receives this object; it never reads the environment itself."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_", env_file=None, extra="ignore")

    # Where data lives
    store: StoreBackend = StoreBackend.SQLITE
    vector_backend: VectorBackend = VectorBackend.EMBEDDED
    data_dir: Path = Path(".rapport")
    table_name: str = "rapport"
    aws_region: str | None = Field(None, validation_alias=AliasChoices("RAPPORT_AWS_REGION", "AWS_REGION"))

    # OpenSearch
    opensearch_url: str | None = Field(None, validation_alias=AliasChoices("RAPPORT_OPENSEARCH_URL", "OPENSEARCH_URL"))
    opensearch_index: str = "rapport-memories"
    opensearch_service: str = Field("es", pattern="^(es|aoss)$")
    opensearch_sigv4: bool = True

    # Embeddings
    embedder: EmbedderKind = EmbedderKind.AUTO
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int = Field(1536, ge=16, le=3072)
    hashing_dimensions: int = Field(256, ge=16, le=4096)
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("RAPPORT_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_api_key_secret_arn: str | None = None  # in AWS the key comes from Secrets Manager, never a plain env var
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("RAPPORT_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    openai_max_retries: int = Field(4, ge=0, le=10)
    openai_timeout_seconds: float = Field(30.0, gt=0)

    # Input limits: well below DynamoDB's 400 KB item size, embedding included
    max_content_chars: int = Field(8_000, ge=1, le=100_000)
    max_metadata_bytes: int = Field(8_192, ge=0, le=64_000)
    max_messages_per_interaction: int = Field(200, ge=1)
    max_message_chars: int = Field(16_000, ge=1)
    max_interaction_chars: int = Field(90_000, ge=1)  # x4 bytes of UTF-8 stays under 400 KB
    max_page_size: int = Field(100, ge=1, le=1000)

    # Recall (brief: domain retrieval limit 5; /process top-K 3 above similarity 0.3)
    recall_default_limit: int = Field(5, ge=1)
    recall_candidate_pool: int = Field(50, ge=1)
    recall_recency_half_life_days: float = Field(30.0, gt=0)
    weights: RecallWeights = Field(default_factory=RecallWeights)
    strong_match_score: float = 0.6
    moderate_match_score: float = 0.35

    # Local auth
    api_keys: str | None = None  # "key1:tenant-a,key2:tenant-b"

    def api_key_pairs(self) -> list[tuple[str, str]]:
        """The seeded keys as (key, tenant) pairs; malformed entries are a configuration error."""
        if not self.api_keys:
            return []
        pairs: list[tuple[str, str]] = []
        for entry in self.api_keys.split(","):
            entry = entry.strip()
            if not entry:
                continue
            key, sep, tenant = entry.partition(":")
            if not sep or not key or not tenant:
                raise ValueError(f"RAPPORT_API_KEYS entry {entry!r} must look like 'key:tenant'")
            pairs.append((key, tenant))
        return pairs

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "rapport.sqlite3"

    @property
    def embedded_index_path(self) -> Path:
        return self.data_dir / "vectors.sqlite3"

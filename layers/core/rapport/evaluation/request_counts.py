"""Counts the outside requests one API call really makes: DynamoDB operations (botocore hooks), index calls,
embedding and language-model calls, bus events. Used by the cost model, `rapport bench requests` and a moto test."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rapport.domain.models import Memory
from rapport.domain.scope import Scope
from rapport.ports.vector_index import HybridHits, IndexHit, IndexQuery, VectorIndex


@dataclass
class Tally:
    """Requests by kind, e.g. {"dynamodb:PutItem": 3, "index:knn_search": 1, "embed:texts": 2}."""

    counts: Counter[str] = field(default_factory=Counter)
    embedded_chars: int = 0
    prompt_chars: int = 0

    def reset(self) -> None:
        self.counts.clear()
        self.embedded_chars = 0
        self.prompt_chars = 0

    def snapshot(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def count_dynamodb(client: Any, tally: Tally) -> None:
    """Every DynamoDB operation the client makes, by name (BatchGetItem / BatchWriteItem also by item)."""

    def on_params(model: Any, params: dict[str, Any], **_: Any) -> None:
        tally.counts[f"dynamodb:{model.name}"] += 1
        if model.name == "BatchGetItem":
            tally.counts["dynamodb:BatchGetItem.items"] += sum(len(t["Keys"]) for t in params["RequestItems"].values())
        if model.name == "BatchWriteItem":
            tally.counts["dynamodb:BatchWriteItem.items"] += sum(len(v) for v in params["RequestItems"].values())
        if model.name == "TransactWriteItems":
            tally.counts["dynamodb:TransactWriteItems.items"] += len(params["TransactItems"])

    # provide-client-params: once per API call, with the parameters as the caller passed them.
    client.meta.events.register("provide-client-params.dynamodb", on_params)


def count_kms(client: Any, tally: Tally) -> None:
    """Every KMS operation the client makes (the per-person keys' GenerateDataKey and Decrypt), by name."""

    def on_params(model: Any, **_: Any) -> None:
        tally.counts[f"kms:{model.name}"] += 1

    client.meta.events.register("provide-client-params.kms", on_params)


class CountingIndex:
    """A `VectorIndex` that counts its calls (in AWS each is one OpenSearch request) and delegates."""

    def __init__(self, inner: VectorIndex, tally: Tally) -> None:
        self._inner = inner
        self._tally = tally

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def upsert(self, memory: Memory) -> None:
        self._tally.counts["index:upsert"] += 1
        self._inner.upsert(memory)

    def delete(self, scope: Scope, memory_id: str) -> None:
        self._tally.counts["index:delete"] += 1
        self._inner.delete(scope, memory_id)

    def delete_user(self, scope: Scope) -> int:
        self._tally.counts["index:delete_user"] += 1
        return self._inner.delete_user(scope)

    def knn_search(self, query: IndexQuery, vector: list[float]) -> list[IndexHit]:
        self._tally.counts["index:knn_search"] += 1
        return self._inner.knn_search(query, vector)

    def knn_search_many(
        self, query: IndexQuery, vectors: Sequence[list[float]], *, min_score: float | None = None
    ) -> list[list[IndexHit]]:
        self._tally.counts["index:knn_search_many"] += 1
        return self._inner.knn_search_many(query, vectors, min_score=min_score)

    def keyword_search(self, query: IndexQuery, text: str) -> list[IndexHit]:
        self._tally.counts["index:keyword_search"] += 1
        return self._inner.keyword_search(query, text)

    def hybrid_search(self, query: IndexQuery, vector: list[float], text: str, *, keyword_k: int) -> HybridHits:
        self._tally.counts["index:hybrid_search"] += 1
        return self._inner.hybrid_search(query, vector, text, keyword_k=keyword_k)

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        self._tally.counts["index:vectors"] += 1
        return self._inner.vectors(scope, memory_ids)

    def count(self, scope: Scope) -> int:
        return self._inner.count(scope)


class CountingEmbedder:
    """Counts embedding requests and texts (and their characters, for a token estimate)."""

    def __init__(self, inner: Any, tally: Tally) -> None:
        self._inner = inner
        self._tally = tally

    @property
    def dimensions(self) -> int:
        return int(self._inner.dimensions)

    @property
    def name(self) -> str:
        return str(self._inner.name)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if texts:
            self._tally.counts["embed:requests"] += 1
            self._tally.counts["embed:texts"] += len(texts)
            self._tally.embedded_chars += sum(len(t) for t in texts)
        vectors: list[list[float]] = self._inner.embed(texts)
        return vectors


class CountingLanguageModel:
    """Counts structured (extraction, filter) and reply calls; each is one chat completion in production."""

    def __init__(self, inner: Any, tally: Tally) -> None:
        self._inner = inner
        self._tally = tally

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def name(self) -> str:
        return str(self._inner.name)

    def structured(self, *, system: str, user: str, response_model: type[Any]) -> Any:
        self._tally.counts["llm:structured"] += 1
        self._tally.prompt_chars += len(system) + len(user)
        return self._inner.structured(system=system, user=user, response_model=response_model)

    def reply(self, *, system: str, messages: list[Any]) -> str | None:
        self._tally.counts["llm:reply"] += 1
        result: str | None = self._inner.reply(system=system, messages=messages)
        return result


class CountingBus:
    """Counts published events (EventBridge PutEvents entries in production) and delegates."""

    def __init__(self, inner: Any, tally: Tally) -> None:
        self._inner = inner
        self._tally = tally

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def publish(self, event: Any) -> None:
        self._tally.counts["bus:events"] += 1
        self._inner.publish(event)


def dynamodb_requests(counts: dict[str, int]) -> int:
    """DynamoDB requests of one call, every operation together (the `.items` tallies count items, not requests)."""
    return sum(n for name, n in counts.items() if name.startswith("dynamodb:") and "." not in name)


def by_service(counts: dict[str, int]) -> dict[str, int]:
    """`{"dynamodb": total, "dynamodb:GetItem": n, …}`: the total first, then each operation and other request."""
    return {"dynamodb": dynamodb_requests(counts), **counts}


@dataclass(frozen=True)
class OperationCounts:
    """What one API call cost in outside requests, in steady state (the end user already exists)."""

    remember: dict[str, int]  # POST /v1/users/{u}/memories
    interaction: dict[str, int]  # POST /v1/users/{u}/interactions (history, episodes, the whole pipeline)
    recall: dict[str, int]  # GET /v1/users/{u}/memories?query=…
    embedded_chars_per_interaction: int
    prompt_chars_per_interaction: int
    # POST /v1/users/{u}/memories of an end user the process has not served yet: their data key is looked up (and,
    # for a new person, made) once, then cached (docs/security.md, "Per-person keys").
    first_remember: dict[str, int] = field(default_factory=dict)


def counting_bus(tally: Tally) -> Any:
    """The in-process bus (its rules still deliver, so enrichment runs and its requests are counted) that also
    counts what is published: in AWS each is one EventBridge PutEvents entry and one enrichment invocation."""
    from rapport.adapters.local.in_process_bus import InProcessBus
    from rapport.ports.event_bus import BusEvent

    class CountingBus(InProcessBus):
        def publish(self, event: BusEvent) -> None:
            tally.counts["events:put"] += 1
            super().publish(event)

    return CountingBus()


def measure_operation_counts(data_dir: Any) -> OperationCounts:
    """Runs the core over DynamoDB (moto), the embedded index and the rule-based pipeline in process, counting.
    Needs moto (a dev dependency); nothing leaves the process."""
    import boto3
    from moto import mock_aws

    from rapport.adapters.aws.kms_data_keys import KmsDataKeys
    from rapport.adapters.dynamodb.person_keys import DynamoDbPersonKeys, create_person_keys_table
    from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
    from rapport.adapters.local.hashing_embedder import HashingEmbedder
    from rapport.composition.language_models import build_rules_model
    from rapport.composition.services import build_services
    from rapport.domain.models import AuditAction, Domain, Message, MessageRole
    from rapport.domain.recall import RecallQuery
    from rapport.sealing import Keyring
    from rapport.services.interactions import NewInteraction
    from rapport.services.memories import NewMemory
    from rapport.settings import (
        EmbedderKind,
        EnrichmentMode,
        GraphSettings,
        LlmKind,
        PipelineMode,
        Settings,
        StoreBackend,
    )

    tally = Tally()
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(resource, "rapport-cost")
        count_dynamodb(resource.meta.client, tally)
        # Per-person keys as the stack runs them: a keys table of its own and KMS, both counted.
        keys_resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_person_keys_table(keys_resource, "rapport-cost-keys")
        count_dynamodb(keys_resource.meta.client, tally)
        kms = boto3.client("kms", region_name="us-east-1")
        count_kms(kms, tally)
        kms_key = kms.create_key(Description="rapport-cost person keys")["KeyMetadata"]["KeyId"]
        keyring = Keyring(
            DynamoDbPersonKeys("rapport-cost-keys", KmsDataKeys(kms_key, client=kms), dynamodb_resource=keys_resource),
            ttl_seconds=3600,
        )
        settings = Settings(
            data_dir=data_dir,
            store=StoreBackend.DYNAMODB,
            table_name="rapport-cost",
            embedder=EmbedderKind.HASHING,
            llm=LlmKind.RULES,
            pipeline=PipelineMode.LOCAL,
            graph=GraphSettings(enrichment=EnrichmentMode.EVENT),  # as the stack runs it: writers announce
        )
        embedder = HashingEmbedder(256)
        services = build_services(
            settings,
            store=DynamoDbMemoryStore("rapport-cost", dynamodb_resource=resource, keyring=keyring),
            index=CountingIndex(EmbeddedVectorIndex(data_dir / "vectors.sqlite3", 256), tally),
            embedder=CountingEmbedder(embedder, tally),
            language_model=CountingLanguageModel(build_rules_model(settings), tally),
            bus=counting_bus(tally),
        )
        tenant, user = "tenant-cost", "user-cost"

        def audited(operation: str, status: int) -> None:
            # What the API adds to every write it answers (api/access.py): one audit event, one PutItem. A recall is
            # not audited, so it costs nothing here.
            services.audit.record(
                tenant,
                actor="bench",
                action=AuditAction.WRITE,
                operation=operation,
                user_hash=Scope(tenant, user).user_hash,
                status=status,
            )

        def interaction(n: int) -> NewInteraction:
            return NewInteraction(
                messages=[
                    Message(role=MessageRole.USER, content=f"I moved to Lisbon last month and I love the tram {n}."),
                    Message(role=MessageRole.ASSISTANT, content="That sounds lovely! How is the new flat?"),
                ],
                session_id=f"session-{n}",
            )

        # Steady state: the end user, their profile and state exist; a first call costs a few more writes.
        for n in range(3):
            services.interactions.record(Scope(tenant, user), interaction(n))
            services.memories.remember(Scope(tenant, user), NewMemory(content=f"Prefers tea {n}", domain=Domain.USER))
        tally.reset()
        services.memories.remember(Scope(tenant, user), NewMemory(content="Has a dog named Max", domain=Domain.USER))
        audited("memories_add", 201)
        remember = tally.snapshot()
        tally.reset()
        services.interactions.record(Scope(tenant, user), interaction(99))
        audited("interactions_record", 201)
        recorded, embedded, prompt = tally.snapshot(), tally.embedded_chars, tally.prompt_chars
        tally.reset()
        services.recall.recall(Scope(tenant, user), RecallQuery(query="where does the user live?", limit=5))
        recall = tally.snapshot()
        tally.reset()
        newcomer = Scope(tenant, "user-new")
        services.memories.remember(newcomer, NewMemory(content="Has a cat named Ada", domain=Domain.USER))
        audited("memories_add", 201)  # the same one PutItem whoever it names
        first_remember = tally.snapshot()
    return OperationCounts(remember, recorded, recall, embedded, prompt, first_remember)

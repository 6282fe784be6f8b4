"""The OpenSearch k-NN adapter of the `VectorIndex` port (faiss HNSW for vectors, BM25 for keywords, SigV4 for AWS)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import boto3
from botocore.credentials import Credentials, ReadOnlyCredentials
from opensearchpy import OpenSearch, RequestsAWSV4SignerAuth, RequestsHttpConnection
from opensearchpy.exceptions import NotFoundError as OpenSearchNotFoundError
from opensearchpy.exceptions import OpenSearchException, TransportError

from rapport.domain.models import Domain, Memory
from rapport.domain.rendering import search_text
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import InvalidInputError, StorageError, TenantFenceError
from rapport.ports.vector_index import HybridHits, IndexHit, IndexQuery, RelationshipTally
from rapport.tenancy import bound_tenant, tenant_digest

T = TypeVar("T")

# The k-NN plugin refuses larger k and vectors wider than 16,000 dimensions.
MAX_K = 10_000
MAX_DIMENSIONS = 16_000
MAX_LISTED_AGENTS = 1_000  # assistants a tenant's listing counts (GET /v1/agents)

_REFRESH_POLICIES: frozenset[bool | str] = frozenset({True, False, "true", "false", "wait_for"})
# What a read of vectors takes from each document: the vector, and the fence to check it against.
_VECTOR_FIELDS = ("memory_id", "tenant_id", "user_id", "embedding")
# k-NN searches one `_msearch` carries (a 384-wide vector is ~8 KB of JSON: ~1 MB a request, far under the limit).
_MSEARCH_VECTORS = 100
# A tenant's reads go through an alias of its own, `rapport-t-{digest of the tenant id}`, filtered on its tenant id:
# the session of that tenant may name that alias only (infra/constructs/tenant_access.py), and the engine applies the
# alias's filter to every search, count and delete by query sent through it.
TENANT_ALIAS_PREFIX = "rapport-t-"


def tenant_alias(tenant_id: str) -> str:
    return f"{TENANT_ALIAS_PREFIX}{tenant_digest(tenant_id)}"


def tenant_alias_definition(tenant_id: str) -> dict[str, Any]:
    return {"filter": {"term": {"tenant_id": tenant_id}}}


def index_definition(dimensions: int) -> dict[str, Any]:
    """The settings and mapping `ensure_index` creates; public so docs and tests can show the exact shape."""
    keyword = {"type": "keyword"}
    return {
        "settings": {"index": {"knn": True}},
        "mappings": {
            # The index is derived and rebuildable: a field the mapping does not know is a bug to surface, not a
            # dynamic text field to invent silently.
            "dynamic": "strict",
            "properties": {
                "memory_id": keyword,
                "tenant_id": keyword,
                "user_id": keyword,
                # `user`, `relational`, or a named assistant's relational memories: `relational@{agent}`
                # (`domain_term`), so a search of one assistant's relationship is the same terms filter as before.
                "domain": keyword,
                "status": keyword,
                "type": keyword,
                "created_at": {"type": "date"},
                # `english` stems and drops stopwords, so BM25 meets "dogs" with "dog" like the embedded index does.
                "content": {"type": "text", "analyzer": "english"},
                "embedding": {
                    "type": "knn_vector",
                    "dimension": dimensions,
                    "method": {
                        "name": "hnsw",
                        "engine": "faiss",
                        # Vectors are L2-normalised before they are written or searched, so the inner product IS
                        # the cosine similarity, without cosinesimil's per-comparison norm (and its zero-vector
                        # refusal).
                        "space_type": "innerproduct",
                        "parameters": {
                            "m": 16,
                            "ef_construction": 128,
                            # faiss SQfp16 halves the graph's vector memory; on LoCoMo the top 10 is unchanged
                            # (docs/BENCHMARKS.md, "Vector compression"). Unit vectors are far inside fp16's range,
                            # so nothing is clipped.
                            "encoder": {"name": "sq", "parameters": {"type": "fp16", "clip": False}},
                        },
                    },
                },
            },
        },
    }


def cosine_from_innerproduct_score(score: float) -> float:
    """Undo the k-NN plugin's innerproduct scoring: `_score` is `1 + ip` when ip >= 0 and `1 / (1 - ip)` when ip < 0.

    With unit vectors the inner product is the cosine, so this returns the cosine similarity, clamped to [-1, 1]
    against float32 rounding.
    """
    if score <= 0.0:
        # 1 / (1 - ip) is positive for every finite ip; zero or below can only mean ip = -infinity.
        return -1.0
    inner_product = score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score
    return max(-1.0, min(1.0, inner_product))


def document_id(tenant_id: str, user_id: str, memory_id: str) -> str:
    """A fixed-length id that cannot collide across tenants or users.

    Joining with a separator would let tenant "a:b" + user "c" meet tenant "a" + user "b:c"; hashing the JSON list
    is unambiguous, stays well under the 512-byte id limit, and keeps end-user ids (often e-mail addresses) out of
    ids that show up in logs and slow-query traces.
    """
    return hashlib.sha256(json.dumps([tenant_id, user_id, memory_id]).encode()).hexdigest()


def _unit_vector(values: Sequence[float], dimensions: int) -> list[float]:
    if len(values) != dimensions:
        raise InvalidInputError(f"the embedding has {len(values)} dimensions; this index holds {dimensions}")
    vector = [float(v) for v in values]
    if not all(math.isfinite(v) for v in vector):
        raise InvalidInputError("the embedding holds NaN or infinite values")
    norm = math.sqrt(sum(v * v for v in vector))
    # A zero vector (text with no content words) stays zero: it matches nothing, which is the honest answer.
    return vector if norm == 0.0 else [v / norm for v in vector]


def _user_filters(tenant_id: str, user_id: str) -> list[dict[str, Any]]:
    return [{"term": {"tenant_id": tenant_id}}, {"term": {"user_id": user_id}}]


def _query_filters(query: IndexQuery) -> list[dict[str, Any]]:
    return [
        *_user_filters(query.tenant_id, query.user_id),
        {"terms": {"domain": [domain_term(d, query.agent_id) for d in query.domains]}},
        {"terms": {"status": list(query.statuses)}},
    ]


_AGENT_MARK = "@"


def domain_term(domain: Domain, agent_id: str) -> str:
    """What a document's `domain` holds: the domain, and for a named assistant's relational memory the assistant
    too (`relational@coach`). The default assistant's documents are those indexed before assistants had names, so
    they and their queries are unchanged, and a named assistant's relational memories never meet another's."""
    if domain is Domain.RELATIONAL and agent_id != DEFAULT_AGENT:
        return f"{domain.value}{_AGENT_MARK}{agent_id}"
    return domain.value


def _knn_body(query: IndexQuery, unit: list[float]) -> dict[str, Any] | None:
    """The k-NN search of `query`, or None when it can find nothing (k below one, no domain or status asked)."""
    k = min(query.k, MAX_K)
    if k < 1 or not query.domains or not query.statuses:
        return None
    return {
        "size": k,
        "_source": ["memory_id"],
        "query": {
            "knn": {
                "embedding": {
                    "vector": unit,
                    "k": k,
                    # Inside the knn clause the engine filters while it walks the graph (efficient filtering):
                    # other tenants never count toward k, and k hits come back whenever k entries match. A
                    # post-filter would take the global top k first and return fewer, or none.
                    "filter": {"bool": {"filter": _query_filters(query)}},
                }
            }
        },
    }


def _keyword_body(query: IndexQuery, text: str) -> dict[str, Any] | None:
    """The BM25 search of `query` for `text`, or None when it can find nothing (no words, k below one, ...)."""
    k = min(query.k, MAX_K)
    if k < 1 or not text.strip() or not query.domains or not query.statuses:
        return None
    return {
        "size": k,
        "_source": ["memory_id"],
        "query": {
            "bool": {
                "must": [{"match": {"content": {"query": text, "operator": "or"}}}],
                "filter": _query_filters(query),
            }
        },
    }


def _hits(response: dict[str, Any], to_score: Callable[[float], float]) -> list[IndexHit]:
    return [
        IndexHit(memory_id=hit["_source"]["memory_id"], score=to_score(hit["_score"]))
        for hit in response["hits"]["hits"]
    ]


def _scores(response: dict[str, Any], to_score: Callable[[float], float]) -> dict[str, float]:
    """The hits as `HybridHits` holds them: each id with its score, best first."""
    return {hit.memory_id: hit.score for hit in _hits(response, to_score)}


def _answered(response: dict[str, Any]) -> dict[str, Any]:
    """A multi-search answers 200 with each search's own status: a failed one is raised as the client raises a
    failed search, so a missing index or alias and every other error take the same paths as a single search."""
    for item in response.get("responses", []):
        if "error" not in item:
            continue
        status = int(item.get("status", 500))
        error = item["error"]
        kind = error.get("type", "unknown") if isinstance(error, dict) else str(error)
        if status == 404:
            raise OpenSearchNotFoundError(status, kind, item)
        raise TransportError(status, kind, item)
    return response


def _storage_error(operation: str, exc: OpenSearchException) -> StorageError:
    # Status and error type only: an error body can echo document content, which must not reach logs.
    if isinstance(exc, TransportError):
        return StorageError(f"OpenSearch {operation} failed: {exc.status_code} {exc.error}")
    return StorageError(f"OpenSearch {operation} failed: {type(exc).__name__}")


class OpenSearchVectorIndex:
    """`VectorIndex` over one OpenSearch index. Every query is fenced by tenant and end user inside the query; while a
    tenant is bound (`rapport.tenancy`), a call naming another tenant is refused before it is sent.

    `tenant_client`: a client signing as the session of the tenant being served. Reads (searches, counts, vectors)
    and a user's erasure then go through the tenant's filtered alias on that client, so the index's own access
    control fences them; writes of one document by id stay on `client`, the function's own role.
    """

    def __init__(
        self,
        client: OpenSearch,
        index_name: str,
        dimensions: int,
        *,
        refresh: bool | str = False,
        tenant_client: OpenSearch | None = None,
    ) -> None:
        if not 1 <= dimensions <= MAX_DIMENSIONS:
            raise ValueError(f"dimensions must be between 1 and {MAX_DIMENSIONS}, not {dimensions}")
        if refresh not in _REFRESH_POLICIES:
            raise ValueError(f"refresh must be True, False or 'wait_for', not {refresh!r}")
        self._client = client
        self._tenant_client = tenant_client
        self._index = index_name
        self._dimensions = dimensions
        self._refresh = refresh

    @property
    def index_name(self) -> str:
        return self._index

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def ensure_index(self) -> bool:
        """Create the index when it is missing; True when this call created it.

        An existing index must have this embedding dimension: vectors of another width cannot share it, and the fix
        is a rebuild from the table (`rapport reindex`), not a silent mismatch.
        """
        try:
            if self._client.indices.exists(index=self._index):
                self._check_dimensions()
                return False
            try:
                self._client.indices.create(index=self._index, body=index_definition(self._dimensions))
            except TransportError as exc:
                # Two cold starts can race to create the index; the loser's work is already done.
                if exc.error != "resource_already_exists_exception":
                    raise
                return False
            return True
        except OpenSearchException as exc:
            raise _storage_error("create index", exc) from exc

    def _check_dimensions(self) -> None:
        mappings = self._client.indices.get_mapping(index=self._index)
        for definition in mappings.values():  # keyed by the concrete index name, which an alias hides
            embedding = definition.get("mappings", {}).get("properties", {}).get("embedding", {})
            existing = embedding.get("dimension")
            if existing != self._dimensions:
                raise StorageError(
                    f"index {self._index!r} holds {existing}-dimension vectors but the embedder gives "
                    f"{self._dimensions}; delete the index and rebuild it with `rapport reindex`"
                )

    def upsert(self, memory: Memory) -> None:
        _check_tenant(memory.tenant_id)
        if memory.embedding is None:
            raise InvalidInputError(f"memory {memory.id} has no embedding to index")
        document = {
            "memory_id": memory.id,
            "tenant_id": memory.tenant_id,
            "user_id": memory.user_id,
            "domain": domain_term(memory.domain, memory.agent_id),
            "status": memory.status.value,
            "type": memory.type,
            # The same rendering the embedded index searches (speaker and date for episodes), so both agree.
            "content": search_text(memory),
            "created_at": memory.created_at.isoformat(),
            "embedding": _unit_vector(memory.embedding, self._dimensions),
        }
        try:
            self._client.index(
                index=self._index,
                id=document_id(memory.tenant_id, memory.user_id, memory.id),
                body=document,
                **self._refresh_params(),
            )
        except OpenSearchException as exc:
            raise _storage_error("index document", exc) from exc

    def delete(self, scope: Scope, memory_id: str) -> None:
        _check_tenant(scope.tenant_id)
        try:
            self._client.delete(
                index=self._index, id=document_id(scope.tenant_id, scope.user_id, memory_id), **self._refresh_params()
            )
        except OpenSearchNotFoundError:
            return  # a missing document, or a missing index: either way the entry is gone
        except OpenSearchException as exc:
            raise _storage_error("delete document", exc) from exc

    def delete_user(self, scope: Scope) -> int:
        body = {"query": {"bool": {"filter": _user_filters(scope.tenant_id, scope.user_id)}}}
        try:
            # refresh: an erasure must be invisible to the very next search. conflicts=proceed: a concurrent
            # re-index of one memory must not abort the erasure of all the others.
            response = self._through_tenant(
                scope.tenant_id,
                lambda client, target: client.delete_by_query(
                    index=target, body=body, refresh=True, conflicts="proceed"
                ),
            )
        except OpenSearchNotFoundError:
            return 0  # no index, no entries
        except OpenSearchException as exc:
            raise _storage_error("delete by query", exc) from exc
        if response.get("failures"):
            # Some entries survived; the caller must know so the erasure can be retried, not reported done.
            raise StorageError(f"OpenSearch delete by query left {len(response['failures'])} failures")
        return int(response.get("deleted", 0))

    def knn_search(self, query: IndexQuery, vector: list[float]) -> list[IndexHit]:
        body = _knn_body(query, _unit_vector(vector, self._dimensions))
        if body is None:
            return []
        return self._search("k-NN search", query.tenant_id, body, cosine_from_innerproduct_score)

    def knn_search_many(
        self, query: IndexQuery, vectors: Sequence[list[float]], *, min_score: float | None = None
    ) -> list[list[IndexHit]]:
        """The bodies `knn_search` sends, `_MSEARCH_VECTORS` to a `_msearch`: the same answers for a round trip
        (and a signed request) per hundred vectors instead of one each; `min_score` is applied to the cosines."""
        unit = [_unit_vector(vector, self._dimensions) for vector in vectors]
        if not unit or _knn_body(query, unit[0]) is None:
            return [[] for _ in vectors]
        answers: list[list[IndexHit]] = []
        for start in range(0, len(unit), _MSEARCH_VECTORS):
            lines: list[dict[str, Any]] = []
            for vector in unit[start : start + _MSEARCH_VECTORS]:
                lines.extend(({}, _knn_body(query, vector) or {}))

            def search(client: OpenSearch, target: str, lines: list[dict[str, Any]] = lines) -> dict[str, Any]:
                return _answered(client.msearch(index=target, body=lines))

            try:
                response = self._through_tenant(query.tenant_id, search)
            except OpenSearchException as exc:
                raise _storage_error("k-NN multi-search", exc) from exc
            for found in response["responses"]:
                hits = _hits(found, cosine_from_innerproduct_score)
                answers.append([h for h in hits if min_score is None or h.score >= min_score])
        if len(answers) != len(vectors):
            raise StorageError(f"OpenSearch answered {len(answers)} of {len(vectors)} k-NN searches")
        return answers

    def keyword_search(self, query: IndexQuery, text: str) -> list[IndexHit]:
        body = _keyword_body(query, text)
        if body is None:
            return []
        return self._search("keyword search", query.tenant_id, body, float)

    def hybrid_search(self, query: IndexQuery, vector: list[float], text: str, *, keyword_k: int) -> HybridHits:
        """The k-NN and the keyword search of one recall in one `_msearch`: the same two bodies `knn_search` and
        `keyword_search` send, so the same answers, for one round trip (and one signed request) instead of two."""
        knn = _knn_body(query, _unit_vector(vector, self._dimensions))
        keyword = _keyword_body(query.model_copy(update={"k": keyword_k}), text)
        searches = [(name, body) for name, body in (("knn", knn), ("keyword", keyword)) if body is not None]
        if not searches:
            return HybridHits()
        # An empty header per search: the index is the one in the path (the tenant's alias), which is all the
        # domain lets a multi-search name (`rest.action.multi.allow_explicit_index` is off).
        lines: list[dict[str, Any]] = [line for _, body in searches for line in ({}, body)]
        try:
            response = self._through_tenant(
                query.tenant_id,
                lambda client, target: _answered(client.msearch(index=target, body=lines)),
            )
        except OpenSearchException as exc:
            raise _storage_error("hybrid search", exc) from exc
        found = dict(zip((name for name, _ in searches), response["responses"], strict=True))
        return HybridHits(
            by_meaning=_scores(found["knn"], cosine_from_innerproduct_score) if "knn" in found else {},
            by_keywords=_scores(found["keyword"], float) if "keyword" in found else {},
        )

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        """One multi-get by document id. A get is real time, unlike a search: it sees an entry written a moment ago
        and not refreshed yet, which is when enrichment asks."""
        by_document = {document_id(scope.tenant_id, scope.user_id, m): m for m in dict.fromkeys(memory_ids)}
        if not by_document:
            return {}
        try:
            # A get by id is not filtered by an alias: the ids (hashes of tenant, user and memory) and the stored
            # fields checked below fence it, besides the tenant session reaching its own alias only.
            response = self._through_tenant(
                scope.tenant_id,
                lambda client, target: client.mget(
                    index=target, body={"ids": list(by_document)}, _source_includes=list(_VECTOR_FIELDS)
                ),
            )
        except OpenSearchNotFoundError:
            return {}  # no index yet: it holds no vector
        except OpenSearchException as exc:
            raise _storage_error("multi-get", exc) from exc
        vectors: dict[str, list[float]] = {}
        for doc in response.get("docs", []):
            source = doc.get("_source")
            # A document id is the hash of tenant, user and memory; the stored fence is checked as well, as every
            # search filters on it. An entry missing or failing (a per-document error) is one the index lacks.
            if not doc.get("found") or not source or "embedding" not in source:
                continue
            memory_id = by_document.get(doc.get("_id", ""))
            fenced = source.get("tenant_id") == scope.tenant_id and source.get("user_id") == scope.user_id
            if memory_id is not None and fenced and source.get("memory_id") == memory_id:
                vectors[memory_id] = [float(v) for v in source["embedding"]]
        return vectors

    def relationship_tallies(self, tenant_id: str) -> dict[str, RelationshipTally]:
        body = {
            "size": 0,
            "query": {
                "bool": {
                    "filter": [{"term": {"tenant_id": tenant_id}}, {"prefix": {"domain": Domain.RELATIONAL.value}}]
                }
            },
            "aggs": {
                "agents": {
                    "terms": {"field": "domain", "size": MAX_LISTED_AGENTS},
                    # Exact below the threshold (3,000 people an assistant), an estimate within a few percent above.
                    "aggs": {"people": {"cardinality": {"field": "user_id", "precision_threshold": 3000}}},
                }
            },
        }
        try:
            response = self._through_tenant(tenant_id, lambda client, target: client.search(index=target, body=body))
        except OpenSearchException as exc:
            raise _storage_error("count relationships", exc) from exc
        buckets = response.get("aggregations", {}).get("agents", {}).get("buckets", [])
        tallies: dict[str, RelationshipTally] = {}
        for bucket in buckets:
            domain, _, agent = str(bucket["key"]).partition(_AGENT_MARK)
            if domain != Domain.RELATIONAL.value:
                continue
            people, memories = int(bucket["people"]["value"]), int(bucket["doc_count"])
            tallies[agent or DEFAULT_AGENT] = RelationshipTally(people=people, relational_memories=memories)
        return tallies

    def count(self, scope: Scope) -> int:
        body = {"query": {"bool": {"filter": _user_filters(scope.tenant_id, scope.user_id)}}}
        try:
            response = self._through_tenant(
                scope.tenant_id, lambda client, target: client.count(index=target, body=body)
            )
        except OpenSearchException as exc:
            raise _storage_error("count", exc) from exc
        return int(response["count"])

    def ensure_tenant_alias(self, tenant_id: str) -> None:
        """Create (or state again) the tenant's filtered alias of the index: idempotent. The function's own role
        makes it, once per tenant; reading through it takes the tenant's session. A missing index raises the
        client's NotFoundError: nothing is indexed yet."""
        try:
            self._client.indices.put_alias(
                index=self._index, name=tenant_alias(tenant_id), body=tenant_alias_definition(tenant_id)
            )
        except OpenSearchNotFoundError:
            raise
        except OpenSearchException as exc:
            raise _storage_error("create tenant alias", exc) from exc

    def _through_tenant(self, tenant_id: str, call: Callable[[OpenSearch, str], T]) -> T:
        """`call(client, target)` on the tenant's alias with the tenant's session, or on the index itself when no
        tenant client is configured (an unsigned cluster). An alias not made yet is made, then called again."""
        _check_tenant(tenant_id)
        if self._tenant_client is None:
            return call(self._client, self._index)
        if bound_tenant() is None:
            raise TenantFenceError("index reads sign as the tenant being served, and none is being served")
        target = tenant_alias(tenant_id)
        try:
            return call(self._tenant_client, target)
        except OpenSearchNotFoundError as exc:
            if exc.error != "index_not_found_exception":
                raise
        self.ensure_tenant_alias(tenant_id)
        return call(self._tenant_client, target)

    def _search(
        self, operation: str, tenant_id: str, body: dict[str, Any], to_score: Callable[[float], float]
    ) -> list[IndexHit]:
        try:
            response = self._through_tenant(tenant_id, lambda client, target: client.search(index=target, body=body))
        except OpenSearchException as exc:
            raise _storage_error(operation, exc) from exc
        return _hits(response, to_score)

    def _refresh_params(self) -> dict[str, Any]:
        # No parameter at all when not refreshing: the index refreshes on its own schedule (about a second), and
        # a forced refresh per write would make indexing pay for a new segment each time.
        return {} if self._refresh in (False, "false") else {"refresh": self._refresh}


def _check_tenant(tenant_id: str) -> None:
    bound = bound_tenant()
    if bound is not None and bound != tenant_id:
        raise TenantFenceError("an index call names another tenant than the one being served; nothing was sent")


class _DeferredCredentials:
    """boto3 credentials resolved at the first signed request, not at construction.

    Resolving the chain can call the instance metadata service; a constructor must not touch the network.
    """

    def __init__(self, session: boto3.Session) -> None:
        self._session = session
        self._credentials: Credentials | None = None

    def get_frozen_credentials(self) -> ReadOnlyCredentials:
        if self._credentials is None:
            credentials = self._session.get_credentials()
            if credentials is None:
                raise StorageError("no AWS credentials found to sign OpenSearch requests (SigV4)")
            self._credentials = credentials
        # Frozen per request: refreshable credentials must not change between the access key and the secret.
        return self._credentials.get_frozen_credentials()


def build_opensearch_client(
    url: str,
    *,
    region: str | None,
    sigv4: bool = True,
    session: boto3.Session | None = None,
    credentials: Any = None,
    timeout: float = 10.0,
) -> OpenSearch:
    """An OpenSearch client for `url`, signed with SigV4 for an OpenSearch Service domain (`es`).

    Nothing here opens a connection or resolves credentials. Without SigV4, a `user:password@` in the URL becomes
    basic auth (a local cluster). Certificates are always verified. `credentials` (anything with
    `get_frozen_credentials()`) signs in place of the session's chain: the tenant-scoped client's.
    """
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"OpenSearch URL must look like https://host[:port], not {url!r}")
    use_ssl = parsed.scheme == "https"
    auth: Any = None
    if sigv4:
        if parsed.username:
            raise ValueError("an OpenSearch URL with a user name cannot also be signed with SigV4")
        session = session or boto3.Session()
        signing_region = region or session.region_name
        if not signing_region:
            raise ValueError("SigV4 signing needs an AWS region (RAPPORT_AWS_REGION or AWS_REGION)")
        signing = credentials if credentials is not None else _DeferredCredentials(session)
        auth = RequestsAWSV4SignerAuth(signing, signing_region, "es")
    elif parsed.username:
        auth = (unquote(parsed.username), unquote(parsed.password or ""))
    return OpenSearch(
        hosts=[
            {
                "host": parsed.hostname,
                "port": parsed.port or (443 if use_ssl else 80),
                "url_prefix": parsed.path.rstrip("/"),
            }
        ],
        http_auth=auth,
        use_ssl=use_ssl,
        verify_certs=True,
        # requests, not urllib3: the SigV4 signer is a requests auth hook that signs the final prepared request.
        connection_class=RequestsHttpConnection,
        timeout=timeout,
    )

"""The one settings model: every tunable number of the product, read from RAPPORT_* variables or a file."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class StoreBackend(StrEnum):
    SQLITE = "sqlite"
    DYNAMODB = "dynamodb"


class VectorBackend(StrEnum):
    EMBEDDED = "embedded"
    OPENSEARCH = "opensearch"


class IngestSecretBackend(StrEnum):
    STORE = "store"  # tenant items of the store: the local server's SQLite file (a developer's own disk)
    SECRETS_MANAGER = "secretsmanager"  # one Secrets Manager secret per tenant and source (the AWS deployment)


class EmbeddingPrecision(StrEnum):
    AUTO = "auto"  # bfloat16 where the CPU multiplies it in hardware (AMX, AVX512-BF16), else float32
    FLOAT32 = "float32"
    BFLOAT16 = "bfloat16"


class EmbedderKind(StrEnum):
    AUTO = "auto"  # OpenAI when OPENAI_API_KEY is set, else MiniLM
    MINILM = "minilm"
    OPENAI = "openai"
    HASHING = "hashing"


# --- Ingestion pipeline: which language model extracts and filters, and where the pipeline runs -------------------
class LlmKind(StrEnum):
    AUTO = "auto"  # OpenAI when OPENAI_API_KEY is set, else the rule-based model
    OPENAI = "openai"
    RULES = "rules"


class PipelineMode(StrEnum):
    LOCAL = "local"  # the steps in this process (the local server, tests)
    STEP_FUNCTIONS = "step_functions"  # an Express state machine execution (AWS); needs the state machine's ARN
    # The table's stream starts the state machine (AWS): the writer's answer is `started`, and a start that fails
    # is retried and parked in the pipeline's dead-letter queue, never lost (docs/pipeline.md).
    STREAM = "stream"
    OFF = "off"  # record history only


class RecallWeights(BaseSettings):
    """Weights of the hybrid recall score; they need not sum to one (scores are compared, not read as probabilities)."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_WEIGHT_")

    vector: float = Field(0.55, ge=0)
    keyword: float = Field(0.25, ge=0)
    recency: float = Field(0.08, ge=0)
    importance: float = Field(0.07, ge=0)
    strength: float = Field(0.05, ge=0)
    # The graph's relation component (docs/graph.md); 0 for a memory without edges, so it changes nothing then.
    relation: float = Field(0.25, ge=0)
    # The share of its score an assistant's own reply keeps (docs/recall.md): the person's words rank above it.
    assistant_words: float = Field(0.75, ge=0, le=1)


# --- Recall in its conversation (docs/recall.md, docs/BENCHMARKS.md) -------------------------------------------------
class RecallContextWeights(BaseSettings):
    """How much a candidate's conversation adds to its query match (domain.scoring.context_boosts); 0 turns one off.

    Measured on LoCoMo's development split (docs/BENCHMARKS.md); each is a general rule of conversations, not a fit to
    questions: an answer inherits its question's match, evidence clusters in one sitting, and a question that names a
    person is mostly answered by that person's own words.
    """

    model_config = SettingsConfigDict(env_prefix="RAPPORT_RECALL_CONTEXT_")

    answer: float = Field(0.2, ge=0, le=1)  # × the match of the question the message answers
    conversation: float = Field(0.4, ge=0, le=1)  # × the best match in the same conversation
    speaker: float = Field(0.12, ge=0, le=1)  # added when the query names the speaker (score units)
    adjacent: float = Field(0.05, ge=0, le=1)  # x the better match of the messages right before and after it


class RecallTimeWeights(BaseSettings):
    """What a temporal question adds to a candidate's query match (domain.temporal_recall.time_boosts); 0 turns one
    off. Measured on LoCoMo's tuning set (docs/recall.md, "Time as data")."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_RECALL_TIME_")

    in_range: float = Field(0.2, ge=0, le=1)  # x its match, when a date it names falls in the question's dates
    dated: float = Field(0.2, ge=0, le=1)  # x its match, when a "when" question meets words that say when


class RecallAcrossSettings(BaseSettings):
    """Questions that gather facts across the history ("what activities…", "how many times…", "what do X and Y
    both…": domain.feedback.asks_across) and the bounded second pass they may take (docs/recall.md, "A second pass
    for multi-hop questions"). Measured on LoCoMo's tuning set."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_RECALL_ACROSS_")

    # Scored as of the whole history: recency and strength favour the latest sittings, which such a question is not
    # about (their weights count 0 for it).
    whole_history: bool = True
    # Taken from each sitting in turn: a hit's score counts this much less for every hit of its sitting ranked above.
    sitting_spread: float = Field(0.05, ge=0, le=1)
    # The second pass: one more index search and one store read of what it alone found. Off: it bought nothing
    # measurable on LoCoMo (docs/recall.md) and costs a search.
    second_pass: bool = False
    seeds: int = Field(5, ge=1, le=20)  # the first pass's best hits it feeds back
    feedback_weight: float = Field(0.4, ge=0, le=1)  # how far the query vector moves towards the seeds' mean
    bridging_terms: int = Field(4, ge=0, le=20)  # names and titles of the seeds added to the keyword query
    keep: int = Field(3, ge=0)  # the first pass's first hits that keep their places
    # A place in the second ranking counts as that place divided by this in the first (domain.feedback.fused_order).
    second_weight: float = Field(0.5, ge=0, le=4)


# --- Relational state, signals, /v1/process and the people a user mentions ----------------------------------------
class RelationalSettings(BaseSettings):
    """The relational numbers, each a setting; docs/relational-state.md explains each one and its default."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_RELATIONAL_")

    # Where a person we have never talked to starts (no rule prescribes it): trust half-way, no familiarity.
    initial_trust: float = Field(0.5, ge=0, le=1)
    initial_familiarity: float = Field(0.0, ge=0, le=1)

    # trust: +0.01 per interaction up to 0.95, no time decay
    trust_per_interaction: float = Field(0.01, ge=0, le=1)
    trust_ceiling: float = Field(0.95, ge=0, le=1)
    # Broken promise: the penalty depends on the trust held just before it. Trust tiers: high >= 0.7,
    # medium >= 0.4, low below; the higher the trust, the harder the fall (-0.10 / -0.05 / -0.02).
    trust_tier_high: float = Field(0.7, ge=0, le=1)
    trust_tier_medium: float = Field(0.4, ge=0, le=1)
    broken_promise_penalty_high: float = Field(0.10, ge=0, le=1)
    broken_promise_penalty_medium: float = Field(0.05, ge=0, le=1)
    broken_promise_penalty_low: float = Field(0.02, ge=0, le=1)
    # A kept promise earns what two ordinary interactions do, under the same ceiling (a choice of ours).
    promise_kept_trust_bonus: float = Field(0.02, ge=0, le=1)

    # sentiment: 0.5 neutral, an exponential moving average of each message's mood (each step covers 0.7 of the
    # distance to it), half-life 6 h back toward neutral
    sentiment_neutral: float = Field(0.5, ge=0, le=1)
    mood_factor: float = Field(0.7, ge=0, le=1)
    sentiment_half_life_hours: float = Field(6.0, gt=0)

    # grudge: +0.05 frustration, +0.10 anger, +0.15 anger with shouting, +0.20 crisis flag; half-life 12 h
    grudge_frustration: float = Field(0.05, ge=0, le=1)
    grudge_anger: float = Field(0.10, ge=0, le=1)
    grudge_anger_shouting: float = Field(0.15, ge=0, le=1)
    grudge_crisis: float = Field(0.20, ge=0, le=1)
    grudge_half_life_hours: float = Field(12.0, gt=0)
    # Resolving a crisis takes back what flagging it added (a choice of ours).
    crisis_resolved_grudge_relief: float = Field(0.20, ge=0, le=1)

    # familiarity: +0.005 per interaction, no decay
    familiarity_per_interaction: float = Field(0.005, ge=0, le=1)

    # tone: grudge >= 0.4 -> "cautious", >= 0.7 -> "cautious_defensive"
    cautious_grudge: float = Field(0.4, ge=0, le=1)
    cautious_defensive_grudge: float = Field(0.7, ge=0, le=1)

    # Optimistic concurrency: how often a state/profile/person write is retried after a concurrent change.
    write_attempts: int = Field(10, ge=1, le=50)

    # /v1/process: top-K 3 above similarity 0.3, plus up to 3 relational memories above the same bar.
    process_top_k: int = Field(3, ge=1, le=50)
    process_min_similarity: float = Field(0.3, ge=-1, le=1)
    process_relational_limit: int = Field(3, ge=0, le=50)
    process_history_messages: int = Field(6, ge=0, le=50)  # earlier turns of the session sent with the reply
    # Without a session_id, earlier turns count as the same conversation within working memory's 30 minutes.
    process_history_window_minutes: float = Field(30.0, ge=0)
    # A turn of /v1/process waits this long for the caller's reply, and is kept as long once recorded, so a
    # repeated reply is answered as a replay.
    turn_retention_days: int = Field(7, ge=1, le=365)
    # Using a memory in a reply raises its strength by this much (bounded at 1.0).
    reinforcement_boost: float = Field(0.1, ge=0, le=1)

    # People the user mentions: how much one opinionated sentence moves the user's sentiment toward a person,
    # and how many of the latest things said about them are kept.
    person_sentiment_weight: float = Field(0.5, gt=0, le=1)
    person_max_facts: int = Field(20, ge=1, le=200)

    @model_validator(mode="after")
    def _ordered(self) -> RelationalSettings:
        if self.trust_tier_medium > self.trust_tier_high:
            raise ValueError("trust_tier_medium must not exceed trust_tier_high")
        if self.cautious_grudge > self.cautious_defensive_grudge:
            raise ValueError("cautious_grudge must not exceed cautious_defensive_grudge")
        return self


# --- Relationships between memories, enrichment, recall expansion, shared knowledge ------------------------------
class EnrichmentMode(StrEnum):
    INLINE = "inline"  # right after a memory is stored, in the same process and request (tests, tools)
    # The writer publishes a Memories Stored event, and a worker thread of the same process links (the local server):
    # off the request path, as in AWS. Over a real event bus it is `event`.
    BACKGROUND = "background"
    EVENT = "event"  # the writer publishes a Memories Stored event; the enrichment function links (AWS, docs/graph.md)
    OFF = "off"  # nobody enriches (a bulk import, say; enrich later with the enrichment function)


class GraphSettings(BaseSettings):
    """The graph's numbers, each a setting; docs/graph.md explains each one and its default."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_GRAPH_")

    enrichment: EnrichmentMode = EnrichmentMode.BACKGROUND
    # PRECEDED_BY: to the same user's memories of the previous 24 h, the nearest few (a flood guard: a busy day
    # would otherwise link every memory to every other), read from the newest `enrich_candidate_limit` memories.
    preceded_by_window_hours: float = Field(24.0, gt=0)
    preceded_by_limit: int = Field(5, ge=0, le=100)
    enrich_candidate_limit: int = Field(50, ge=1, le=1000)
    # SIMILAR_TO: the top 5 above cosine 0.8, both ways.
    similar_to_limit: int = Field(5, ge=0, le=50)
    similar_to_min_similarity: float = Field(0.8, ge=-1, le=1)
    # Conversation episodes get PRECEDED_BY and SIMILAR_TO (their context) but never pattern links: chat words recur
    # by chance. False leaves episodes out of enrichment altogether.
    enrich_episodes: bool = True
    # EXEMPLIFIES to Pattern nodes: a key term shared by at least `pattern_min_occurrences` of the user's non-episode
    # memories is a pattern; confidence reaches 1 at `pattern_full_confidence` occurrences.
    pattern_min_occurrences: int = Field(3, ge=2, le=100)
    pattern_full_confidence: int = Field(6, ge=2, le=1000)
    pattern_max_terms: int = Field(5, ge=0, le=20)  # key terms checked per memory (one keyword search each)
    pattern_candidate_limit: int = Field(50, ge=1, le=500)  # memories read per key term
    # Memories linked to one pattern at most: expansion reads no more of a node's edges (`expand_edge_read_limit`),
    # and a node's edges are one item, whose every write rewrites it (and which DynamoDB caps at 400 KB): unbounded,
    # a common term's node grew with the store and so did the cost of every memory that showed it.
    pattern_exemplar_limit: int = Field(50, ge=1, le=1000)
    # Recall expansion: relation_limit 5 per seed, expansion_limit 25 in total.
    relation_limit: int = Field(5, ge=0, le=50)
    expansion_limit: int = Field(25, ge=0, le=200)
    expand_min_strength: float = Field(0.3, ge=0, le=1)
    expand_min_importance: float = Field(0.0, ge=0, le=1)
    expand_edge_read_limit: int = Field(50, ge=1, le=1000)  # edges read per node and direction
    # Relation score = incoming x 0.5 + outgoing x 0.3 + type diversity x 0.2; each part is normalised by
    # saturation (summed strength / `relation_saturation`, distinct types / `relation_type_saturation`, capped at 1).
    relation_incoming_weight: float = Field(0.5, ge=0)
    relation_outgoing_weight: float = Field(0.3, ge=0)
    relation_diversity_weight: float = Field(0.2, ge=0)
    relation_saturation: float = Field(5.0, gt=0)
    relation_type_saturation: int = Field(4, ge=1)
    relation_score_pool: int = Field(20, ge=0, le=200)  # best candidates whose edges are read for the score
    # Enrichment's automatic links do not count: time adjacency says nothing about a memory's standing, and many
    # close neighbours mark a generic message ("Thanks, you too!"), not an important one (LoCoMo dev R@5 0.695 ->
    # 0.620 when SIMILAR_TO counted; docs/graph.md).
    relation_score_ignores: list[str] = Field(default_factory=lambda: ["PRECEDED_BY", "SIMILAR_TO"])
    # Shared knowledge graph per tenant: query depth (default 2, refused beyond the maximum) and bounds.
    knowledge_default_depth: int = Field(2, ge=0)
    knowledge_max_depth: int = Field(3, ge=0, le=10)
    knowledge_seed_limit: int = Field(5, ge=1, le=100)
    knowledge_max_nodes: int = Field(100, ge=1, le=2000)
    knowledge_max_batch: int = Field(200, ge=1, le=1000)  # nodes + edges per POST /v1/knowledge
    # What the pipeline may add from conversations: things, never people (people stay in the user's PERSON items).
    knowledge_shareable_categories: list[str] = Field(
        default_factory=lambda: ["organization", "product", "technology", "place", "concept", "topic"]
    )

    @model_validator(mode="after")
    def _ordered(self) -> GraphSettings:
        if self.knowledge_default_depth > self.knowledge_max_depth:
            raise ValueError("knowledge_default_depth must not exceed knowledge_max_depth")
        if self.pattern_full_confidence < self.pattern_min_occurrences:
            raise ValueError("pattern_full_confidence must not be below pattern_min_occurrences")
        return self


# --- Memory governance: decay, compression, consolidation, tiers, retention, jobs ---------------------------------
class PlanTier(StrEnum):
    """A plan's retention cap on conversation messages per end user (docs/governance.md)."""

    COMMUNITY = "community"
    CLINIC = "clinic"
    ENTERPRISE = "enterprise"


class GovernanceSettings(BaseSettings):
    """The governance numbers, each a setting; docs/governance.md explains each one and its default."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_GOVERNANCE_")

    # decay: effective strength = strength x exp(-rate x days since last reinforcement); per day, by domain
    user_decay_rate: float = Field(0.1, ge=0)
    relational_decay_rate: float = Field(0.05, ge=0)

    # compression: user older than 7 days with effective strength < 0.3; relational older than 14 days with < 0.2
    user_compress_after_days: float = Field(7.0, ge=0)
    user_compress_below_strength: float = Field(0.3, ge=0, le=1)
    relational_compress_after_days: float = Field(14.0, ge=0)
    relational_compress_below_strength: float = Field(0.2, ge=0, le=1)
    # How many memories one compact memory summarizes, and its length (a choice of ours).
    compress_max_group: int = Field(20, ge=1, le=200)
    summary_max_chars: int = Field(2_000, ge=100, le=8_000)

    # consolidation: clusters above this cosine (a setting, 0.85 by default: below the pipeline's 0.9
    # de-duplication, which already merges near-identical memories as they arrive)
    consolidation_min_similarity: float = Field(0.85, ge=-1, le=1)
    # "facts" for user memories, "patterns" for relational ones
    user_consolidation_types: list[str] = Field(default_factory=lambda: ["fact", "preference", "goal"])
    relational_consolidation_types: list[str] = Field(
        default_factory=lambda: [
            "interaction_pattern",
            "communication_preference",
            "approach_effectiveness",
            "working_style",
        ]
    )
    consolidation_max_candidates: int = Field(1_000, ge=2, le=10_000)  # per user, domain and type, strongest first
    consolidation_max_cluster: int = Field(20, ge=2, le=200)

    # working memory (tier 1): the session's last turns and a running summary within a 4-8k token budget, kept
    # for 30 minutes after the last activity. Turns are folded into the summary once the context passes the upper
    # bound, until it is back under the lower one (so folding does not happen on every turn).
    session_ttl_minutes: float = Field(30.0, gt=0)
    session_min_tokens: int = Field(4_000, ge=1)
    session_max_tokens: int = Field(8_000, ge=1)
    session_summary_max_tokens: int = Field(1_000, ge=1)
    chars_per_token: float = Field(4.0, gt=0)  # token estimate without a tokenizer (English averages ~4)

    # short-term (tier 2): the last 7 days of conversation, at most 100 messages per conversation
    short_term_window_days: float = Field(7.0, ge=0)
    short_term_max_messages_per_conversation: int = Field(100, ge=1)

    # retention caps per plan tier, in conversation messages per end user (None: unlimited); the relational state
    # (trust, sentiment, grudge, familiarity) is never capped
    community_max_messages: int | None = Field(500, ge=1)
    clinic_max_messages: int | None = Field(5_000, ge=1)
    enterprise_max_messages: int | None = Field(None, ge=1)
    default_plan: PlanTier = PlanTier.COMMUNITY

    # jobs: users listed per fan-out page, the SQS queue of per-user work (AWS), and how long one job may hold a
    # user before another job may take over (a crashed run never blocks a user for longer)
    fanout_page_size: int = Field(100, ge=1, le=1_000)
    job_queue_url: str | None = None
    lease_minutes: float = Field(15.0, gt=0)

    def max_messages(self, plan: PlanTier) -> int | None:
        return {
            PlanTier.COMMUNITY: self.community_max_messages,
            PlanTier.CLINIC: self.clinic_max_messages,
            PlanTier.ENTERPRISE: self.enterprise_max_messages,
        }[plan]

    @model_validator(mode="after")
    def _ordered(self) -> GovernanceSettings:
        if self.session_min_tokens > self.session_max_tokens:
            raise ValueError("session_min_tokens must not exceed session_max_tokens")
        if self.session_summary_max_tokens >= self.session_min_tokens:
            raise ValueError("session_summary_max_tokens must stay below session_min_tokens")
        return self


class OpenAiBudget(BaseModel):
    """How long one OpenAI call may take at worst: every attempt timing out, and the longest wait between them."""

    timeout_seconds: float = Field(gt=0)
    max_retries: int = Field(ge=0)
    max_retry_delay_seconds: float = Field(ge=0)

    def worst_case_seconds(self) -> float:
        return (self.max_retries + 1) * self.timeout_seconds + self.max_retries * self.max_retry_delay_seconds

    def environment(self) -> dict[str, str]:
        """The settings' variables, for a function's environment."""
        return {
            "RAPPORT_OPENAI_TIMEOUT_SECONDS": f"{self.timeout_seconds:g}",
            "RAPPORT_OPENAI_MAX_RETRIES": str(self.max_retries),
            "RAPPORT_OPENAI_MAX_RETRY_DELAY_SECONDS": f"{self.max_retry_delay_seconds:g}",
        }

    @classmethod
    def of(cls, environment: dict[str, str]) -> OpenAiBudget:
        return cls(
            timeout_seconds=float(environment["RAPPORT_OPENAI_TIMEOUT_SECONDS"]),
            max_retries=int(environment["RAPPORT_OPENAI_MAX_RETRIES"]),
            max_retry_delay_seconds=float(environment["RAPPORT_OPENAI_MAX_RETRY_DELAY_SECONDS"]),
        )


# What a calling function keeps for itself besides one OpenAI call (reads, writes, the other calls' fast paths).
OPENAI_HEADROOM_SECONDS = 5.0


def openai_budget_within(
    deadline_seconds: float,
    *,
    max_retries: int,
    max_retry_delay_seconds: float = 2.0,
    headroom_seconds: float = OPENAI_HEADROOM_SECONDS,
) -> OpenAiBudget:
    """The per-attempt timeout that makes one call's worst case end `headroom_seconds` before `deadline_seconds`
    (a function's timeout), throttling waits counted. The one place the CDK stack takes these numbers from."""
    spare = deadline_seconds - headroom_seconds - max_retries * max_retry_delay_seconds
    timeout = int(spare / (max_retries + 1) * 10) / 10  # rounded down, so the environment's value still fits
    if timeout < 1:
        raise ValueError(f"{deadline_seconds} s cannot hold {max_retries + 1} OpenAI attempts; raise the timeout")
    return OpenAiBudget(
        timeout_seconds=timeout, max_retries=max_retries, max_retry_delay_seconds=max_retry_delay_seconds
    )


class Settings(BaseSettings):
    """Runtime configuration. Domain code receives this object; it never reads the environment itself."""

    model_config = SettingsConfigDict(env_prefix="RAPPORT_", env_file=None, extra="ignore")

    # Where data lives
    store: StoreBackend = StoreBackend.SQLITE
    vector_backend: VectorBackend = VectorBackend.EMBEDDED
    data_dir: Path = Path(".rapport")
    table_name: str = "rapport"
    aws_region: str | None = Field(None, validation_alias=AliasChoices("RAPPORT_AWS_REGION", "AWS_REGION"))
    # The tenant access role (AWS): when set, the store and the index sign each request as the session of the
    # tenant being served, whose policies admit that tenant's items and index alias only (docs/security.md).
    tenant_access_role_arn: str | None = None
    # Per-person keys (docs/security.md, "Per-person keys"): each end user's content sealed with a data key of their
    # own, destroyed by their erasure. Locally the keys live under `{data_dir}/keys`; in AWS in the keys table (no
    # backups, no PITR, no stream) wrapped by the KMS key, both named by the stack. Off: rows are written plain.
    person_keys: bool = True
    person_keys_table: str | None = None
    person_keys_kms_key_id: str | None = None
    # How long a process keeps a person's plaintext data key: an erasure in another warm process takes effect here
    # within this (the erasing process forgets it at once).
    person_key_cache_seconds: float = Field(60.0, ge=0, le=900)

    # OpenSearch
    opensearch_url: str | None = Field(None, validation_alias=AliasChoices("RAPPORT_OPENSEARCH_URL", "OPENSEARCH_URL"))
    opensearch_index: str = "rapport-memories"
    opensearch_sigv4: bool = True

    # Embeddings
    embedder: EmbedderKind = EmbedderKind.AUTO
    embedding_model: str = "text-embedding-3-small"
    embedding_dimensions: int = Field(1536, ge=16, le=3072)
    hashing_dimensions: int = Field(256, ge=16, le=4096)
    # The local MiniLM's dense layers: float32, or bfloat16 (vectors within ~3e-5 of cosine of float32's, products
    # 2-5x faster where the CPU multiplies bfloat16 itself), or `auto`: bfloat16 where it does (AMX tiles,
    # AVX512-BF16), float32 elsewhere (docs/recall.md says why `auto` is the default).
    embedding_precision: EmbeddingPrecision = EmbeddingPrecision.AUTO
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("RAPPORT_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    openai_api_key_secret_arn: str | None = None  # in AWS the key comes from Secrets Manager, never a plain env var
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("RAPPORT_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    # One OpenAI call's worst case, `OpenAiBudget.worst_case_seconds`: the stack derives these three per function
    # from its timeout (`openai_budget_within`), so a call that keeps failing ends before the function does.
    openai_max_retries: int = Field(4, ge=0, le=10)
    openai_timeout_seconds: float = Field(30.0, gt=0)
    # The longest wait between attempts, a server's Retry-After (429 throttling) included: it is capped to this.
    openai_max_retry_delay_seconds: float = Field(8.0, ge=0)

    # Ingestion pipeline (docs/pipeline.md): record -> extract (user || relational) -> filter -> store
    llm: LlmKind = LlmKind.AUTO  # RAPPORT_LLM
    llm_model: str = "gpt-4o-mini"
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0)
    pipeline: PipelineMode = PipelineMode.LOCAL  # RAPPORT_PIPELINE
    pipeline_state_machine_arn: str | None = None
    # Where failed runs wait for `rapport dlq replay` (AWS: the SQS queue; unset: the store's failed-run items).
    pipeline_dead_letter_queue_url: str | None = None
    pipeline_max_candidates: int = Field(20, ge=1, le=100)  # per extractor and interaction
    # The rule-based model's semantic layer (docs/pipeline.md): it runs wherever the embedder has a calibration
    # (MiniLM: `rapport serve`); elsewhere, or off, the patterns answer alone (docs/pipeline.md, "On by default").
    semantic_layer: bool = True  # RAPPORT_SEMANTIC_LAYER
    pipeline_max_prompt_chars: int = Field(24_000, ge=500)  # the newest messages that fit are what the model reads
    # A new memory this close (cosine) to an active one of its domain reinforces it instead of being added.
    pipeline_duplicate_similarity: float = Field(0.9, ge=0.0, le=1.0)
    pipeline_reinforcement_step: float = Field(0.1, ge=0.0, le=1.0)  # strength added per new observation, max 1.0
    # Tier by importance (docs/pipeline.md): above 0.8 long-term, above 0.5 short-term, else working memory.
    pipeline_long_term_importance: float = Field(0.8, ge=0.0, le=1.0)
    pipeline_short_term_importance: float = Field(0.5, ge=0.0, le=1.0)

    # Input limits: well below DynamoDB's 400 KB item size, embedding included
    max_content_chars: int = Field(8_000, ge=1, le=100_000)
    max_metadata_bytes: int = Field(8_192, ge=0, le=64_000)
    max_messages_per_interaction: int = Field(200, ge=1)
    max_message_chars: int = Field(16_000, ge=1)
    max_interaction_chars: int = Field(90_000, ge=1)  # x4 bytes of UTF-8 stays under 400 KB
    max_page_size: int = Field(100, ge=1, le=1000)

    # Episodes read in reply (docs/recall.md): an episode's vector blends its own text with the text of the
    # message before it followed by its own, this much of the latter (0: own text only, one embedding per episode).
    # Write-time: a change applies to episodes recorded after it.
    episode_reply_weight: float = Field(0.7, ge=0, le=1)
    episode_reply_chars: int = Field(500, ge=0, le=8_000)  # the preceding message's last characters that are kept
    # Resolve the time phrases of each message and of what is extracted from it to dates (docs/recall.md, "Time as
    # data"); off stores none. Write-time, like the two above.
    resolve_message_dates: bool = True

    # Recall: domain retrieval limit 5; /process top-K 3 above similarity 0.3
    recall_default_limit: int = Field(5, ge=1)
    recall_candidate_pool: int = Field(50, ge=1)
    # How deep keyword (BM25) scores are read: a candidate found by meaning keeps its keyword score when it ranks
    # past the pool by keywords alone (docs/recall.md). Only the pool's best by keywords become candidates.
    recall_keyword_depth: int = Field(200, ge=1)
    # A keyword score counts as a share of the best one among the hits, but of no less than this share of what a
    # memory of average length holding each of the query's words once would score (the index's `keyword_ceiling`,
    # where it knows its term statistics): a best match on one common word of the question is not full keyword
    # evidence (docs/recall.md). 0 for shares of the best one alone.
    recall_keyword_floor: float = Field(0.5, ge=0)
    recall_recency_half_life_days: float = Field(30.0, gt=0)
    # Boosts lift what matches; they must not bury what matches best by meaning (docs/recall.md): the best candidates
    # by cosine, this share of the limit (rounded down) and at least `recall_semantic_min_similarity` close, keep a
    # place in the answer whatever keywords, context or the graph add to the others. Any other strong match is kept
    # from hits above it only on what the query does not give (domain.recall.keeping_best_by_meaning).
    recall_semantic_share: float = Field(0.2, ge=0, le=1)
    recall_semantic_min_similarity: float = Field(0.4, ge=-1, le=1)
    # Up to this much below `recall_semantic_min_similarity`, a candidate is a strong match too when it is no more
    # than this short of the query's best cosine (domain.recall.strong_by_meaning; docs/recall.md).
    recall_semantic_margin: float = Field(0.1, ge=0, le=1)
    # A strong match this close to the query's best cosine is kept as the best one is: MiniLM's cosines a hundredth
    # apart do not say which memory answers (docs/recall.md, "Boosts never bury a strong semantic match").
    recall_semantic_tie: float = Field(0.01, ge=0, le=1)
    recall_context: RecallContextWeights = Field(default_factory=RecallContextWeights)
    recall_time: RecallTimeWeights = Field(default_factory=RecallTimeWeights)
    recall_across: RecallAcrossSettings = Field(default_factory=RecallAcrossSettings)
    # What an inference question ("would she enjoy…", domain.feedback.asks_inference) adds to the score of an
    # extracted user memory (a preference, a goal, a fact), in score units; 0: off, as it bought nothing on LoCoMo
    # (docs/recall.md, "Open-domain questions").
    recall_inference_boost: float = Field(0.0, ge=0, le=1)
    weights: RecallWeights = Field(default_factory=RecallWeights)
    # Match strength cuts on relevance, measured (bench/match_strength.py, docs/recall.md): 1 % of unrelated memories
    # reach strong and 10 % moderate, with MiniLM on LoCoMo; an embedder of another similarity range needs its own.
    strong_match_score: float = Field(0.40, ge=0, le=1)
    moderate_match_score: float = Field(0.24, ge=0, le=1)

    # Relational state, signals, /v1/process, people: see RelationalSettings above
    relational: RelationalSettings = Field(default_factory=RelationalSettings)

    # Relationships, enrichment, recall expansion, shared knowledge: see GraphSettings above
    graph: GraphSettings = Field(default_factory=GraphSettings)

    # Decay, compression, consolidation, tiers, retention caps, jobs: see GovernanceSettings above
    governance: GovernanceSettings = Field(default_factory=GovernanceSettings)

    # --- Deployment and chat-platform ingestion (docs/deploy.md) ---------------------------------------------------
    # The EventBridge bus the signed ingest routes publish to. Unset: in-process dispatch to the consumer (local).
    event_bus_name: str | None = None
    # Where each tenant's Slack signing secret and webhook secret live (`rapport ingest-secret set`), and the name
    # prefix of those secrets in Secrets Manager (`{prefix}/{tenant}/{slack|webhook}`; the stack grants `{prefix}/*`).
    ingest_secret_backend: IngestSecretBackend = IngestSecretBackend.STORE
    ingest_secret_prefix: str = Field("rapport/ingest", min_length=1, max_length=200)
    # A signed request whose timestamp is further than this from now is refused (Slack's rule: 5 minutes).
    ingest_replay_window_seconds: int = Field(300, ge=30, le=3600)
    # How long an event id is remembered, so a retry or replay is acknowledged without a second ingest. It must
    # outlast the replay window and every retry (Slack retries for about an hour, EventBridge for up to 24 h).
    ingest_idempotency_hours: int = Field(48, ge=1, le=24 * 30)
    # Signed requests one tenant may send in a window, counted once the signature is verified (so a stranger naming
    # a tenant in `?tenant=` spends none of its budget); over it, 429 with Retry-After. Slack's own ceiling is 30,000
    # events per workspace an hour, 2,500 per 5 minutes.
    ingest_rate_limit: int = Field(3000, ge=1)
    ingest_rate_window_seconds: int = Field(300, ge=1, le=3600)

    # --- Outbound webhooks (docs/webhooks.md) ----------------------------------------------------------------------
    # The SQS queue the deliveries go through in AWS; unset, a background thread of the process delivers them.
    webhook_queue_url: str | None = None
    # http://localhost and 127.0.0.1 endpoints, for development and tests only; everything else must be https.
    webhook_allow_local_http: bool = False
    # Attempts per event and endpoint, and the backoff between them: base, 2x, 4x... capped (SQS delays at most
    # 900 s). Six attempts at 30 s base span about 15 minutes.
    webhook_max_attempts: int = Field(6, ge=1, le=20)
    webhook_retry_base_seconds: float = Field(30.0, gt=0, le=900)
    webhook_retry_max_seconds: float = Field(900.0, gt=0, le=900)
    webhook_timeout_seconds: float = Field(5.0, gt=0, le=30)
    webhook_max_endpoints: int = Field(20, ge=1, le=100)
    # How long a process keeps a tenant's endpoint list before reading it again (writes announce events without a
    # read each); an endpoint registered elsewhere starts receiving within this.
    webhook_endpoint_cache_seconds: float = Field(60.0, ge=0, le=3600)
    webhook_delivery_log_days: int = Field(30, ge=1, le=365)

    # Keyed requests (Idempotency-Key, docs/pipeline.md): how long a key is remembered, how long a first attempt
    # blocks its key outside Lambda (in Lambda: the function's remaining time), and the Retry-After of a 409.
    idempotency_expiry_hours: float = Field(24.0, gt=0, le=24 * 30)
    idempotency_in_progress_seconds: float = Field(300.0, gt=0)
    idempotency_retry_after_seconds: int = Field(2, ge=1, le=60)

    # Local auth
    api_keys: str | None = None  # "key1:tenant-a,key2:tenant-b"
    # Browser origins the local server answers cross-origin ("http://localhost:5173,https://app.example"; "*" for
    # any). None by default: a page served from elsewhere cannot call the API with a user's key unless allowed.
    cors_origins: str | None = None
    # The local server closes a request whose body has not arrived whole this long after its headers (408): a client
    # that announces a body and never sends it would otherwise hold a connection open for as long as it likes.
    body_timeout_seconds: float = Field(10.0, gt=0, le=300)

    def cors_origin_list(self) -> list[str]:
        return [o.strip().rstrip("/") for o in (self.cors_origins or "").split(",") if o.strip()]

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
    def person_keys_dir(self) -> Path:
        return self.data_dir / "keys"

    @property
    def embedded_index_path(self) -> Path:
        return self.data_dir / "vectors.sqlite3"

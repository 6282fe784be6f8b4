"""DynamoDB adapter of `MemoryStore`: the single-table source of truth in AWS (layout in docs/data-model.md)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError

from rapport.adapters.dynamodb import keys as keys
from rapport.adapters.dynamodb import records as records
from rapport.adapters.dynamodb.connections import TableConnections
from rapport.adapters.dynamodb.items import DynamoDbItems, item_actions
from rapport.adapters.dynamodb.table import (
    TRANSACTION_SIZE,
    batch_delete,
    batch_get,
    batch_write,
    create_table,
    query_page,
    transact_put,
    transact_write,
    translated,
)
from rapport.domain.models import (
    TYPES_BY_DOMAIN,
    ApiKeyRecord,
    AuditEvent,
    Domain,
    ErasureCounts,
    Interaction,
    Memory,
    Page,
    RelationshipCounts,
)
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import ConflictError, InvalidInputError, NotFoundError
from rapport.ports.items import ItemScope, ItemWrite, relationship_of

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource, Table

    from rapport.adapters.aws.tenant_credentials import TenantCredentials
    from rapport.sealing import Keyring

__all__ = ["DynamoDbMemoryStore", "create_table"]


class DynamoDbMemoryStore(DynamoDbItems):
    """Every key starts with the tenant, so another tenant's id is simply a key that does not exist."""

    def __init__(
        self,
        table_name: str,
        *,
        dynamodb_resource: DynamoDBServiceResource | None = None,
        region_name: str | None = None,
        tenant_credentials: TenantCredentials | None = None,
        keyring: Keyring | None = None,
    ) -> None:
        """`tenant_credentials`: every call signs as the session of the tenant being served (`rapport.tenancy`),
        whose IAM policy admits that tenant's partitions only; none may be made outside a tenant's work.
        `keyring`: each end user's content is sealed with their data key (docs/security.md, "Per-person keys")."""
        self._table_name = table_name
        self._keyring = keyring
        self._connections = TableConnections(
            table_name,
            resource=dynamodb_resource,
            region_name=region_name,
            tenant_credentials=tenant_credentials,
            keyring=keyring,
        )

    @property
    def keyring(self) -> Keyring | None:
        """What opens the stream's images of this table (the indexer)."""
        return self._keyring

    @property
    def _dynamodb(self) -> DynamoDBServiceResource:
        return self._connections.current().resource

    @property
    def table_name(self) -> str:
        return self._table_name

    @property
    def client(self) -> Any:
        """A low-level client of the same region and credentials, for what speaks the client API (Powertools
        Idempotency)."""
        return self._connections.low_level_client()

    @property
    def _table(self) -> Table:
        return self._connections.current().table

    # memories

    def put_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        item, *vector = records.memory_items(memory)
        records.check_item_size(item, f"memory {memory.id}")
        # A replace: a memory put without an embedding has none afterwards, so its vector item goes.
        vector_key = records.embedding_key(item)
        if if_reinforced_at is None:
            # One request for both items. The stream's record of the memory may reach the indexer a moment before
            # the vector is readable; that record fails and its retry finds it.
            batch_write(self._dynamodb, self._table_name, puts=[item, *vector], deletes=[] if vector else [vector_key])
            return
        # Conditional: both items or neither, so a lost race leaves no vector of a text that was never stored.
        first: Any = {
            "Put": {
                "TableName": self._table_name,
                "Item": item,
                "ConditionExpression": "#at = :at",
                "ExpressionAttributeNames": {"#at": "last_reinforced_at"},
                "ExpressionAttributeValues": {":at": keys.format_time(if_reinforced_at)},
            }
        }
        second: Any = (
            {"Put": {"TableName": self._table_name, "Item": vector[0]}}
            if vector
            else {"Delete": {"TableName": self._table_name, "Key": vector_key}}
        )
        with translated("put memory"):
            try:
                self._dynamodb.meta.client.transact_write_items(TransactItems=[first, second])
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                    raise
                self.get_memory(memory.scope, memory.id)  # NotFoundError when it is gone
                raise ConflictError(f"memory {memory.id} was reinforced concurrently") from exc

    def update_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        item = records.memory_to_item(memory)
        records.check_item_size(item, f"memory {memory.id}")
        # One UpdateItem of the memory item's own attributes: its vector item is not touched (nor an old layout's
        # inline vector), and DynamoDB bills the write by the memory item alone.
        fields = {name: value for name, value in item.items() if name not in (keys.PARTITION_KEY, keys.SORT_KEY)}
        names = {f"#a{i}": name for i, name in enumerate(fields)}
        values: dict[str, Any] = {f":v{i}": value for i, value in enumerate(fields.values())}
        expression = "SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(fields)))
        gone = [name for name in records.OPTIONAL_MEMORY_ATTRIBUTES if name not in fields]
        if gone:
            names.update({f"#r{i}": name for i, name in enumerate(gone)})
            expression += " REMOVE " + ", ".join(f"#r{i}" for i in range(len(gone)))
        names["#sk"] = keys.SORT_KEY
        condition = "attribute_exists(#sk)"
        if if_reinforced_at is not None:
            names["#at"], values[":at"] = "last_reinforced_at", keys.format_time(if_reinforced_at)
            condition += " AND #at = :at"
        with translated("update memory"):
            try:
                self._table.update_item(
                    Key={keys.PARTITION_KEY: item[keys.PARTITION_KEY], keys.SORT_KEY: item[keys.SORT_KEY]},
                    UpdateExpression=expression,
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
                self.get_memory(memory.scope, memory.id)  # NotFoundError when it is gone
                raise ConflictError(f"memory {memory.id} was reinforced concurrently") from exc

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        found = self.get_memories(scope, [memory_id])
        if not found:
            raise NotFoundError(f"memory {memory_id} not found")
        return found[0]

    def get_memories(
        self, scope: Scope, memory_ids: Iterable[str], *, vectors: Collection[str] | None = None
    ) -> list[Memory]:
        pk = keys.user_partition(scope.tenant_id, scope.user_id)
        # BatchGetItem rejects a request that names the same key twice. Each memory and its vector are read
        # together: one request for up to 50 memories, more when some vectors are not wanted.
        unique_ids = list(dict.fromkeys(memory_ids))
        wanted = [
            {keys.PARTITION_KEY: pk, keys.SORT_KEY: sort_key}
            for mid in unique_ids
            for sort_key in (
                (keys.memory_sort_key(mid), keys.embedding_sort_key(mid))
                if vectors is None or mid in vectors
                else (keys.memory_sort_key(mid),)
            )
        ]
        return _joined(batch_get(self._dynamodb, self._table_name, wanted))

    def delete_memory(self, scope: Scope, memory_id: str) -> None:
        self._delete_user_item(scope, keys.memory_sort_key(memory_id), f"memory {memory_id}")
        key = {keys.PARTITION_KEY: keys.user_partition(scope.tenant_id, scope.user_id)}
        with translated("delete embedding"):
            self._table.delete_item(Key={**key, keys.SORT_KEY: keys.embedding_sort_key(memory_id)})

    def list_memories(
        self,
        scope: Scope,
        *,
        domains: tuple[Domain, ...],
        memory_type: str | None = None,
        limit: int,
        cursor: str | None = None,
        every_assistant: bool = False,
    ) -> Page[Memory]:
        wanted_domains = set(domains)
        if not wanted_domains:
            return Page[Memory](items=[], next_cursor=None)
        pk = keys.user_partition(scope.tenant_id, scope.user_id)
        filter_expression: ConditionBase | None = None
        index_name: str | None
        if every_assistant:
            # The governance jobs walk all of a person's memories; the index partitions are per assistant.
            index_name, partition = None, pk
            if len(wanted_domains) == 1:
                filter_expression = Attr("domain").eq(next(iter(wanted_domains)).value)
            if memory_type is not None:
                by_type = Attr("type").eq(memory_type)
                filter_expression = by_type if filter_expression is None else filter_expression & by_type
        elif memory_type is not None:
            index_name = keys.GSI_BY_TYPE
            relational = memory_type in TYPES_BY_DOMAIN[Domain.RELATIONAL]
            partition = keys.type_partition(
                scope.tenant_id, scope.user_id, memory_type, scope.agent_id if relational else None
            )
            if len(wanted_domains) == 1:
                # Types are few per user, so filtering the type's partition by domain reads little beyond the page.
                filter_expression = Attr("domain").eq(next(iter(wanted_domains)).value)
        elif len(wanted_domains) == 1:
            index_name = keys.GSI_BY_DOMAIN
            partition = keys.domain_partition(
                scope.tenant_id, scope.user_id, next(iter(wanted_domains)), scope.agent_id
            )
        else:
            index_name = None
            partition = pk
            # Both domains from the table: the person's facts, and the relational memories of this assistant only.
            filter_expression = _visible_to(scope)
        partition_attr, sort_attr = keys.GSI_KEYS[index_name] if index_name else (keys.PARTITION_KEY, keys.SORT_KEY)
        key_condition: ConditionBase = Key(partition_attr).eq(partition)
        if index_name is None:
            # The user partition also holds edges, interactions, state…: only the MEM# range is memories.
            key_condition = key_condition & Key(sort_attr).begins_with(keys.MEMORY_PREFIX)
        items, next_cursor = query_page(
            self._table,
            key_condition=key_condition,
            index_name=index_name,
            limit=limit,
            cursor=cursor,
            # On an index the start key also carries the table key; both must stay inside this end user's memories.
            pins={keys.PARTITION_KEY: pk, partition_attr: partition},
            prefixes={keys.SORT_KEY: keys.MEMORY_PREFIX, sort_attr: keys.MEMORY_PREFIX},
            newest_first=True,
            filter_expression=filter_expression,
        )
        return Page[Memory](items=[records.memory_from_item(item) for item in items], next_cursor=next_cursor)

    def count_memories(self, scope: Scope) -> int:
        condition = Key(keys.PARTITION_KEY).eq(keys.user_partition(scope.tenant_id, scope.user_id)) & Key(
            keys.SORT_KEY
        ).begins_with(keys.MEMORY_PREFIX)
        total = 0
        start_key: Mapping[str, Any] | None = None
        while True:
            request: dict[str, Any] = {"KeyConditionExpression": condition, "Select": "COUNT"}
            if start_key:
                request["ExclusiveStartKey"] = start_key
            with translated("count memories"):
                response = self._table.query(**request)
            total += int(response.get("Count", 0))
            start_key = response.get("LastEvaluatedKey")
            if not start_key:
                return total

    def iter_all_memories(self, tenant_id: str | None = None) -> Iterable[Memory]:
        # A Scan is acceptable here: it serves `rapport reindex`, a rare operator action, never a request.
        condition: ConditionBase = Attr(keys.SORT_KEY).begins_with(keys.MEMORY_PREFIX)
        if tenant_id is not None:
            # The '#' after the tenant id keeps tenant "t" from matching tenant "t2".
            condition = condition & Attr(keys.PARTITION_KEY).begins_with(f"{keys.tenant_partition(tenant_id)}#")
        start_key: Mapping[str, Any] | None = None
        while True:
            request: dict[str, Any] = {"FilterExpression": condition}
            if start_key:
                request["ExclusiveStartKey"] = start_key
            with translated("scan memories"):
                response = self._table.scan(**request)
            page = response.get("Items", [])
            # The vectors of the page in one batched read (the scan's filter leaves them out).
            vectors = batch_get(self._dynamodb, self._table_name, [records.embedding_key(i) for i in page])
            yield from _joined([*page, *vectors])
            start_key = response.get("LastEvaluatedKey")
            if not start_key:
                return

    # interactions

    def put_interaction(
        self,
        interaction: Interaction,
        episodes: Sequence[Memory] = (),
        *,
        with_items: Sequence[ItemWrite] = (),
        known_user: bool = False,
    ) -> None:
        item = records.interaction_to_item(interaction)
        records.check_item_size(item, f"interaction {interaction.id}")
        for memory in episodes:
            records.check_item_size(records.memory_to_item(memory), f"memory {memory.id}")
        # Each episode is its item and its vector's; a transaction holds up to 100 of them.
        episode_items = [part for memory in episodes for part in records.memory_items(memory)]
        # The history item's transaction also carries the registration and the caller's item writes. The tenant's
        # entry in the registry is written only for a user not known yet: every interaction of the tenant's users
        # would otherwise write that one item, and concurrent transactions on one item cancel each other.
        registration = [records.user_registration_item(interaction.tenant_id, interaction.user_id)]
        if not known_user:
            registration.append(records.tenant_registration_item(interaction.tenant_id))
        beside = [{"Put": {"Item": i}} for i in (item, *registration)]
        beside += item_actions(ItemScope.of_user(interaction.scope), with_items, interaction.created_at)
        room = TRANSACTION_SIZE - len(beside)
        if room < 0:
            raise InvalidInputError(
                f"interaction {interaction.id} changes {len(with_items)} items besides its history; one write holds "
                f"{TRANSACTION_SIZE - len(beside) + len(with_items)} at most: send its messages in smaller parts"
            )
        # The last transaction carries the history item with the episodes that fit beside it; episodes past what one
        # transaction holds go first, and are taken back when a later write fails.
        head = episode_items[:room]
        rest = episode_items[room:]
        written: list[Mapping[str, Any]] = []
        try:
            for start in range(0, len(rest), TRANSACTION_SIZE):
                chunk = rest[start : start + TRANSACTION_SIZE]
                transact_put(self._dynamodb, self._table_name, chunk)
                written += chunk
            last = [*({"Put": {"Item": i}} for i in head), *beside]
            transact_write(self._dynamodb, self._table_name, last, "put interaction")
        except Exception:
            if written:
                batch_delete(self._dynamodb, self._table_name, [_key_of(i) for i in written])
            raise

    def remove_interaction(self, interaction: Interaction) -> None:
        pk = keys.user_partition(interaction.tenant_id, interaction.user_id)
        doomed = [
            {keys.PARTITION_KEY: pk, keys.SORT_KEY: sort_key}
            for m in interaction.memory_ids
            for sort_key in (keys.memory_sort_key(m), keys.embedding_sort_key(m))
        ]
        doomed.append({keys.PARTITION_KEY: pk, keys.SORT_KEY: keys.interaction_sort_key(interaction.id)})
        batch_delete(self._dynamodb, self._table_name, doomed)

    def get_interaction(self, scope: Scope, interaction_id: str) -> Interaction:
        sort_key = keys.interaction_sort_key(interaction_id)
        item = self._get_user_item(scope, sort_key, f"interaction {interaction_id}")
        return records.interaction_from_item(item)

    def list_interactions(
        self, scope: Scope, *, limit: int, cursor: str | None = None, oldest_first: bool = False
    ) -> Page[Interaction]:
        pk = keys.user_partition(scope.tenant_id, scope.user_id)
        items, next_cursor = query_page(
            self._table,
            key_condition=Key(keys.PARTITION_KEY).eq(pk) & Key(keys.SORT_KEY).begins_with(keys.INTERACTION_PREFIX),
            index_name=None,
            limit=limit,
            cursor=cursor,
            pins={keys.PARTITION_KEY: pk},
            prefixes={keys.SORT_KEY: keys.INTERACTION_PREFIX},
            newest_first=not oldest_first,
        )
        return Page[Interaction](items=[records.interaction_from_item(item) for item in items], next_cursor=next_cursor)

    def delete_interaction(self, scope: Scope, interaction_id: str) -> None:
        sort_key = keys.interaction_sort_key(interaction_id)
        self._delete_user_item(scope, sort_key, f"interaction {interaction_id}")

    # one item of an end user's partition, by sort key; `what` names it in the error and the failure message

    def _get_user_item(self, scope: Scope, sort_key: str, what: str) -> Mapping[str, Any]:
        key = {keys.PARTITION_KEY: keys.user_partition(scope.tenant_id, scope.user_id), keys.SORT_KEY: sort_key}
        with translated(f"get {what.split()[0]}"):
            response = self._table.get_item(Key=key, ConsistentRead=True)
        item = response.get("Item")
        if item is None:
            raise NotFoundError(f"{what} not found")
        return item

    def _delete_user_item(self, scope: Scope, sort_key: str, what: str) -> None:
        key = {keys.PARTITION_KEY: keys.user_partition(scope.tenant_id, scope.user_id), keys.SORT_KEY: sort_key}
        with translated(f"delete {what.split()[0]}"):
            response = self._table.delete_item(Key=key, ReturnValues="ALL_OLD")
        if "Attributes" not in response:
            raise NotFoundError(f"{what} not found")

    # tenancy

    def put_api_key(self, record: ApiKeyRecord) -> None:
        with translated("put API key"):
            self._table.put_item(Item=records.api_key_to_item(record))
            self._table.put_item(Item=records.tenant_registration_item(record.tenant_id))

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        partition_attr, _ = keys.GSI_KEYS[keys.GSI_BY_API_KEY]
        with translated("find API key"):
            response = self._table.query(
                IndexName=keys.GSI_BY_API_KEY,
                KeyConditionExpression=Key(partition_attr).eq(keys.api_key_lookup_partition(key_hash)),
                Limit=2,
            )
        found = response.get("Items", [])
        if not found:
            return None
        if len(found) > 1:
            # Two tenants holding one key would make authentication a coin toss; refuse rather than pick one.
            raise ConflictError("this API key is registered to more than one tenant; rotate it")
        return records.api_key_from_item(found[0])

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        condition = Key(keys.PARTITION_KEY).eq(keys.tenant_partition(tenant_id)) & Key(keys.SORT_KEY).begins_with(
            keys.api_key_sort_key("")
        )
        query: dict[str, Any] = {"KeyConditionExpression": condition}
        found: list[ApiKeyRecord] = []
        with translated("list API keys"):
            while True:
                page = self._table.query(**query)
                found += [records.api_key_from_item(item) for item in page.get("Items", [])]
                if "LastEvaluatedKey" not in page:
                    return found
                query["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def register_user(self, scope: Scope) -> None:
        # A plain put is idempotent: the item carries nothing that a second registration could change.
        with translated("register user"):
            previous = self._table.put_item(
                Item=records.user_registration_item(scope.tenant_id, scope.user_id), ReturnValues="ALL_OLD"
            )
            if "Attributes" not in previous:
                # A new end user: make sure the tenant is in the registry the jobs walk (idempotent as well).
                self._table.put_item(Item=records.tenant_registration_item(scope.tenant_id))

    def list_users(self, tenant_id: str, *, limit: int, cursor: str | None = None) -> Page[str]:
        pk = keys.tenant_partition(tenant_id)
        items, next_cursor = query_page(
            self._table,
            key_condition=Key(keys.PARTITION_KEY).eq(pk) & Key(keys.SORT_KEY).begins_with(keys.USER_PREFIX),
            index_name=None,
            limit=limit,
            cursor=cursor,
            pins={keys.PARTITION_KEY: pk},
            prefixes={keys.SORT_KEY: keys.USER_PREFIX},
            newest_first=False,
        )
        return Page[str](items=[str(item["user_id"]) for item in items], next_cursor=next_cursor)

    def list_tenants(self, *, limit: int, cursor: str | None = None) -> Page[str]:
        pk = keys.TENANT_REGISTRY_PARTITION
        items, next_cursor = query_page(
            self._table,
            key_condition=Key(keys.PARTITION_KEY).eq(pk),
            index_name=None,
            limit=limit,
            cursor=cursor,
            pins={keys.PARTITION_KEY: pk},
            prefixes={keys.SORT_KEY: keys.TENANT_PREFIX},
            newest_first=False,
        )
        # The tenant is read from the sort key, not an attribute: a tenant's session may put registry entries (its
        # first user adds one), and an entry put under another tenant's key can then only repeat that tenant's id.
        tenants = [str(item[keys.SORT_KEY]).removeprefix(keys.TENANT_PREFIX) for item in items]
        return Page[str](items=tenants, next_cursor=next_cursor)

    # privacy

    def erase_user(self, scope: Scope) -> ErasureCounts:
        pk = keys.user_partition(scope.tenant_id, scope.user_id)
        if self._keyring is not None:
            # First, in one request: from here on every copy of the person's items (backups, point-in-time recovery,
            # stream records, dead letters, and whatever a failure below leaves for the retry) is unreadable.
            self._keyring.destroy(scope.tenant_id, scope.user_id)
        memories = interactions = others = 0
        agents: dict[str, RelationshipCounts] = {}
        start_key: Mapping[str, Any] | None = None
        while True:
            # Only the keys are read (and what says whose relationship a memory is part of), and each page is
            # deleted before the next is read, so a user with a long history never has to fit in memory. Deleting
            # behind the cursor does not disturb the query.
            request: dict[str, Any] = {
                "KeyConditionExpression": Key(keys.PARTITION_KEY).eq(pk),
                "ProjectionExpression": "#pk, #sk, #domain, #source.#agent, #kind, #key",
                "ExpressionAttributeNames": {
                    "#pk": keys.PARTITION_KEY,
                    "#sk": keys.SORT_KEY,
                    "#domain": "domain",
                    "#source": "source",
                    "#agent": records.AGENT_ATTRIBUTE,
                    "#kind": "kind",
                    "#key": "item_key",
                },
                "ConsistentRead": True,
            }
            if start_key:
                request["ExclusiveStartKey"] = start_key
            with translated("read user items for erasure"):
                response = self._table.query(**request)
            page = response.get("Items", [])
            page_keys = [
                {keys.PARTITION_KEY: item[keys.PARTITION_KEY], keys.SORT_KEY: item[keys.SORT_KEY]} for item in page
            ]
            for item in page:
                sort_key = str(item[keys.SORT_KEY])
                if sort_key.startswith(keys.MEMORY_PREFIX):
                    memories += 1
                    if item.get("domain") == Domain.RELATIONAL.value:
                        source = item.get("source")
                        named = source.get(records.AGENT_ATTRIBUTE) if isinstance(source, Mapping) else None
                        agent = str(named or DEFAULT_AGENT)
                        agents.setdefault(agent, RelationshipCounts()).relational_memories += 1
                elif sort_key.startswith(keys.EMBEDDING_PREFIX):
                    pass  # a memory's vector: counted with its memory
                elif sort_key.startswith(keys.INTERACTION_PREFIX):
                    interactions += 1
                else:
                    others += 1
                    if "kind" in item:
                        agent_of_item = relationship_of(str(item["kind"]), str(item.get("item_key", "")))
                        if agent_of_item is not None:
                            agents.setdefault(agent_of_item, RelationshipCounts()).items += 1
            batch_delete(self._dynamodb, self._table_name, page_keys)
            start_key = response.get("LastEvaluatedKey")
            if not start_key:
                break
        # The registration goes last: if the erasure fails half way, jobs can still find the user and a retry
        # finishes the job.
        registration = {
            keys.PARTITION_KEY: keys.tenant_partition(scope.tenant_id),
            keys.SORT_KEY: keys.user_sort_key(scope.user_id),
        }
        with translated("remove user registration"):
            removed = self._table.delete_item(Key=registration, ReturnValues="ALL_OLD")
        if "Attributes" in removed:
            others += 1
        return ErasureCounts(memories=memories, interactions=interactions, other_items=others, agents=agents)

    def put_audit_event(self, event: AuditEvent) -> None:
        with translated("put audit event"):
            self._table.put_item(Item=records.audit_event_to_item(event))

    def list_audit_events(
        self,
        tenant_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        user_hash: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Page[AuditEvent]:
        # One end user's events come from gsi3 (their own partition there), the tenant's from its audit partition;
        # either way the sort key starts with the time, so the time bounds are part of the key condition.
        if user_hash is None:
            index_name: str | None = None
            partition_attr, sort_attr = keys.PARTITION_KEY, keys.SORT_KEY
            pk = keys.audit_partition(tenant_id)
        else:
            index_name = keys.GSI_AUDIT_BY_USER
            partition_attr, sort_attr = keys.GSI_KEYS[index_name]
            pk = keys.audit_user_partition(tenant_id, user_hash)
        condition: ConditionBase = Key(partition_attr).eq(pk)
        # `sk` is `{time}#{id}`: every key of an instant at or after `since` sorts at or after the bare time, every
        # key of an instant before `until` before it, and none equals it (so `between`, inclusive, ends before it).
        low = keys.format_time(since) if since else None
        high = keys.format_time(until) if until else None
        if low and high:
            condition = condition & Key(sort_attr).between(low, high)
        elif low:
            condition = condition & Key(sort_attr).gte(low)
        elif high:
            condition = condition & Key(sort_attr).lt(high)
        items, next_cursor = query_page(
            self._table,
            key_condition=condition,
            index_name=index_name,
            limit=limit,
            cursor=cursor,
            pins={partition_attr: pk},
            prefixes={},
            newest_first=True,
        )
        return Page[AuditEvent](items=[records.audit_event_from_item(item) for item in items], next_cursor=next_cursor)


def _visible_to(scope: Scope) -> ConditionBase:
    """What one assistant lists of a person's memories: every user memory, and its own relational ones (the default
    assistant's carry no assistant attribute, as before assistants had names)."""
    path = f"source.{records.AGENT_ATTRIBUTE}"
    own = Attr(path).not_exists() if scope.agent_id == DEFAULT_AGENT else Attr(path).eq(scope.agent_id)
    return Attr("domain").eq(Domain.USER.value) | own


def _joined(items: Sequence[Mapping[str, Any]]) -> list[Memory]:
    """Memory items and vector items (in any order) as memories, each with its vector when it was among them."""
    vectors = {
        (item[keys.PARTITION_KEY], str(item[keys.SORT_KEY]).removeprefix(keys.EMBEDDING_PREFIX)): item
        for item in items
        if str(item[keys.SORT_KEY]).startswith(keys.EMBEDDING_PREFIX)
    }
    return [
        records.memory_from_item(item, vectors.get((item[keys.PARTITION_KEY], str(item["id"]))))
        for item in items
        if str(item[keys.SORT_KEY]).startswith(keys.MEMORY_PREFIX)
    ]


def _key_of(item: Mapping[str, Any]) -> dict[str, Any]:
    return {keys.PARTITION_KEY: item[keys.PARTITION_KEY], keys.SORT_KEY: item[keys.SORT_KEY]}

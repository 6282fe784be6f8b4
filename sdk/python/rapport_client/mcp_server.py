"""The MCP server: Rapport's memory as MCP tools and resources, through this client (`mcp_command` runs it)."""

# No `from __future__ import annotations`: the MCP SDK reads each tool's annotations (its JSON schema) at
# registration, and plain annotations are what it is documented against.

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from rapport_client import _mcp_answers as answer
from rapport_client._version import __version__
from rapport_client.client import AsyncRapport
from rapport_client.errors import NotFound, RapportError

RECENT_MEMORIES = 50  # what the memories resource shows: the newest, a page the server answers in one request

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = """Rapport is this assistant's long-term memory of the people it talks with.
At the start of a conversation call `get_context` with the person's message: it returns what is known about them,
the relationship's state, the tone to take and a system prompt. Store durable facts with `remember` (one statement
each), look things up with `recall`, and record finished exchanges with `record_conversation` so Rapport learns
from them. Use `forget_memory` when the person asks you to forget something."""


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


@dataclass(frozen=True)
class McpConfig:
    """Where the API is and how the server behaves; `from_environment` reads `RAPPORT_*`, flags override it."""

    base_url: str
    api_key: str
    default_user_id: str | None = None
    # The assistant this server speaks for (each of a tenant's assistants keeps its own relationship with a
    # person); a tool's `agent_id` overrides it, None is the tenant's default assistant.
    agent_id: str | None = None
    allow_erase: bool = False
    timeout: float = 60.0
    log_level: LogLevel = "WARNING"


class ConversationMessage(BaseModel):
    role: Literal["user", "assistant", "system"] = Field(description="Who said it.")
    content: str = Field(description="What was said, verbatim.")
    name: str | None = Field(None, max_length=128, description="The speaker's name, when known.")


UserId = Annotated[
    str | None,
    Field(
        description="The end user (person) this is about, e.g. 'dana'. May be omitted when the server has a "
        "default user (RAPPORT_USER_ID)."
    ),
]
RecallDomain = Annotated[
    Literal["user", "relational", "both"],
    Field(description="'user': facts about the person; 'relational': how you two work together; 'both'."),
]
MemoryDomain = Annotated[
    Literal["user", "relational"],
    Field(
        description="'user' for facts about the person (the default); 'relational' for how the assistant and "
        "the person work together (what helps, how they like answers)."
    ),
]
MemoryType = Annotated[
    str | None,
    Field(
        description="Optional. For 'user': fact (default), preference, event, goal. For 'relational': "
        "shared_context (default), interaction_pattern, collaboration_outcome, approach_effectiveness, "
        "communication_preference, working_style."
    ),
]

AgentId = Annotated[
    str | None,
    Field(
        description="Optional: which of the tenant's assistants you are (a slug such as 'support-bot'); each keeps "
        "its own relationship with the person. Omitted: the server's assistant (RAPPORT_AGENT_ID) or the default."
    ),
]
SessionId = Annotated[
    str | None, Field(max_length=128, description="Optional: groups the exchanges of one chat (a conversation id).")
]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


def build_server(config: McpConfig) -> MCPServer[AsyncRapport]:
    """The MCP server over one `AsyncRapport`, opened when the server starts and closed when it stops. Nothing
    reaches the network here."""

    @asynccontextmanager
    async def connected(_: MCPServer[AsyncRapport]) -> AsyncIterator[AsyncRapport]:
        async with AsyncRapport(
            config.base_url, config.api_key, timeout=config.timeout, agent_id=config.agent_id
        ) as client:
            yield client

    instructions = INSTRUCTIONS
    if config.default_user_id:
        instructions += f"\nThe default user is '{config.default_user_id}': `user_id` may be omitted."
    server: MCPServer[AsyncRapport] = MCPServer(
        "rapport",
        title="Rapport memory",
        instructions=instructions,
        version=__version__,
        lifespan=connected,
        # Logs go to stderr (stdout is the stdio transport); at INFO every API request and failed call is logged.
        log_level=config.log_level,
    )

    def tool(title: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(fn: F) -> F:
            # The docstring as one paragraph: a client shows the description as is, indentation included.
            described = " ".join((inspect.getdoc(fn) or "").split())
            server.add_tool(fn, title=title, description=described, annotations=annotations)
            return fn

        return register

    def user(user_id: str | None) -> str:
        chosen = user_id if user_id is not None and user_id.strip() else config.default_user_id
        if not chosen:
            raise ToolError(
                answer.argument_error_text(
                    "user_id is required: pass the person's id (this server has no default user, RAPPORT_USER_ID)"
                )
            )
        return chosen

    @tool(title="Remember", annotations=WRITES)
    async def remember(
        ctx: Context[AsyncRapport],
        content: Annotated[str, Field(description="One self-contained statement, e.g. 'Has a dog named Max'.")],
        user_id: UserId = None,
        domain: MemoryDomain = "user",
        type: MemoryType = None,
        importance: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="0..1; how much this should weigh in recall.")
        ] = None,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Store one durable memory about the person (a fact, preference, goal, event) or about how you work
        together. Returns the stored memory with its id (for `forget_memory`)."""
        client = _client(ctx)
        stored = await _calling(
            client.memories.add(
                user(user_id), content, domain=domain, type=type, importance=importance, agent_id=agent_id
            )
        )
        return answer.memory(stored)

    @tool(title="Recall", annotations=READ_ONLY)
    async def recall(
        ctx: Context[AsyncRapport],
        query: Annotated[str, Field(description="What to look for, in words: 'their dog', 'how they like answers'.")],
        user_id: UserId = None,
        domain: RecallDomain = "both",
        limit: Annotated[int, Field(ge=1, le=50, description="How many memories at most (default 5).")] = 5,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Search the person's memories by meaning and keywords, best first, each with its similarity and why it
        matched."""
        client = _client(ctx)
        found = await _calling(
            client.memories.search(user(user_id), query, limit=limit, domain=domain, agent_id=agent_id)
        )
        return answer.recall(found)

    @tool(title="Record a conversation", annotations=WRITES)
    async def record_conversation(
        ctx: Context[AsyncRapport],
        messages: Annotated[
            list[ConversationMessage], Field(min_length=1, description="The exchange, in order, oldest first.")
        ],
        user_id: UserId = None,
        session_id: SessionId = None,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Record a finished exchange with the person: it becomes history, updates the relationship (trust,
        sentiment) and the people mentioned, and the pipeline extracts memories from it (listed in the answer)."""
        client = _client(ctx)
        sent = [m.model_dump(exclude_none=True) for m in messages]
        recorded = await _calling(
            client.interactions.record(
                user(user_id), sent, channel="mcp", session_id=session_id, wait=True, agent_id=agent_id
            )
        )
        return answer.recorded(recorded)

    @tool(title="Get context", annotations=WRITES)
    async def get_context(
        ctx: Context[AsyncRapport],
        message: Annotated[str, Field(description="The person's latest message, verbatim.")],
        user_id: UserId = None,
        session_id: SessionId = None,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Everything to answer the person's message with: relevant memories, relational notes, the relationship's
        state (trust, sentiment, grudge, familiarity), the tone to take, a crisis flag (when true, answer with care
        and safety first) and a ready system prompt. Returns a `turn_id`: send your reply with `record_reply` so the
        exchange is remembered."""
        client = _client(ctx)
        processed = await _calling(
            client.process(user(user_id), message, channel="mcp", session_id=session_id, agent_id=agent_id)
        )
        return answer.context(processed)

    @tool(title="Record a reply", annotations=WRITES)
    async def record_reply(
        ctx: Context[AsyncRapport],
        turn_id: Annotated[str, Field(description="The `turn_id` that `get_context` returned.")],
        reply: Annotated[str, Field(description="The reply you gave the person, verbatim.")],
        user_id: UserId = None,
    ) -> dict[str, Any]:
        """Record your reply to the message `get_context` was called with: the exchange becomes history and
        memories. Sending the same reply again is answered as already recorded."""
        client = _client(ctx)
        recorded = await _calling(client.turns.reply(user(user_id), turn_id, reply, wait=True))
        return answer.turn_recorded(recorded)

    @tool(title="Relationship state", annotations=READ_ONLY)
    async def relationship_state(
        ctx: Context[AsyncRapport], user_id: UserId = None, agent_id: AgentId = None
    ) -> dict[str, Any]:
        """The relationship with the person as of now: trust, sentiment, grudge, familiarity (0..1, decayed to
        now), relation bias, the tone modifier to apply, whether a crisis is open, and their profile."""
        client = _client(ctx)
        return answer.state(await _calling(client.state.get(user(user_id), agent_id=agent_id)))

    @tool(title="People the person mentions", annotations=READ_ONLY)
    async def list_people(
        ctx: Context[AsyncRapport],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="How many people at most (default 20).")] = 20,
    ) -> dict[str, Any]:
        """The people the person talks about (colleagues, family, friends): role, how they feel about each one, and
        the latest things said about them."""
        client = _client(ctx)
        people = await _calling(_collected(client.people.list(user(user_id), page_size=limit), limit))
        return {"people": [answer.person(p) for p in people]}

    @tool(title="Forget a memory", annotations=DESTROYS)
    async def forget_memory(
        ctx: Context[AsyncRapport],
        memory_id: Annotated[str, Field(description="The memory's id, from `recall` or `remember`.")],
        user_id: UserId = None,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Delete one memory for good, e.g. when the person asks you to forget something."""
        client = _client(ctx)
        await _calling(client.memories.delete(user(user_id), memory_id, agent_id=agent_id))
        return {"forgotten": memory_id}

    if config.allow_erase:

        @tool(title="Erase everything about a person", annotations=DESTROYS)
        async def erase_user(
            ctx: Context[AsyncRapport],
            user_id: Annotated[str, Field(description="The person whose data is erased. Never defaulted.")],
        ) -> dict[str, Any]:
            """Erase everything Rapport holds about the person (memories, history, relationship, people) for
            good. Only when the person explicitly asks for it; the audit trail keeps counts only."""
            if not user_id.strip():  # never the default user: erasing is asked for by name
                raise ToolError(answer.argument_error_text("user_id is required to erase a person's data"))
            client = _client(ctx)
            erased = await _calling(client.users.erase(user_id))
            return erased.model_dump(mode="json")

    @server.resource(
        "rapport://users/{user_id}/memories",
        name="memories",
        title="A person's recent memories",
        description=f"The newest {RECENT_MEMORIES} active memories about the person, as JSON.",
        mime_type="application/json",
    )
    async def memories_resource(user_id: str, ctx: Context[AsyncRapport]) -> str:
        client = _client(ctx)
        recent = await _reading(_collected(client.memories.list(user_id, page_size=RECENT_MEMORIES), RECENT_MEMORIES))
        return json.dumps({"user_id": user_id, "memories": [answer.memory(m) for m in recent]})

    @server.resource(
        "rapport://users/{user_id}/state",
        name="state",
        title="The relationship's state",
        description="Trust, sentiment, grudge, familiarity and tone for the person as of now, as JSON.",
        mime_type="application/json",
    )
    async def state_resource(user_id: str, ctx: Context[AsyncRapport]) -> str:
        client = _client(ctx)
        return json.dumps(answer.state(await _reading(client.state.get(user_id))))

    return server


def _client(ctx: Context[AsyncRapport]) -> AsyncRapport:
    return ctx.request_context.lifespan_context


async def _calling(call: Awaitable[T]) -> T:
    """A tool's API call: an error answer, or an argument the client refuses, is the tool's error (its text the
    API's code and message), never a crash of the server."""
    try:
        return await call
    except RapportError as exc:
        raise ToolError(answer.error_text(exc)) from exc
    except ValueError as exc:  # the client refuses e.g. an empty id before any request
        raise ToolError(answer.argument_error_text(str(exc))) from exc


async def _reading(call: Awaitable[T]) -> T:
    try:
        return await call
    except NotFound as exc:
        raise ResourceNotFoundError(answer.error_text(exc)) from exc
    except RapportError as exc:
        raise ResourceError(answer.error_text(exc)) from exc
    except ValueError as exc:
        raise ResourceError(answer.argument_error_text(str(exc))) from exc


async def _collected(items: AsyncIterator[T], limit: int) -> list[T]:
    taken: list[T] = []
    async for item in items:
        taken.append(item)
        if len(taken) >= limit:
            break
    return taken

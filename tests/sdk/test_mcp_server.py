"""`rapport mcp` / `rapport-mcp` driven by the official MCP client over both transports, stdio (a spawned process)
and streamable HTTP (a server on a free port), against a started Rapport server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents

from rapport_client import Rapport
from tests.e2e.conftest import ROOT, RunningServer, free_port
from tests.sdk.conftest import API_KEY

pytestmark = pytest.mark.anyio

TOOLS = {
    "remember",
    "recall",
    "record_conversation",
    "get_context",
    "record_reply",
    "relationship_state",
    "list_people",
    "forget_memory",
}

Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _environment(server: RunningServer, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "RAPPORT_URL": server.base_url,
        "RAPPORT_API_KEY": API_KEY,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "HF_HUB_OFFLINE": "1",
        **(extra or {}),
    }


@asynccontextmanager
async def stdio_client(server: RunningServer, *flags: str, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """`rapport mcp` spawned as a desktop client would, talking over its stdin and stdout."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rapport.cli", "mcp", *flags],
        env=_environment(server, env),
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        yield client


@pytest.fixture(scope="module")
def http_endpoint(rapport_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`rapport-mcp --transport http` on a free port, for the module."""
    port = free_port()
    log = (tmp_path_factory.mktemp("mcp") / "mcp-http.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "rapport_client.mcp_command", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, **_environment(rapport_server)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"rapport-mcp exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("rapport-mcp did not start listening")


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, rapport_server: RunningServer) -> Connect:
    """A client of the MCP server over one transport (the test runs once per transport)."""
    if request.param == "stdio":
        return lambda: stdio_client(rapport_server)
    url = request.getfixturevalue("http_endpoint")
    return lambda: Client(url)


@pytest.fixture
def user() -> str:
    return f"mcp-{uuid.uuid4().hex[:12]}"


def _data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, _text(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def _tool_error(result: CallToolResult) -> dict[str, Any]:
    """The API's error carried by a tool error: `{error, message, status?}` after the SDK's own prefix."""
    assert result.is_error, result
    text = _text(result)
    error: dict[str, Any] = json.loads(text[text.index("{") :])
    return error


async def test_lists_the_tools_with_schemas_and_the_resources(connect: Connect) -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        templates = (await client.list_resource_templates()).resource_templates

    # Then: every tool an assistant acts on, none that erases (the server was not started with --allow-erase)
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert "\n" not in tool.description
        assert tool.input_schema["type"] == "object"
    remember = tools["remember"].input_schema
    assert remember["required"] == ["content"]
    assert remember["properties"]["domain"]["enum"] == ["user", "relational"]
    assert "description" in remember["properties"]["user_id"]
    assert tools["recall"].annotations is not None and tools["recall"].annotations.read_only_hint
    assert tools["forget_memory"].annotations is not None and tools["forget_memory"].annotations.destructive_hint
    assert {t.uri_template for t in templates} == {
        "rapport://users/{user_id}/memories",
        "rapport://users/{user_id}/state",
    }


async def test_every_tool_and_resource_against_the_api(connect: Connect, user: str) -> None:
    async with connect() as client:
        # Given: a memory and a recorded conversation
        stored = _data(await client.call_tool("remember", {"user_id": user, "content": "Has a dog named Max"}))
        assert (stored["domain"], stored["type"], stored["content"]) == ("user", "fact", "Has a dog named Max")
        relational = _data(
            await client.call_tool(
                "remember",
                {
                    "user_id": user,
                    "content": "Prefers bullet points over long paragraphs",
                    "domain": "relational",
                    "type": "communication_preference",
                },
            )
        )
        assert relational["type"] == "communication_preference"
        conversation = [
            {"role": "user", "content": "My boss Sarah keeps moving our deadlines and it drives me mad"},
            {"role": "assistant", "content": "That sounds exhausting. Want to plan how to raise it with her?"},
        ]
        recorded = _data(await client.call_tool("record_conversation", {"user_id": user, "messages": conversation}))
        assert recorded["interaction_id"] and recorded["messages"] == 2

        # When / Then: recall finds the memory, with its similarity
        found = _data(await client.call_tool("recall", {"user_id": user, "query": "dog named Max", "limit": 3}))
        assert found["memories"][0]["id"] == stored["id"]
        assert found["memories"][0]["similarity"] > 0

        people = _data(await client.call_tool("list_people", {"user_id": user}))
        assert [(p["slug"], p["role"]) for p in people["people"]] == [("sarah", "boss")]
        assert people["people"][0]["sentiment_label"] == "negative"

        state = _data(await client.call_tool("relationship_state", {"user_id": user}))
        assert state["user_id"] == user and 0 <= state["trust"] <= 1
        assert state["profile"]["interaction_count"] == 1

        context = _data(await client.call_tool("get_context", {"user_id": user, "message": "How is my dog Max?"}))
        assert "Has a dog named Max" in [m["text"] for m in context["memories"]]
        assert "Has a dog named Max" in context["system_prompt"]
        assert context["crisis"] is False
        assert set(context["state"]) == {"trust", "sentiment", "grudge", "familiarity"}
        assert context["turn_id"] and context["turn_status"] == "awaiting_reply"

        reply = _data(
            await client.call_tool(
                "record_reply", {"user_id": user, "turn_id": context["turn_id"], "reply": "Max must be thriving!"}
            )
        )
        assert reply["turn_id"] == context["turn_id"] and reply["interaction_id"]

        memories = await client.read_resource(f"rapport://users/{user}/memories")
        state_resource = await client.read_resource(f"rapport://users/{user}/state")

        forgotten = _data(await client.call_tool("forget_memory", {"user_id": user, "memory_id": stored["id"]}))
        assert forgotten == {"forgotten": stored["id"]}
        after = _data(await client.call_tool("recall", {"user_id": user, "query": "dog named Max", "limit": 10}))

    listed = json.loads(_resource_text(memories))
    assert stored["id"] in [m["id"] for m in listed["memories"]]
    assert json.loads(_resource_text(state_resource))["user_id"] == user
    assert stored["id"] not in [m["id"] for m in after["memories"]]


def _resource_text(result: Any) -> str:
    (content,) = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "application/json"
    return content.text


async def test_bad_arguments_and_api_errors_are_tool_errors(connect: Connect, user: str) -> None:
    async with connect() as client:
        empty = _tool_error(await client.call_tool("remember", {"user_id": user, "content": "   "}))
        wrong_type = _tool_error(await client.call_tool("remember", {"user_id": user, "content": "x", "type": "nope"}))
        bad_user = _tool_error(await client.call_tool("recall", {"user_id": "no spaces allowed", "query": "x"}))
        missing = _tool_error(await client.call_tool("forget_memory", {"user_id": user, "memory_id": "01NOSUCHMEMORY"}))
        no_user = _tool_error(await client.call_tool("recall", {"query": "anything"}))
        bad_domain = await client.call_tool("remember", {"user_id": user, "content": "x", "domain": "everything"})
        out_of_range = await client.call_tool("recall", {"user_id": user, "query": "x", "limit": 500})
        # The server still answers after all of them
        still = _data(await client.call_tool("recall", {"user_id": user, "query": "x"}))
        with pytest.raises(MCPError, match="user_id"):
            await client.read_resource("rapport://users/no%20spaces/state")

    assert (empty["error"], empty["status"]) == ("invalid_input", 400) and "empty" in empty["message"]
    assert wrong_type["error"] == "invalid_input" and "nope" in wrong_type["message"]
    assert bad_user["error"] == "invalid_input" and "user_id" in bad_user["message"]
    assert (missing["error"], missing["status"]) == ("not_found", 404)
    assert no_user["error"] == "invalid_argument" and "RAPPORT_USER_ID" in no_user["message"]
    assert bad_domain.is_error and "domain" in _text(bad_domain)
    assert out_of_range.is_error and "limit" in _text(out_of_range)
    assert still["memories"] == []


async def test_erase_is_offered_only_with_allow_erase(rapport_server: RunningServer, user: str) -> None:
    async with stdio_client(rapport_server) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("erase_user", {"user_id": user})
    assert "erase_user" not in listed
    assert refused.is_error and "erase_user" in _text(refused)

    with Rapport(rapport_server.base_url, API_KEY) as sdk:
        sdk.memories.add(user, "Lives in Lisbon")
    async with stdio_client(rapport_server, "--allow-erase", env={"RAPPORT_USER_ID": user}) as client:
        assert "erase_user" in {tool.name for tool in (await client.list_tools()).tools}
        unnamed = _tool_error(await client.call_tool("erase_user", {"user_id": " "}))
        erased = _data(await client.call_tool("erase_user", {"user_id": user}))
        after = _data(await client.call_tool("recall", {"user_id": user, "query": "Lisbon"}))
    assert unnamed["error"] == "invalid_argument"  # the default user is never erased by omission
    assert erased["status"] == "erased" and erased["counts"]["memories"] == 1
    assert after["total_stored"] == 0


async def test_a_default_user_lets_tools_omit_user_id(rapport_server: RunningServer, user: str) -> None:
    async with stdio_client(rapport_server, env={"RAPPORT_USER_ID": user}) as client:
        assert user in (client.instructions or "")
        stored = _data(await client.call_tool("remember", {"content": "Is learning the cello"}))
    with Rapport(rapport_server.base_url, API_KEY) as sdk:
        assert sdk.memories.get(user, stored["id"]).content == "Is learning the cello"


def test_the_command_refuses_a_missing_key_and_a_public_bind() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAPPORT_")}
    script = shutil.which("rapport-mcp", path=str(Path(sys.executable).parent))
    assert script, "the SDK's console script is installed with it"

    no_key = subprocess.run([script], env=env, capture_output=True, text=True, timeout=60)
    public = subprocess.run(
        [script, "--api-key", "k", "--transport", "http", "--host", "0.0.0.0"],  # noqa: S104 - refused, the point
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert no_key.returncode == 2 and "RAPPORT_API_KEY" in no_key.stderr
    assert public.returncode == 2 and "--allow-remote" in public.stderr

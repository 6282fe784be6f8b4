"""The client's surface, declared once for both clients: each method is an endpoint of `_endpoints.py` bound to
the client's runner. On a `Resource[Sync]` it returns the answer; on a `Resource[Async]` a coroutine of it (and a
listing an iterator, or an async iterator), which the type checker sees too."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from typing import IO, Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload

from rapport_client import _endpoints as e
from rapport_client._calls import Call, Page
from rapport_client._portability import chunks, encode, merged
from rapport_client._runner import AsyncRunner
from rapport_client.models import ImportResult

P = ParamSpec("P")
T = TypeVar("T")


class Sync:
    """Marks the resources of `Rapport`."""


class Async:
    """Marks the resources of `AsyncRapport`."""


Mode = TypeVar("Mode", Sync, Async)


class Runner(Protocol):
    def call(self, call: Call[Any]) -> Any: ...

    def iterate(self, build: Callable[..., Call[Page[Any]]], args: Any, kwargs: dict[str, Any]) -> Any: ...


class Resource(Generic[Mode]):
    def __init__(self, runner: Runner) -> None:
        self._runner = runner


class endpoint(Generic[P, T]):  # noqa: N801 (used as a decorator-like declaration, like `property`)
    """One request, one answer."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: Resource[Sync], owner: type | None = None) -> Callable[P, T]: ...

    @overload
    def __get__(self, obj: Resource[Async], owner: type | None = None) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, obj: Resource[Any] | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        build, runner = self._build, obj._runner

        @functools.wraps(build)
        def bound(*args: Any, **kwargs: Any) -> Any:
            return runner.call(build(*args, **kwargs))

        return bound


class paged(Generic[P, T]):  # noqa: N801
    """A listing: an iterator over every item, following `next_cursor` one page at a time as it is consumed."""

    def __init__(self, build: Callable[P, Call[Page[T]]]) -> None:
        self._build = build

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: Resource[Sync], owner: type | None = None) -> Callable[P, Iterator[T]]: ...

    @overload
    def __get__(self, obj: Resource[Async], owner: type | None = None) -> Callable[P, AsyncIterator[T]]: ...

    def __get__(self, obj: Resource[Any] | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        build, runner = self._build, obj._runner

        @functools.wraps(build)
        def bound(*args: Any, **kwargs: Any) -> Any:
            build(*args, **kwargs)  # the arguments checked now, not when the first item is asked for
            return runner.iterate(build, args, kwargs)

        return bound


class Memories(Resource[Mode]):
    add = endpoint(e.memories_add)
    add_many = endpoint(e.memories_add_many)
    search = endpoint(e.memories_search)
    list = paged(e.memories_list)
    get = endpoint(e.memories_get)
    update = endpoint(e.memories_update)
    delete = endpoint(e.memories_delete)


class Interactions(Resource[Mode]):
    record = endpoint(e.interactions_record)
    get = endpoint(e.interactions_get)
    history = paged(e.interactions_history)


class Turns(Resource[Mode]):
    reply = endpoint(e.turns_reply)


class State(Resource[Mode]):
    get = endpoint(e.state_get)


class Events(Resource[Mode]):
    report = endpoint(e.events_report)
    list = paged(e.events_list)


class People(Resource[Mode]):
    list = paged(e.people_list)
    get = endpoint(e.people_get)


class Users(Resource[Mode]):
    erase = endpoint(e.users_erase)
    list = paged(e.users_list)
    # Every line of the export, the header first, fetched a page at a time; `export_to(user_id, file)` writes them.
    export = paged(e.users_export)
    import_chunk = endpoint(e.users_import_chunk)

    def import_(
        self,
        user_id: str,
        lines: Iterable[Mapping[str, Any] | str],
        *,
        on_chunk: Callable[[int, ImportResult], None] | None = None,
    ) -> Any:
        """Import any number of lines (dicts or JSON text, an export's or `rapport_client.mem0.to_lines`'), in chunks
        that fit a request; the answers merged, line numbers the file's. `on_chunk(records_sent, total_so_far)` is
        called after each chunk. On `AsyncRapport`, a coroutine."""
        runner = self._runner
        if isinstance(runner, AsyncRunner):
            return _import_async(runner, user_id, lines, on_chunk)
        return _import_sync(runner, user_id, lines, on_chunk)

    def export_to(self, user_id: str, out: IO[str]) -> int:
        """Write the export to a text file, one line each; how many lines (blocking client only)."""
        if isinstance(self._runner, AsyncRunner):
            raise TypeError("export_to is for Rapport; with AsyncRapport iterate `users.export(user_id)`")
        count = 0
        for line in self._runner.iterate(e.users_export, (user_id,), {}):
            out.write(encode(line) + "\n")
            count += 1
        return count


def _import_sync(
    runner: Runner,
    user_id: str,
    lines: Iterable[Mapping[str, Any] | str],
    on_chunk: Callable[[int, ImportResult], None] | None,
) -> ImportResult:
    total = ImportResult()
    sent = 0
    for chunk in chunks(lines, user_id=user_id):
        answer: ImportResult = runner.call(e.users_import_chunk(user_id, (chunk.head, *chunk.records)))
        total = merged(total, chunk, answer)
        sent += len(chunk.records)
        if on_chunk is not None:
            on_chunk(sent, total)
    return total


async def _import_async(
    runner: AsyncRunner,
    user_id: str,
    lines: Iterable[Mapping[str, Any] | str],
    on_chunk: Callable[[int, ImportResult], None] | None,
) -> ImportResult:
    total = ImportResult()
    sent = 0
    for chunk in chunks(lines, user_id=user_id):
        answer = await runner.call(e.users_import_chunk(user_id, (chunk.head, *chunk.records)))
        total = merged(total, chunk, answer)
        sent += len(chunk.records)
        if on_chunk is not None:
            on_chunk(sent, total)
    return total


class Audit(Resource[Mode]):
    list = paged(e.audit_list)


class Agents(Resource[Mode]):
    list = endpoint(e.agents_list)


class Surface(Resource[Mode]):
    """Everything both clients offer; `Rapport` and `AsyncRapport` add the transport and `turn`."""

    process = endpoint(e.process)
    # The privacy route under the name an application's "forget me" button would look for.
    clear_history = endpoint(e.users_erase)

    def __init__(self, runner: Runner) -> None:
        super().__init__(runner)
        self.memories: Memories[Mode] = Memories(runner)
        self.interactions: Interactions[Mode] = Interactions(runner)
        self.turns: Turns[Mode] = Turns(runner)
        self.state: State[Mode] = State(runner)
        self.events: Events[Mode] = Events(runner)
        self.people: People[Mode] = People(runner)
        self.users: Users[Mode] = Users(runner)
        self.audit: Audit[Mode] = Audit(runner)
        self.agents: Agents[Mode] = Agents(runner)

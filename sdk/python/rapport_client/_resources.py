"""The client's surface, declared once for both clients: each method is an endpoint of `_endpoints.py` bound to
the client's runner. On a `Resource[Sync]` it returns the answer; on a `Resource[Async]` a coroutine of it (and a
listing an iterator, or an async iterator), which the type checker sees too."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload

from rapport_client import _endpoints as e
from rapport_client._calls import Call, Page

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


class Audit(Resource[Mode]):
    list = paged(e.audit_list)


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

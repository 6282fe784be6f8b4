"""The services a process builds from its environment (`services_from_environment`), as the Lambda handlers do."""

from __future__ import annotations

from rapport.composition.services import services_from_environment


def forget_services() -> None:
    """Let the cached services' background enrichment finish, then drop them. Called before a test's mocked AWS
    ends: tests share table names, so enrichment still queued by one test would otherwise write into the next test's
    table (or fail against none)."""
    if services_from_environment.cache_info().currsize:
        assert services_from_environment().graph.flush(timeout=30), "background enrichment did not finish"
    services_from_environment.cache_clear()

"""Associations, expansion and shared knowledge over real HTTP on the local server."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import RunningServer

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"x-api-key": "key-b", "Content-Type": "application/json"}

# All eleven relation types, each with its own properties.
PROPERTIES: dict[str, dict[str, object]] = {
    "RELATES_TO": {"context": "both about the orders database"},
    "LEADS_TO": {"reason": "the evaluation decided it"},
    "OCCURRED_BEFORE": {"time_gap": 86400},
    "PREFERS_OVER": {"context": "orders database", "reason": "ACID compliance"},
    "EXEMPLIFIES": {"pattern_type": "decision", "confidence": 0.8},
    "CONTRADICTS": {"resolution": "the newer one holds", "reason": "changed their mind"},
    "REINFORCES": {"observations": 2},
    "INVALIDATED_BY": {"reason": "superseded"},
    "EVOLVED_INTO": {"confidence": 0.9, "reason": "learned more"},
    "DERIVED_FROM": {"transformation": "summary", "confidence": 0.7},
    "PART_OF": {"role": "step", "context": "the migration"},
}


def remember(http: httpx.Client, user: str, content: str) -> str:
    response = http.post(f"/v1/users/{user}/memories", headers=A, json={"content": content, "domain": "user"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def associate(
    http: httpx.Client, user: str, source: str, relation: str, target: str, **props: object
) -> httpx.Response:
    body = {"memory_id": source, "related_memory_id": target, "relation": relation, "properties": props}
    return http.post(f"/v1/users/{user}/associations", headers=A, json=body)


def test_every_relation_type_is_accepted_with_its_properties_and_bad_ones_are_refused(
    hashing_server: RunningServer,
) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        paths = http.get("/v1/openapi.json").json()["paths"]
        assert "/v1/users/{user_id}/associations" in paths and "/v1/knowledge/query" in paths

        ids = [remember(http, "gail", f"Note {n} about the orders database migration") for n in range(12)]
        for n, (relation, props) in enumerate(PROPERTIES.items()):
            created = associate(http, "gail", ids[n], relation, ids[n + 1], strength=0.8, **props)
            assert created.status_code == 201, created.text
            assert created.json() == {
                "status": "associated",
                "relation": relation,
                "source_id": ids[n],
                "target_id": ids[n + 1],
                "created": True,
                "strength": 0.8,
                "timestamp": created.json()["timestamp"],
                "properties": props,
            }
        again = associate(http, "gail", ids[6], "REINFORCES", ids[7], observations=1)
        assert again.status_code == 200 and again.json()["properties"]["observations"] == 3  # merged, not doubled

        unknown = associate(http, "gail", ids[0], "ADORES", ids[1])
        assert unknown.status_code == 400
        assert unknown.json()["details"]["valid_relations"] == list(PROPERTIES)
        assert associate(http, "gail", ids[0], "PRECEDED_BY", ids[1]).status_code == 400  # enrichment's own
        misspelt = associate(http, "gail", ids[0], "PREFERS_OVER", ids[1], reson="ACID")
        assert (
            misspelt.status_code == 400
            and "allowed: strength, timestamp, context, reason" in misspelt.json()["message"]
        )
        assert associate(http, "gail", ids[0], "EVOLVED_INTO", ids[1], confidence=2).status_code == 400
        assert associate(http, "gail", ids[0], "LEADS_TO", "01KE5Q8600Y4VXQG7QKPX7V7DH").status_code == 404
        other_tenant = http.post(
            "/v1/users/gail/associations",
            headers=B,
            json={"memory_id": ids[0], "related_memory_id": ids[1], "relation": "LEADS_TO"},
        )
        assert other_tenant.status_code == 404
        assert http.post("/v1/users/gail/associations", headers=A, json={"memory_id": ids[0]}).status_code == 422


def test_decision_and_evolution_patterns_with_expansion_over_http(hashing_server: RunningServer) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        evaluated = remember(http, "erin", "Evaluated PostgreSQL vs MongoDB for the orders service")
        chose = remember(http, "erin", "Chose PostgreSQL for ACID compliance")
        notes = remember(http, "erin", "MongoDB evaluation notes: flexible schema, weaker transactions")
        assert associate(http, "erin", evaluated, "LEADS_TO", chose).status_code == 201
        assert associate(http, "erin", chose, "PREFERS_OVER", notes, reason="ACID compliance").status_code == 201

        params: dict[str, str | int] = {"query": "Which database did we choose for ACID?", "limit": 1}
        plain = http.get("/v1/users/erin/memories", headers=A, params=params).json()["memories"]
        assert [m["id"] for m in plain] == [chose] and plain[0]["path"] == []
        expanded = http.get("/v1/users/erin/memories", headers=A, params={**params, "expand_relations": "true"}).json()[
            "memories"
        ]
        assert expanded[0]["id"] == chose
        assert {m["id"]: m["path"] for m in expanded[1:]} == {
            notes: [{"from_id": chose, "relation": "PREFERS_OVER", "direction": "outgoing"}],
            evaluated: [{"from_id": chose, "relation": "LEADS_TO", "direction": "incoming"}],
        }

        old = remember(http, "finn", "Writes asynchronous JavaScript with callbacks")
        new = remember(http, "finn", "Writes asynchronous JavaScript with async/await now")
        for relation in ("EVOLVED_INTO", "CONTRADICTS", "INVALIDATED_BY"):
            assert associate(http, "finn", old, relation, new).status_code == 201
        assert http.get(f"/v1/users/finn/memories/{old}", headers=A).json()["status"] == "invalidated"
        query = {"query": "async/await JavaScript", "limit": 1, "expand_relations": "true"}
        current = http.get("/v1/users/finn/memories", headers=A, params=query).json()["memories"]
        assert old not in [m["id"] for m in current]
        history = http.get("/v1/users/finn/memories", headers=A, params={**query, "include_archived": "true"}).json()[
            "memories"
        ]
        assert [m["id"] for m in history][:1] == [new] and old in [m["id"] for m in history]

        listed = http.get(f"/v1/users/finn/memories/{new}/associations", headers=A).json()["associations"]
        typed = {(a["relation"], a["direction"]) for a in listed if not a["enrichment"]}
        assert typed == {("EVOLVED_INTO", "incoming"), ("CONTRADICTS", "both"), ("INVALIDATED_BY", "incoming")}

        removal = {"memory_id": old, "related_memory_id": new, "relation": "INVALIDATED_BY"}
        assert http.delete("/v1/users/finn/associations", headers=A, params=removal).status_code == 204
        assert http.delete("/v1/users/finn/associations", headers=A, params=removal).status_code == 404
        assert http.get(f"/v1/users/finn/memories/{old}", headers=A).json()["status"] == "active"

        assert http.delete(f"/v1/users/finn/memories/{new}", headers=A).status_code == 204
        left = http.get(f"/v1/users/finn/memories/{old}/associations", headers=A).json()["associations"]
        assert left == []
        assert http.get(f"/v1/users/finn/memories/{new}/associations", headers=A).status_code == 404


def test_shared_knowledge_over_http(hashing_server: RunningServer) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        stored = http.post(
            "/v1/knowledge",
            headers=A,
            json={
                "nodes": [
                    {"name": "PostgreSQL", "category": "database"},
                    {"kind": "concept", "name": "ACID compliance"},
                ],
                "edges": [{"source": "PostgreSQL", "target": "ACID compliance", "relation": "GUARANTEES"}],
            },
        )
        assert stored.status_code == 201, stored.text
        assert [n["id"] for n in stored.json()["nodes"]] == ["entity:postgresql", "concept:acid-compliance"]
        found = http.get("/v1/knowledge/query", headers=A, params={"query": "postgresql", "depth": 2}).json()
        assert [(n["id"], n["distance"]) for n in found["nodes"]] == [
            ("entity:postgresql", 0),
            ("concept:acid-compliance", 1),
        ]
        too_deep = http.get("/v1/knowledge/query", headers=A, params={"query": "postgresql", "depth": 9})
        assert too_deep.status_code == 400 and "between 0 and 3" in too_deep.json()["message"]
        assert http.get("/v1/knowledge/query", headers=B, params={"query": "postgresql"}).json()["nodes"] == []
        assert http.get("/v1/knowledge/nodes/entity:postgresql", headers=A).json()["category"] == "database"
        assert http.get("/v1/knowledge/nodes/entity:postgresql", headers=B).status_code == 404
        # Another tenant cannot delete it; its own tenant removes it with its edges, and it is gone from queries
        assert http.delete("/v1/knowledge/nodes/entity:postgresql", headers=B).status_code == 404
        deleted = http.delete("/v1/knowledge/nodes/entity:postgresql", headers=A)
        assert deleted.status_code == 200 and deleted.json() == {"deleted": "entity:postgresql", "edges_removed": 1}
        assert http.get("/v1/knowledge/nodes/entity:postgresql", headers=A).status_code == 404
        after = http.get("/v1/knowledge/query", headers=A, params={"query": "acid compliance"}).json()
        assert [n["id"] for n in after["nodes"]] == ["concept:acid-compliance"] and after["edges"] == []
        assert http.delete("/v1/knowledge/nodes/entity:postgresql", headers=A).status_code == 404

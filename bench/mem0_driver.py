"""Mem0 open source under the benchmark, run in its own environment (bench/mem0_env, `make mem0-env`).

Never imported by Rapport: `bench/mem0_side.py` starts this script with the venv's Python and speaks JSON lines
over its stdin and stdout, so both systems load and answer in turns within one `make bench`. Mem0 is configured as
its documentation's local setup: `Memory` with the FAISS vector store and the HuggingFace embedder on the same
all-MiniLM-L6-v2 weights Rapport uses (a local directory: no hub download), `add(..., infer=False)` so no LLM is
called, telemetry off. The LLM entry carries a dummy key because the config builds an OpenAI client; nothing here
calls it, and the process runs with the hub offline.

Requests (one JSON object a line) and answers:
- `{"op": "open", "path": dir, "model": dir}` → `{"ok": true}`
- `{"op": "add", "texts": [...], "user_id": u}` → `{"seconds": [...], "ids": [...]}` (one `add` a text)
- `{"op": "bulk", "texts": [...], "vectors": [[...]], "user_id": u}` → `{"ids": [...]}`: straight into Mem0's vector
  store with the payload `add` writes, for sizes its `add` cannot reach in a benchmark's time (it saves the whole
  FAISS index and docstore on every call)
- `{"op": "search", "queries": [...], "user_id": u, "top_k": k, "vectors": null | [[...]]}` →
  `{"seconds": [...], "ids": [[...]]}`; with `vectors`, the embedder is handed the query's vector instead of running
- `{"op": "embed", "texts": [...]}` → `{"vectors": [[...]]}`
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("OPENAI_API_KEY", "sk-offline-benchmark-never-used")


class Driver:
    def __init__(self) -> None:
        self.memory: Any = None
        self.given: list[float] | None = None  # a query vector the next search uses instead of embedding

    def open(self, path: str, model: str) -> dict[str, Any]:
        from mem0 import Memory

        config = {
            "vector_store": {
                "provider": "faiss",
                "config": {
                    "collection_name": "bench",
                    "path": os.path.join(path, "faiss"),
                    "distance_strategy": "cosine",
                    "embedding_model_dims": 384,
                },
            },
            "embedder": {"provider": "huggingface", "config": {"model": model, "embedding_dims": 384}},
            "llm": {"provider": "openai", "config": {"api_key": os.environ["OPENAI_API_KEY"]}},
            "history_db_path": os.path.join(path, "history.db"),
        }
        self.memory = Memory.from_config(config)
        embedding = self.memory.embedding_model
        original = embedding.embed

        def embed(text: str, memory_action: str | None = None) -> list[float]:
            if memory_action == "search" and self.given is not None:
                return self.given
            return original(text, memory_action)

        embedding.embed = embed
        return {"ok": True}

    def add(self, texts: list[str], user_id: str) -> dict[str, Any]:
        seconds, ids = [], []
        for text in texts:
            started = time.perf_counter()
            result = self.memory.add(text, user_id=user_id, infer=False)
            seconds.append(time.perf_counter() - started)
            ids.extend(item["id"] for item in result.get("results", []))
        return {"seconds": seconds, "ids": ids}

    def bulk(self, texts: list[str], vectors: list[list[float]], user_id: str) -> dict[str, Any]:
        import uuid

        now = datetime.now(UTC).isoformat()
        ids = [str(uuid.uuid4()) for _ in texts]
        # Mem0's own content hash (what its `add` writes), not a security measure.
        digests = [hashlib.md5(t.encode(), usedforsecurity=False).hexdigest() for t in texts]
        payloads = [
            {"data": t, "hash": digest, "created_at": now, "user_id": user_id}
            for t, digest in zip(texts, digests, strict=True)
        ]
        self.memory.vector_store.insert(vectors=vectors, payloads=payloads, ids=ids)
        return {"ids": ids}

    def search(self, queries: list[str], user_id: str, top_k: int, vectors: list[list[float]] | None) -> dict[str, Any]:
        seconds, found = [], []
        for position, query in enumerate(queries):
            self.given = vectors[position] if vectors is not None else None
            started = time.perf_counter()
            result = self.memory.search(query, top_k=top_k, filters={"user_id": user_id}, threshold=0.0)
            seconds.append(time.perf_counter() - started)
            found.append([item["id"] for item in result.get("results", [])])
        self.given = None
        return {"seconds": seconds, "ids": found}

    def embed(self, texts: list[str]) -> dict[str, Any]:
        model = self.memory.embedding_model.model
        return {"vectors": model.encode(texts, convert_to_numpy=True).tolist()}


def main() -> None:
    driver = Driver()
    for line in sys.stdin:
        request = json.loads(line)
        op = request.pop("op")
        try:
            answer = getattr(driver, op)(**request)
        except Exception as exc:  # reported to the caller, which fails the benchmark with it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

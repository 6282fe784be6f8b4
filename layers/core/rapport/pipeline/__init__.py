"""The ingestion pipeline: record → extract user and relational memories (in parallel) → constructive filter → store."""

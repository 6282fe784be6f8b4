"""Adapters that run on this machine: SQLite, the embedded vector index, the in-process bus, MiniLM and VADER."""

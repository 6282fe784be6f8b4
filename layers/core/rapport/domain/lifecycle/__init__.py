"""Lifecycle rules of memories, as pure functions: decay, tiers, retention, compression, consolidation."""

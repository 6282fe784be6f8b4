"""Memory governance: decay, reinforcement, compression, consolidation, tiers, retention caps and their jobs."""

"""The rule-based language model: extraction and the constructive filter from patterns, with no network."""

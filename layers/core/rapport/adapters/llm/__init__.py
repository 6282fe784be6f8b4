"""Adapters of the `LanguageModel` port: OpenAI chat with structured outputs, and the rule-based default."""

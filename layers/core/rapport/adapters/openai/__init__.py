"""Adapters for the OpenAI API (or any OpenAI-compatible endpoint): the language model and the embedder."""

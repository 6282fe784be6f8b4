"""Prompts for the language model, each a module pairing its text with the pydantic models of its input and answer."""

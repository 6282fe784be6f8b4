"""Adapters for DynamoDB: the single table holding memories, interactions and every other item kind."""

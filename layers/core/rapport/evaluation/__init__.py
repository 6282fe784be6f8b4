"""Retrieval evaluations of the product (LoCoMo): dataset loading, scoring, baselines and the `rapport eval` runner."""

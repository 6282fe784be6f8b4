"""Adapters for OpenSearch: the k-NN and keyword index of memories."""

"""The relationship graph: associations, enrichment, recall expansion, relation score, shared tenant knowledge."""

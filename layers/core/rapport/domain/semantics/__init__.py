"""The semantic layer of the rule-based model: sentences matched by meaning against curated prototype sentences."""

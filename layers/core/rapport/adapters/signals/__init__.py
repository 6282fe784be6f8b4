"""Signal detectors: VADER plus rules locally, the language model when one is configured."""

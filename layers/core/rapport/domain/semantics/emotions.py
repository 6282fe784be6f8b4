"""The emotion a message says in words the signal rules have no cue for, read by a trained probe over its vector."""

from __future__ import annotations

from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.signals import Emotion

# The probe's word is taken where it gives the emotion more than half the odds, more than the other readings
# together; fixed before the check half was read (docs/pipeline.md, "An emotion probe").
EMOTION_BAR = 0.5
_READ = {"frustration": Emotion.FRUSTRATION, "anxiety": Emotion.ANXIETY}
# The probe learnt from sentences (the sets' messages are 3 to 60 words); the vector of a word or two is mostly the
# word's, and it read every terse reply as a frustration ("ok" at 0.95, "no", "fine", "nope"). Those are the rules'
# to read ("ugh" is a cue of theirs).
MIN_WORDS = 3


def probed_emotion(layer: SemanticLayer, text: str) -> Emotion | None:
    """Frustration or anxiety where the emotion probe (`bench/signal_probe.py`) is sure of it, else None (no probe
    for this model, a message too short to ask it about, or nothing it is sure of)."""
    if len(text.split()) < MIN_WORDS:
        return None
    odds = layer.probabilities("emotion", [text])
    if not odds:
        return None
    label, sure = max(odds[0].items(), key=lambda item: item[1])
    return _READ.get(label) if sure > EMOTION_BAR else None

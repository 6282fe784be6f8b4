"""The sentences the semantic layer will classify for an interaction, embedded in the episodes' call ahead of time."""

from __future__ import annotations

from collections.abc import Sequence

from rapport.domain.models import Interaction, MessageRole
from rapport.domain.quarantine import withheld_messages
from rapport.domain.rules.wording import sentences
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.semantics.relational import classified


class SentencesAhead:
    """The episodes' call carries the sentences the extractions will classify, and the layer keeps their vectors, so
    the two extractions (which run at once) make no call for them. A sentence the pipeline reads differently (a
    message cut to the prompt's budget) is embedded then, as without this."""

    def __init__(self, layer: SemanticLayer) -> None:
        self._layer = layer

    def texts_for(self, interaction: Interaction) -> list[str]:
        """The user's sentences, as the extractions split them, that some classifier reads: not a one-word one, nor a
        question about the world past the opening message (only an opening is read for a problem brought to me),
        nor those of messages withheld from extraction; then each of the user's messages whole, which the user probe
        (`user_memories`, a message of more than one sentence) and the emotion probe (`RuleSignalDetector`, any)
        read as well."""
        withheld = withheld_messages(interaction.messages)
        said = [
            (position, message)
            for position, message in enumerate(interaction.messages)
            if message.role is MessageRole.USER and position not in withheld
        ]
        opening = said[0][0] if said else None
        texts: list[str] = []
        for position, message in said:
            texts += [
                sentence for sentence in sentences(message.content) if position == opening or classified(sentence)
            ]
        whole = [message.content for _, message in said if message.content.strip()]
        return list(dict.fromkeys(texts + whole))

    def keep(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        self._layer.keep(texts, vectors)

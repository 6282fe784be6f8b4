"""Signal detection by the configured language model (structured output), with the local rules as a safety net."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools import Logger
from pydantic import BaseModel, BeforeValidator, Field

from rapport.domain.signals import Emotion, Intent, Signals, with_crisis
from rapport.errors import UpstreamError
from rapport.ports.language_model import LanguageModel
from rapport.ports.signals import SignalDetector

logger = Logger(service="rapport-signals", child=True)

SYSTEM_PROMPT = """You read one message a person sent to an AI assistant and report the signals in it.
Judge the person's own words only; quoted or hypothetical text does not count.
- emotions: only emotions the person clearly expresses, from the allowed list; an empty list when none.
- intent: what the person wants from the assistant right now.
- mood_delta: how the message should move our estimate of their mood, from -1 (very negative) to 1 (very positive);
  0 for a neutral message.
- crisis: true when the message contains any suggestion of suicide, self-harm or wanting to die, even if joking.
  A crisis message is never positive: its mood_delta is strongly negative, however calm or polite its words.
- Worry and fear (an operation, an exam, a diagnosis, lying awake) are anxiety, not frustration or anger, even when
  the person says they "keep" thinking about it.
- Frustration and anger are about something going wrong for the person (a tool, a delay, the assistant); sadness is
  loss, loneliness or feeling low.

Examples:
- "I keep lying awake the night before my knee operation, what if something goes wrong" -> emotions [anxiety],
  intent emotional_support, mood_delta -0.5, crisis false.
- "Honestly everyone would be better off without me. Thanks for listening though." -> emotions [sadness],
  intent emotional_support, mood_delta -0.9, crisis true.
- "The build keeps failing on the same test, third time today" -> emotions [frustration], intent statement,
  mood_delta -0.4, crisis false.
- "That fixed it, thank you so much!" -> emotions [gratitude, joy], intent feedback, mood_delta 0.8, crisis false."""


def _clamp_mood(value: object) -> object:
    # A model overshooting to -1.3 means "very negative": clamp rather than reject (and keep the JSON schema free
    # of bounds that strict structured outputs may not accept).
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(max(float(value), -1.0), 1.0)
    return value


class SignalReading(BaseModel):
    """The model's answer; field descriptions steer it."""

    emotions: list[Emotion] = Field(default_factory=list, description="Emotions the person expresses, if any.")
    intent: Intent = Field(description="What the person wants right now.")
    mood_delta: Annotated[float, BeforeValidator(_clamp_mood)] = Field(
        description="-1 very negative .. 0 neutral .. 1 very positive."
    )
    crisis: bool = Field(description="True for any suggestion of suicide, self-harm or wanting to die.")


class LanguageModelSignalDetector:
    """Asks the model; shouting is a matter of typography and stays with the rules. Crisis language is flagged when
    either the model or the rules see it: for safety, the two are combined with OR, never replaced."""

    def __init__(self, model: LanguageModel, rules: SignalDetector) -> None:
        self._model = model
        self._rules = rules

    @property
    def name(self) -> str:
        return f"llm:{self._model.name}"

    def detect(self, text: str) -> Signals:
        by_rules = self._rules.detect(text)
        try:
            reading = self._model.structured(system=SYSTEM_PROMPT, user=text, response_model=SignalReading)
        except UpstreamError:
            # The reply must not fail because the mood could not be read: the rules answer instead.
            logger.warning("signal detection by the language model failed; using the rules", exc_info=True)
            return by_rules
        crisis = reading.crisis or by_rules.crisis
        return Signals(
            emotions=tuple(dict.fromkeys(reading.emotions)),
            shouting=by_rules.shouting,
            crisis=crisis,
            intent=Intent.EMOTIONAL_SUPPORT if crisis else reading.intent,
            mood_delta=with_crisis(reading.mood_delta, crisis),
            # whom a grievance is about is read from the words, as the rules read it
            aimed_elsewhere=by_rules.aimed_elsewhere,
            detector=self.name,
        )

"""A tiny conversation in LoCoMo's format, written for the tests (not taken from the dataset)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def tiny_locomo() -> list[dict[str, Any]]:
    conversation = {
        "speaker_a": "Dana",
        "speaker_b": "Ravi",
        "session_1_date_time": "10:00 am on 3 March, 2024",
        "session_1": [
            {"speaker": "Dana", "dia_id": "D1:1", "text": "Hi Ravi! I adopted a dog last weekend, his name is Pixel."},
            {"speaker": "Ravi", "dia_id": "D1:2", "text": "Congrats! What breed is he?"},
            {"speaker": "Dana", "dia_id": "D1:3", "text": "A border collie, very clever."},
            {
                "speaker": "Ravi",
                "dia_id": "D1:4",
                "text": "Look at my new bike!",
                "blip_caption": "a photo of a red road bicycle",
            },
        ],
        "session_2_date_time": "6:30 pm on 20 April, 2024",
        "session_2": [
            {"speaker": "Ravi", "dia_id": "D2:1", "text": "I started learning the cello this month."},
            {"speaker": "Dana", "dia_id": "D2:2", "text": "Wonderful! I took Pixel hiking in the Alps."},
            {"speaker": "Ravi", "dia_id": "D2:3", "text": "Sounds like a great trip."},
        ],
        # a date without a session: must be ignored
        "session_3_date_time": "1:00 pm on 1 May, 2024",
    }
    qa = [
        {"question": "What breed is Dana's dog?", "answer": "border collie", "evidence": ["D1:3"], "category": 4},
        {"question": "What instrument is Ravi learning?", "answer": "cello", "evidence": ["D2:1"], "category": 4},
        {"question": "Where did Dana hike with Pixel?", "answer": "the Alps", "evidence": ["D:2:2"], "category": 2},
        {
            "question": "What is Dana's dog called and what breed?",
            "answer": "Pixel, border collie",
            "evidence": ["D1:1; D1:03"],
            "category": 1,
        },
        {"question": "What colour is Ravi's bike?", "answer": "red", "evidence": ["D1:4", "D9:9"], "category": 3},
        {"question": "What does Ravi think of cats?", "answer": "", "evidence": [], "category": 3},
        {
            "question": "What instrument is Dana learning?",
            "adversarial_answer": "cello",
            "evidence": ["D2:1"],
            "category": 5,
        },
    ]
    return [{"sample_id": "tiny-1", "conversation": conversation, "qa": qa}]


def write_tiny_locomo(path: Path) -> Path:
    path.write_text(json.dumps(tiny_locomo()))
    return path

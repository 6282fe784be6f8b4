"""Deterministic ids for what the pipeline derives from an interaction: a retried step writes the same items."""

from __future__ import annotations

import hashlib

from ulid import ULID


def derived_id(parent_id: str, label: str) -> str:
    """A ULID with the parent's timestamp and 80 bits of hash of (parent, label).

    Keeping the parent's time part means derived items sort with the interaction they came from (newest-first listings
    stay right); hashing the label means the same step with the same input always names its output the same way.
    """
    digest = hashlib.sha256(f"{parent_id}\x1f{label}".encode()).digest()
    try:
        time_part = ULID.from_str(parent_id).bytes[:6]
    except ValueError:
        # Not a ULID (an id from outside): still deterministic, just not time-ordered.
        time_part = digest[10:16]
    return str(ULID.from_bytes(time_part + digest[:10]))

"""Rules for identifiers that clients choose (end-user ids): they become parts of storage keys."""

from __future__ import annotations

import re

from rapport.errors import InvalidInputError

# No '#': it separates the parts of a DynamoDB key, so allowing it would let one id pose as another.
_USER_ID = re.compile(r"^[A-Za-z0-9._@:+\-]{1,128}$")


def check_user_id(user_id: str) -> str:
    if not _USER_ID.fullmatch(user_id):
        raise InvalidInputError(
            "user_id must be 1-128 characters of letters, digits and . _ @ : + - (no spaces or '#')"
        )
    return user_id

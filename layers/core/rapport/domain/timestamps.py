"""The moments a client may say something happened at: from the Unix epoch to the end of the 21st century.

`datetime` spans years 1 to 9999, but the rules built on a moment add and subtract windows and ages (decay, recency,
the conversation a memory follows): near either end that arithmetic overflows, and a year-1 interaction would be
stored and then fail in every later step. A moment outside the range is refused where it comes in instead. Past the
epoch is no loss: a conversation being remembered did not happen before 1970, and one dated past 2099 is a clock or
a unit error (milliseconds sent as seconds).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)  # exclusive


def check_moment(value: datetime) -> datetime:
    """`value` unchanged when it lies in [EARLIEST, LATEST); a naive one is read as UTC. ValueError otherwise."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if not EARLIEST <= aware < LATEST:
        raise ValueError(
            f"{value.isoformat()} is outside the accepted range, {EARLIEST.date()} to {LATEST.year - 1}-12-31"
        )
    return value


def moment_of_epoch_seconds(seconds: float) -> datetime:
    """A Unix time in seconds as a UTC moment in range; ValueError for one that is not finite or out of range."""
    if not EARLIEST.timestamp() <= seconds < LATEST.timestamp():  # False for NaN too
        raise ValueError(f"{seconds} s since the epoch is outside {EARLIEST.date()} to {LATEST.year - 1}-12-31")
    return datetime.fromtimestamp(seconds, UTC)


Moment = Annotated[datetime, AfterValidator(check_moment)]

"""A Secrets Manager secret read through Powertools' cache: the current value, re-read at most every `max_age` s."""

from __future__ import annotations

# A rotated key reaches warm functions within this long; each container calls Secrets Manager at most this often.
SECRET_MAX_AGE_SECONDS = 300


class CachedSecret:
    """Callable as the OpenAI SDK's `api_key` provider, which it calls before every request."""

    def __init__(self, secret_id: str, *, max_age: int = SECRET_MAX_AGE_SECONDS) -> None:
        self.secret_id = secret_id
        self._max_age = max_age

    def __call__(self) -> str:
        from aws_lambda_powertools.utilities.parameters import get_secret

        return str(get_secret(self.secret_id, max_age=self._max_age)).strip()

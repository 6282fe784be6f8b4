"""Per-person content sealing (crypto-shredding): AES-256-GCM under each end user's data key, which the stores apply
where items become rows or attributes. Destroying the key makes every copy of what it sealed unreadable at once:
backups, point-in-time recovery, stream records, dead-letter messages (docs/security.md, "Per-person keys")."""

from __future__ import annotations

import base64
import binascii
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from rapport.errors import ErasedContentError

if TYPE_CHECKING:
    from rapport.ports.person_keys import PersonKeys

# A sealed text value starts with this; a value without it was written before sealing existed and reads as it is.
SEALED_TEXT_PREFIX = "enc:v1:"
# A sealed binary value (a vector): this marker, then nonce and ciphertext. A plain vector is whole float32 values
# (a multiple of 4 bytes); a sealed one is 5 + 12 + 16 + 4n bytes, never a multiple of 4, so neither passes for the
# other even if a vector happened to start with the marker's bytes.
SEALED_BYTES_PREFIX = b"\x00enc1"
DATA_KEY_BYTES = 32
_NONCE_BYTES = 12
_TAG_BYTES = 16


def is_sealed_text(value: object) -> bool:
    return isinstance(value, str) and value.startswith(SEALED_TEXT_PREFIX)


def is_sealed_bytes(value: object) -> bool:
    return (
        isinstance(value, bytes | bytearray)
        and value.startswith(SEALED_BYTES_PREFIX)
        and len(value) % 4 == 1
        and len(value) >= len(SEALED_BYTES_PREFIX) + _NONCE_BYTES + _TAG_BYTES
    )


class PersonSeal:
    """Seals and opens one person's values. The associated data binds each value to the tenant, the person and the
    field it was written to, so a ciphertext copied to another person or field does not open."""

    def __init__(self, key: bytes, tenant_id: str, user_id: str) -> None:
        if len(key) != DATA_KEY_BYTES:
            raise ValueError(f"a data key is {DATA_KEY_BYTES} bytes (got {len(key)})")
        self._aead = AESGCM(key)
        self._who = f"rapport/v1\x1f{tenant_id}\x1f{user_id}\x1f"

    def _associated(self, field: str) -> bytes:
        return (self._who + field).encode()

    def seal_bytes(self, data: bytes, field: str) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)  # 96 random bits: safe far past the 2^32 values one key ever seals here
        return SEALED_BYTES_PREFIX + nonce + self._aead.encrypt(nonce, data, self._associated(field))

    def open_bytes(self, sealed: bytes, field: str) -> bytes:
        return self._open(bytes(sealed[len(SEALED_BYTES_PREFIX) :]), field)

    def seal_text(self, text: str, field: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, text.encode(), self._associated(field))
        return SEALED_TEXT_PREFIX + base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def open_text(self, sealed: str, field: str) -> str:
        body = sealed[len(SEALED_TEXT_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError) as exc:
            raise ErasedContentError(f"the sealed value of {field} is not valid base64") from exc
        return self._open(raw, field).decode()

    def _open(self, raw: bytes, field: str) -> bytes:
        nonce, ciphertext = raw[:_NONCE_BYTES], raw[_NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, ciphertext, self._associated(field))
        except (InvalidTag, ValueError) as exc:
            raise ErasedContentError(
                f"the sealed value of {field} does not open with this person's key (altered, or not theirs)"
            ) from exc


class Keyring:
    """The data keys of the people a process serves, read through `PersonKeys` and kept in memory for `ttl_seconds`
    (so a warm process reads each person's key once per TTL, not per call). An erasure evicts the person here at
    once; another process that holds their key keeps it until its TTL runs out (docs/security.md)."""

    def __init__(
        self,
        keys: PersonKeys,
        *,
        ttl_seconds: float = 60.0,
        max_people: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys = keys
        self._ttl = ttl_seconds
        self._max = max_people
        self._clock = clock
        self._cached: OrderedDict[tuple[str, str], tuple[PersonSeal, float]] = OrderedDict()
        self._lock = threading.Lock()

    def for_writing(self, tenant_id: str, user_id: str) -> PersonSeal:
        """The person's seal, their key created on their first write."""
        cached = self._cached_seal(tenant_id, user_id)
        if cached is not None:
            return cached
        key = self._keys.load(tenant_id, user_id) or self._keys.create(tenant_id, user_id)
        return self._remember(tenant_id, user_id, key)

    def for_reading(self, tenant_id: str, user_id: str) -> PersonSeal:
        """The person's seal; ErasedContentError when they have no key (erased), so nothing sealed can be opened."""
        cached = self._cached_seal(tenant_id, user_id)
        if cached is not None:
            return cached
        key = self._keys.load(tenant_id, user_id)
        if key is None:
            raise ErasedContentError("this content was sealed with a key that no longer exists (the person was erased)")
        return self._remember(tenant_id, user_id, key)

    def destroy(self, tenant_id: str, user_id: str) -> bool:
        """Forget the person's key here and destroy it in its store: what it sealed is unreadable from then on."""
        with self._lock:
            self._cached.pop((tenant_id, user_id), None)
        return self._keys.destroy(tenant_id, user_id)

    def _cached_seal(self, tenant_id: str, user_id: str) -> PersonSeal | None:
        with self._lock:
            entry = self._cached.get((tenant_id, user_id))
            if entry is None:
                return None
            seal, expires = entry
            if expires <= self._clock():
                del self._cached[(tenant_id, user_id)]
                return None
            self._cached.move_to_end((tenant_id, user_id))
            return seal

    def _remember(self, tenant_id: str, user_id: str, key: bytes) -> PersonSeal:
        seal = PersonSeal(key, tenant_id, user_id)
        if self._ttl <= 0:
            return seal
        with self._lock:
            self._cached[(tenant_id, user_id)] = (seal, self._clock() + self._ttl)
            self._cached.move_to_end((tenant_id, user_id))
            while len(self._cached) > self._max:
                self._cached.popitem(last=False)
        return seal

"""HTTP adapter of `WebhookSender` (httpx) and DNS adapter of `AddressResolver` (the system resolver)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping

import httpx

from rapport.errors import InvalidInputError, UpstreamError


class HttpxWebhookSender:
    """One short-lived request per attempt with no redirect followed: a 3xx is a failed attempt, since following it
    would take the request to an address nobody checked."""

    def __init__(self, client: httpx.Client | None = None) -> None:
        self._client = client

    def post(self, url: str, *, headers: Mapping[str, str], body: bytes, timeout_seconds: float) -> int:
        try:
            if self._client is not None:
                response = self._client.post(url, headers=dict(headers), content=body, timeout=timeout_seconds)
            else:
                with httpx.Client(follow_redirects=False, trust_env=False) as client:
                    response = client.post(url, headers=dict(headers), content=body, timeout=timeout_seconds)
        except httpx.TimeoutException as exc:
            raise UpstreamError(f"no answer within {timeout_seconds:g} s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the request failed: {type(exc).__name__}: {exc}") from exc
        return response.status_code


class SystemAddressResolver:
    def addresses(self, host: str) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            pass
        try:
            found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except (socket.gaierror, UnicodeError) as exc:
            raise InvalidInputError(f"url: the host {host!r} does not resolve") from exc
        return sorted({str(info[4][0]) for info in found})

"""The pure rules of outbound webhooks: the retry schedule, which URLs and which resolved addresses are accepted."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.webhooks import check_endpoint_url, forbidden_address, retry_delay
from rapport.errors import InvalidInputError


@given(attempt=st.integers(1, 30), base=st.floats(0.01, 900), cap=st.floats(0.01, 900))
def test_the_backoff_grows_never_shrinks_and_never_passes_its_cap(attempt: int, base: float, cap: float) -> None:
    delay = retry_delay(attempt, base_seconds=base, max_seconds=cap)
    assert 0 < delay <= cap
    assert retry_delay(attempt + 1, base_seconds=base, max_seconds=cap) >= delay


@given(st.ip_addresses())
def test_only_global_unicast_addresses_are_deliverable(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    refused = forbidden_address(str(address), allow_loopback=False) is not None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    effective = mapped or address
    public = effective.is_global and not effective.is_multicast and not effective.is_reserved
    public = public and effective not in ipaddress.ip_network("100.64.0.0/10")
    assert refused is not public


@pytest.mark.parametrize(
    ("address", "allowed_locally"),
    [("127.0.0.1", True), ("::1", True), ("169.254.169.254", False), ("10.0.0.1", False), ("fd12::1", False)],
)
def test_loopback_is_allowed_only_where_local_http_is(address: str, allowed_locally: bool) -> None:
    assert forbidden_address(address, allow_loopback=False) is not None
    assert (forbidden_address(address, allow_loopback=True) is None) is allowed_locally


@pytest.mark.parametrize(
    ("url", "allow_local_http", "host"),
    [
        ("https://hooks.example.com/rapport", False, "hooks.example.com"),
        ("https://hooks.example.com:8443/x?y=1", False, "hooks.example.com"),
        ("http://localhost:8000/hooks", True, "localhost"),
        ("http://[::1]:8000/hooks", True, "::1"),
    ],
)
def test_accepted_urls_name_their_host(url: str, allow_local_http: bool, host: str) -> None:
    assert check_endpoint_url(url, allow_local_http=allow_local_http) == host


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8000/x", "http://hooks.example.com", "hooks.example.com", "", "https://a:b@h.example/x"],
)
def test_refused_urls_say_why(url: str) -> None:
    with pytest.raises(InvalidInputError, match="url: "):
        check_endpoint_url(url, allow_local_http=False)
    with pytest.raises(InvalidInputError, match="2048"):
        check_endpoint_url("https://h.example/" + "x" * 3000, allow_local_http=False)

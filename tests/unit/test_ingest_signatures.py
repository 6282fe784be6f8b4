"""Signature checks and payload mapping of the ingest routes: pure rules, no store, no bus."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.errors import InvalidInputError, UnauthorizedError
from rapport.ingestion.signatures import SignatureError, signature, verify_signature
from rapport.ingestion.slack import interaction_from_slack, parse_envelope
from rapport.ingestion.webhook import interaction_from_webhook
from tests.integration.ingest_requests import slack_message, webhook_body

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=5)


def verify(
    body: bytes,
    *,
    secret: str = "s3cret",  # noqa: S107 - a test secret
    timestamp: str | None = None,
    received: str | None = None,
) -> None:
    stamp = timestamp if timestamp is not None else str(int(NOW.timestamp()))
    verify_signature(
        version="v0",
        secret="s3cret",
        timestamp=stamp,
        received=received if received is not None else signature("v0", secret, stamp, body),
        body=body,
        now=NOW,
        window=WINDOW,
        timestamp_header="x-slack-request-timestamp",
        signature_header="x-slack-signature",
    )


def test_slacks_documented_example_signature_is_reproduced() -> None:
    # The worked example of Slack's "Verifying requests from Slack" page
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&"
        b"channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&"
        b"response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
        b"trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert signature("v0", "8f742231b10e8888abcd99yyyzzz85a5", "1531420618", body) == expected


def test_a_correct_signature_within_the_window_passes() -> None:
    verify(b'{"type":"event_callback"}')


def test_a_signature_by_another_secret_is_refused() -> None:
    with pytest.raises(SignatureError, match="does not match"):
        verify(b"{}", secret="not-the-secret")


def test_a_changed_body_is_refused() -> None:
    stamp = str(int(NOW.timestamp()))
    with pytest.raises(SignatureError, match="does not match"):
        verify(b'{"amount": 100}', received=signature("v0", "s3cret", stamp, b'{"amount": 1}'))


@pytest.mark.parametrize("skew", [-301, 301, 3600])
def test_a_timestamp_outside_five_minutes_is_refused_even_when_correctly_signed(skew: int) -> None:
    with pytest.raises(SignatureError, match="outside the 300 s window"):
        verify(b"{}", timestamp=str(int(NOW.timestamp()) + skew))


def test_moving_the_timestamp_forward_breaks_the_signature() -> None:
    old = str(int(NOW.timestamp()) - 3600)
    with pytest.raises(SignatureError, match="does not match"):
        verify(b"{}", timestamp=str(int(NOW.timestamp())), received=signature("v0", "s3cret", old, b"{}"))


@pytest.mark.parametrize("timestamp", ["", "soon", "1.5e9"])
def test_a_missing_or_malformed_timestamp_is_refused(timestamp: str) -> None:
    with pytest.raises(SignatureError, match="not a Unix time"):
        verify(b"{}", timestamp=timestamp, received="v0=00")


def test_signature_errors_are_unauthorized_errors_so_the_api_answers_401() -> None:
    assert issubclass(SignatureError, UnauthorizedError)


@given(st.binary(max_size=512), st.binary(min_size=1, max_size=512))
def test_no_other_body_verifies_under_a_signature(body: bytes, other: bytes) -> None:
    stamp = str(int(NOW.timestamp()))
    good = signature("v0", "s3cret", stamp, body)
    if other != body:
        with pytest.raises(SignatureError):
            verify(other, received=good)


# --- Slack payloads -------------------------------------------------------------------------------------------------


def test_a_human_message_maps_to_tenant_user_slack_channel_and_a_session_per_thread() -> None:
    top = interaction_from_slack("acme", parse_envelope(slack_message(event_id="Ev1")))
    threaded = interaction_from_slack("acme", parse_envelope(slack_message(event_id="Ev2", thread_ts="1699.5")))
    assert top is not None and threaded is not None
    assert (top.tenant_id, top.user_id, top.channel) == ("acme", "U061F7AUR", "slack")
    assert top.event_id == "slack:Ev1"
    assert top.session_id == "C0LAN2Q65" and threaded.session_id == "C0LAN2Q65:1699.5"
    assert [(m.role.value, m.content) for m in top.messages] == [("user", "I just adopted a dog named Max")]
    assert top.occurred_at == datetime.fromtimestamp(1700000000.0001, UTC)
    assert top.metadata is not None and top.metadata["slack"]["team_id"] == "T061EG9R6"


@pytest.mark.parametrize(
    "fields",
    [{"subtype": "message_changed"}, {"subtype": "bot_message"}, {"bot_id": "B123"}, {"text": "   "}],
    ids=["edit", "bot-subtype", "bot-id", "blank"],
)
def test_what_no_person_wrote_is_acknowledged_but_not_ingested(fields: dict[str, str]) -> None:
    assert interaction_from_slack("acme", parse_envelope(slack_message(**fields))) is None


def test_a_url_verification_is_not_an_interaction() -> None:
    envelope = parse_envelope(json.dumps({"type": "url_verification", "challenge": "abc", "token": "t"}).encode())
    assert envelope.challenge == "abc" and interaction_from_slack("acme", envelope) is None


@pytest.mark.parametrize("body", [b"not json", b"[]", b'{"no_type": 1}'])
def test_a_body_that_is_not_an_events_api_payload_is_invalid_input(body: bytes) -> None:
    with pytest.raises(InvalidInputError, match="not a Slack Events API payload"):
        parse_envelope(body)


# --- webhook payloads ----------------------------------------------------------------------------------------------


def test_a_webhook_body_maps_with_its_idempotency_key_namespaced() -> None:
    event = interaction_from_webhook("acme", webhook_body("msg-7"))
    assert event.event_id == "webhook:msg-7" and event.channel == "discord" and event.user_id == "dana"
    assert [m.role.value for m in event.messages] == ["user", "assistant"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{", "not valid JSON"),
        (b'{"user_id": "dana", "messages": []}', "idempotency_key"),
        (
            json.dumps(
                {"idempotency_key": "k", "user_id": "has space", "messages": [{"role": "user", "content": "x"}]}
            ).encode(),
            "user_id",
        ),
        (
            json.dumps(
                {"idempotency_key": "k", "user_id": "u", "messages": [{"role": "robot", "content": "x"}]}
            ).encode(),
            "role",
        ),
        (
            json.dumps(
                {"idempotency_key": "k", "user_id": "u", "messages": [{"role": "user", "content": "x"}], "extra": 1}
            ).encode(),
            "extra",
        ),
    ],
    ids=["truncated", "missing-key", "bad-user", "bad-role", "unknown-field"],
)
def test_a_malformed_webhook_body_says_what_is_wrong(body: bytes, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        interaction_from_webhook("acme", body)

"""A URL password holding an unencoded '@' (``postgresql://app:s3cr@t!@db/mem``, as people type it) is redacted
whole: the part after its first '@' was left in the text (``app:[REDACTED]@t!@db``)."""

from __future__ import annotations

import pytest

from openclaw_memory.redaction import redact


@pytest.mark.parametrize("text, password, kept", [
    ("connecting to postgresql://app:s3cr@t!@db:5432/mem failed", "s3cr@t!", "postgresql://app:[REDACTED]@db:5432/mem"),
    ("base_url http://team:p@ss-word-99@gw.internal:8080/v1", "ss-word-99",
     "http://team:[REDACTED]@gw.internal:8080/v1"),
    ("see http://a:pw-1@c.example and write to x@y.example", "pw-1", "and write to x@y.example"),
])
def test_a_url_password_with_an_at_sign_is_redacted_whole(text: str, password: str, kept: str) -> None:
    shown = redact(text)
    assert password not in shown and kept in shown, shown

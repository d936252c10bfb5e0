"""A configuration refused through pydantic's own entry points (``model_validate``, ``model_validate_json``, a section
built alone, an assignment) quoted the input in its ``ValidationError``: an endpoint URL's token, a header's value, a
key. The settings models hide their input in errors; the message still names the key and says what is wrong."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from openclaw_memory.config import DreamingConfig, MemoryConfig, RemoteConfig
from openclaw_memory.errors import ConfigError

SECRET = "tok-SECRET-5f4e3d2c1b"


def _assign_base_url() -> None:
    MemoryConfig().remote.base_url = f"ftp://{SECRET}@gateway.internal/v1"


def _assign_key() -> None:
    MemoryConfig().dreaming.api_key = ["sk", SECRET]  # type: ignore[assignment]


CASES: list[tuple[str, Callable[[], Any]]] = [
    ("headers", lambda: MemoryConfig.model_validate({"remote": {"headers": {"Bad Name": SECRET}}})),
    ("headers", lambda: MemoryConfig.model_validate_json(json.dumps({"remote": {"headers": {"Key": SECRET + "\r"}}}))),
    ("base_url", lambda: MemoryConfig.model_validate({"remote": {"base_url": f"ftp://{SECRET}@gateway.internal/v1"}})),
    ("headers", lambda: RemoteConfig(headers={"X-Key": SECRET + "\n"})),
    ("base_url", lambda: RemoteConfig(base_url=f"{SECRET}@gateway.internal/v1")),
    ("api_key", lambda: DreamingConfig(api_key=["sk", SECRET])),
    ("base_url", _assign_base_url),
    ("api_key", _assign_key),
]


@pytest.mark.parametrize("what, build", CASES, ids=[f"{i}-{what}" for i, (what, _) in enumerate(CASES)])
def test_a_refused_setting_is_not_quoted(what: str, build: Callable[[], Any]) -> None:
    with pytest.raises((ValidationError, ConfigError)) as info:
        build()
    shown = str(info.value) + repr(info.value)
    assert not [SECRET[i:i + 10] for i in range(len(SECRET) - 9) if SECRET[i:i + 10] in shown], shown  # not a part
    assert what in str(info.value)  # the key refused

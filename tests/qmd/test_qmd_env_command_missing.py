"""QMD run through ``env`` (``env HF_TOKEN=… qmd``, as the docs write a credential) where ``qmd`` is not installed:
``env`` itself starts and exits 127, and the fallback's reason read "qmd collection failed (exit 127): env: 'qmd':
No such file or directory", without the advice a missing command gets (install QMD, set memory.qmd.command, or use
the builtin backend). It gets that advice now."""

from __future__ import annotations

from pathlib import Path

from openclaw_memory import MemoryIndex


def test_a_missing_qmd_behind_env_is_named_as_missing(memory_ws: Path, tmp_path: Path) -> None:
    command = f"env QMD_EMBED_MODEL=x {tmp_path / 'no-such-qmd'}"
    with MemoryIndex(workspace=memory_ws, state_dir=tmp_path / "state", provider=None, watch=False, backend="qmd",
                     qmd={"command": command}) as memory:
        result = memory.search("pgbouncer")
        info = memory.status().backend_info
    assert result.fallback is not None and result.hits
    assert "QMD command not found or not executable" in result.fallback.reason
    assert "no-such-qmd" in result.fallback.reason and "memory.qmd.command" in result.fallback.reason
    assert info is not None

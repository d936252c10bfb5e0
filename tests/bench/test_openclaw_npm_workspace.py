"""The original's quality row: the workspace copy it indexes, with the notes' dates hidden from its temporal decay.

openclaw 2026.9.6 always decays the score of a note named ``memory/**/YYYY-MM-DD[-x].md`` by its age (half-life
30 days); on the development set's 2023 notes that ranks by file date, not by the question. The bench renames
such notes so the decay does not apply and maps the paths it returns back to the data set's.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.openclaw_npm import UNDATED_PREFIX, copy_workspace

#: the original's pattern for a dated note (dist/extensions/memory-core/manager-runtime.js, DATED_MEMORY_PATH_RE)
ORIGINAL_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")


def _workspace(root: Path) -> Path:
    (root / "memory" / "deep").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-term\n", encoding="utf-8")
    (root / "memory" / "2023-05-08.md").write_text("# 8 May 2023\n\nCaroline: hi\n", encoding="utf-8")
    (root / "memory" / "2023-05-08-2.md").write_text("# second session\n", encoding="utf-8")
    (root / "memory" / "deep" / "2023-06-01.md").write_text("# June\n", encoding="utf-8")
    (root / "memory" / "notes.md").write_text("# undated\n", encoding="utf-8")
    return root


def test_hidden_dates_defeat_the_originals_date_pattern_and_map_back(tmp_path: Path) -> None:
    src = _workspace(tmp_path / "src")
    names = copy_workspace(src, tmp_path / "copy", hide_dates=True)
    copied = {f.relative_to(tmp_path / "copy").as_posix() for f in (tmp_path / "copy").rglob("*.md")}
    assert set(names) == copied
    assert not [p for p in copied if ORIGINAL_DATED.search(p)]  # no note is dated for the original any more
    assert names[f"memory/{UNDATED_PREFIX}2023-05-08.md"] == "memory/2023-05-08.md"
    assert names[f"memory/{UNDATED_PREFIX}2023-05-08-2.md"] == "memory/2023-05-08-2.md"
    assert names[f"memory/deep/{UNDATED_PREFIX}2023-06-01.md"] == "memory/deep/2023-06-01.md"
    assert names["MEMORY.md"] == "MEMORY.md" and names["memory/notes.md"] == "memory/notes.md"
    # same contents, so line numbers are the data set's; the data set itself is untouched
    assert (tmp_path / "copy" / "memory" / f"{UNDATED_PREFIX}2023-05-08.md").read_text(encoding="utf-8") == \
        (src / "memory" / "2023-05-08.md").read_text(encoding="utf-8")
    assert (src / "memory" / "2023-05-08.md").exists()


def test_as_shipped_keeps_the_names(tmp_path: Path) -> None:
    src = _workspace(tmp_path / "src")
    names = copy_workspace(src, tmp_path / "copy", hide_dates=False)
    assert names == {p: p for p in names}
    assert "memory/2023-05-08.md" in names and ORIGINAL_DATED.search("memory/2023-05-08.md")

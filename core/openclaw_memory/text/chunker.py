"""Line-based Markdown chunking (spec §2), chunk ids and post-chunking transforms.

Pure functions: no I/O. Sizes are estimated in characters (``tokens * 4``), with dense
scripts weighted so that one of their characters counts like four Latin ones.

Differences from the original ``chunkMarkdown`` (all deliberate):

* Weights and long-line slices use code points, not UTF-16 units, so an emoji counts 1
  (the original counts it 2) and no slice can end inside a character.
* Thai characters are weighted like CJK (the original weights only CJK/kana/Hangul/Yi):
  Thai is written without spaces and tokenises as densely as CJK.
* Overlap never makes a chunk overshoot the budget: carried lines are dropped, oldest
  first, until the next segment fits. The original carried a whole ~maxChars segment of a
  long line and produced chunks of twice the budget (3201 chars from a 1600-char budget).
* Empty and whitespace-only chunks are dropped here rather than by the caller.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from openclaw_memory.types import Chunk
from openclaw_memory.text.provenance import without_origin_markers

__all__ = [
    "CHUNKER_VERSION", "RECORD_CLOSE_PREFIX", "RECORD_INDEX_BODY", "RECORD_INDEX_TEXT", "RECORD_KIND",
    "RECORD_OPEN_PREFIX", "RecordMarker", "chunk_id", "chunk_markdown", "escape_record_markers", "indexed_hash",
    "indexed_text", "is_record_marker", "parse_record_marker", "remap_chunk_lines", "shown_text",
    "split_for_input_limit", "split_text_for_input_limit", "text_weight",
]

#: The chunking rules' version, part of the index fingerprint: an index whose chunks were cut by other
#: rules is rebuilt (embeddings of unchanged chunk texts come from the cache). 1: the original rules;
#: 2: records start their own chunk and a final newline adds no empty last line; 3: a record's marker line is
#: never split (a long one, big metadata, was cut into pieces whose JSON was embedded and keyword-indexed);
#: 4: an opening marker heavier than a chunk keeps its record's first line (a chunk of the marker alone was a hit
#: on none of the record's lines: a LlamaIndex node was not found by its long metadata), a closing marker never
#: starts a chunk; 5: provenance markers (``<!-- origin: agent -->``) are not embedded or keyword-indexed (chunk
#: boundaries are unchanged); 6: each of the user's messages in a user–assistant transcript is also a chunk of its
#: own (:func:`openclaw_memory.text.turns.user_turn_chunks`).
CHUNKER_VERSION = 6

#: A line starting with this opens a *record* (a node or item an adapter wrote, see
#: ``llama_index_openclaw_memory._sections``): it always starts a new chunk, so two records never
#: share a chunk (nor its score).
RECORD_OPEN_PREFIX = "<!-- openclaw-memory:"
#: A line starting with this closes a record: the chunk ends with it.
RECORD_CLOSE_PREFIX = "<!-- /openclaw-memory:"


def is_record_marker(line: str) -> bool:
    """True for a record's opening or closing marker line (:data:`RECORD_OPEN_PREFIX`, :data:`RECORD_CLOSE_PREFIX`)."""
    return line.startswith(RECORD_OPEN_PREFIX) or line.startswith(RECORD_CLOSE_PREFIX)


# a marker at the start of a line (or of the text, after a byte-order mark a reader would drop): its "<" is escaped
_MARKER_START = re.compile(
    rf"(^|\n)(\ufeff?)<(?={re.escape(RECORD_OPEN_PREFIX[1:])}|{re.escape(RECORD_CLOSE_PREFIX[1:])})")


def escape_record_markers(text: str) -> str:
    """``text`` with every line that would read as a record marker (:func:`is_record_marker`) made plain text:
    its leading ``<`` becomes ``&lt;`` (Markdown shows the line as written instead of hiding it). Writers of
    text that is not a record (appends of notes, flushes, model output) use it, so only the adapters' own
    record writes can open or close a record."""
    return _MARKER_START.sub(r"\1\2&lt;", text)


#: What a record's kind may be (``node``, ``item``): lower-case letters, digits, ``-`` and ``_``, a letter first.
RECORD_KIND = re.compile(r"[a-z][a-z0-9_-]*")
_OPEN_MARKER = re.compile(rf"^{re.escape(RECORD_OPEN_PREFIX)}({RECORD_KIND.pattern}) (\{{.*\}}) -->\s*$")
_CLOSE_MARKER = re.compile(rf"^{re.escape(RECORD_CLOSE_PREFIX)}({RECORD_KIND.pattern}) -->\s*$")


@dataclass(frozen=True)
class RecordMarker:
    """A record's marker line, parsed: ``<!-- openclaw-memory:KIND {JSON} -->`` opens a record,
    ``<!-- /openclaw-memory:KIND -->`` closes one."""

    kind: str
    opening: bool
    #: the opening marker's attributes; None for a closing marker, or when the JSON is not an object
    attrs: dict[str, Any] | None = None


def parse_record_marker(line: str) -> RecordMarker | None:
    """The marker ``line`` is, or None when it is not a whole marker line (a piece of an over-long one, say).
    An opening marker whose JSON does not parse to an object still is one (its ``attrs`` are None)."""
    if line.startswith(RECORD_CLOSE_PREFIX):
        m = _CLOSE_MARKER.match(line)
        return RecordMarker(m.group(1), False) if m else None
    if not line.startswith(RECORD_OPEN_PREFIX) or (m := _OPEN_MARKER.match(line)) is None:
        return None
    try:
        attrs = json.loads(m.group(2))
    except ValueError:
        attrs = None
    return RecordMarker(m.group(1), True, attrs if isinstance(attrs, dict) else None)


#: The record attribute (a string in the opening marker's JSON) holding text its writer wants embedded and
#: keyword-indexed in place of the marker line, for example a LlamaIndex node's metadata as
#: ``node.get_metadata_str(MetadataMode.EMBED)`` renders it. The file stays the source of truth: the text is
#: in the marker. A record without it is indexed by its body alone.
RECORD_INDEX_TEXT = "index_text"
#: The record attribute (a boolean in the opening marker's JSON) that, when ``false``, keeps the record's body
#: out of the index: only its :data:`RECORD_INDEX_TEXT` is embedded and keyword-indexed, and a record with
#: neither is not indexed at all (read from its file, never found by search). The LangGraph store's items use it
#: to index the fields ``put(..., index=[...])`` names, or nothing for ``index=False``. Such a record is one chunk
#: however long its body (the body weighs nothing in the chunk budget). Only a closed record counts: an opening
#: marker without its closing one leaves the lines after it indexed as text.
RECORD_INDEX_BODY = "index_body"


def _index_text_of(marker: str) -> str | None:
    """The :data:`RECORD_INDEX_TEXT` of an opening marker line, or None (absent, blank, not a string, or a
    marker that is not a whole line of JSON, such as a piece of an over-long one)."""
    parsed = parse_record_marker(marker)
    value = parsed.attrs.get(RECORD_INDEX_TEXT) if parsed is not None and parsed.attrs is not None else None
    return value if isinstance(value, str) and value.strip() else None


def _hidden_lines(lines: list[str]) -> set[int]:
    """Indexes in ``lines`` of the body and closing marker of each closed record whose opening marker sets
    :data:`RECORD_INDEX_BODY` to false (the opening marker itself stands for its index text)."""
    hidden: set[int] = set()
    opened: tuple[int, str] | None = None  # (index, kind) of a record whose body is not indexed
    for i, line in enumerate(lines):
        if not is_record_marker(line):
            continue
        marker = parse_record_marker(line)
        if marker is None:
            continue
        if marker.opening:
            silent = marker.attrs is not None and marker.attrs.get(RECORD_INDEX_BODY) is False
            opened = (i, marker.kind) if silent else None
        elif opened is not None:
            if marker.kind == opened[1]:
                hidden.update(range(opened[0] + 1, i + 1))
            opened = None
    return hidden


def _hides_body(text: str) -> bool:
    """Whether ``text`` may hold a record whose body is not indexed (a cheap test before :func:`_hidden_lines`)."""
    return f'"{RECORD_INDEX_BODY}"' in text


def indexed_text(text: str) -> str:
    """What of a chunk's ``text`` is embedded and keyword-indexed: the text without its record marker lines,
    an opening marker with a :data:`RECORD_INDEX_TEXT` attribute giving way to that text and a blank line.

    A record's markers (its id, key and timestamps, written by the LangGraph store and the LlamaIndex
    vector store) stay in the file and in a search hit's text, but would only add noise to the
    record's vector and keyword matches. Text without markers, and a chunk that holds nothing but markers
    (a piece of a record longer than a chunk), is returned as it is. The body of a record whose marker sets
    :data:`RECORD_INDEX_BODY` to false is left out; such a record without index text gives ``""``.
    Provenance markers (``<!-- origin: … -->``, :mod:`openclaw_memory.text.provenance`) are left out too.
    """
    plain = without_origin_markers(text)
    text = plain if plain.strip() else text
    if "openclaw-memory:" not in text:
        return text
    lines = text.split("\n")
    hidden = _hidden_lines(lines) if _hides_body(text) else set()
    kept: list[str] = []
    for i, line in enumerate(lines):
        if i in hidden:
            continue
        if not is_record_marker(line):
            kept.append(line)
        elif (extra := _index_text_of(line)) is not None:
            kept.extend((extra, ""))
    out = "\n".join(kept)
    if out.strip():
        return out
    return "" if hidden else text


def shown_text(text: str) -> str:
    """What of a chunk's ``text`` a search hit's snippet shows: the text without its record marker lines (a record's
    id, key, timestamps and links, which can fill a whole snippet), bodies included. Text without markers, and a
    chunk that holds nothing but markers, is returned as it is."""
    if "openclaw-memory:" not in text:
        return text
    kept = "\n".join(line for line in text.split("\n") if not is_record_marker(line))
    return kept if kept.strip() else text


def indexed_hash(text: str, text_hash: str) -> str:
    """The embedding-cache key of a chunk whose text is ``text`` (sha256 ``text_hash``): the sha256 of
    :func:`indexed_text`, which is ``text_hash`` itself for a chunk without record markers."""
    kept = indexed_text(text)
    return text_hash if kept is text else _sha256(kept)


# The original CJK/kana/Hangul/Yi/compat/ext-B+ ranges, plus Thai (U+0E00–U+0E7F).
_DENSE = re.compile(
    "[\u0e00-\u0e7f\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]"
)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_weight(s: str) -> int:
    """Estimated size of ``s`` in characters: 1 per code point, 4 per CJK/kana/Hangul/Yi/Thai one."""
    return len(s) + 3 * len(_DENSE.findall(s))


def _split_long(line: str, max_chars: int, tokens: int) -> list[str]:
    """Cut a line into ``max_chars``-code-point slices; re-cut heavy slices into ``tokens`` ones."""
    segments: list[str] = []
    for i in range(0, len(line), max_chars):
        piece = line[i : i + max_chars]
        if text_weight(piece) > max_chars:
            segments.extend(piece[j : j + tokens] for j in range(0, len(piece), tokens))
        else:
            segments.append(piece)
    return segments


def _segments(line: str, max_chars: int, tokens: int) -> list[tuple[str, int]]:
    """A line's segments with their weights in the chunk budget (newline included). A record marker line is
    one segment however long, weighing what :func:`indexed_text` makes of it: its index text or nothing."""
    if not line:
        return [("", 1)]
    if is_record_marker(line):
        extra = _index_text_of(line)
        return [(line, 0 if extra is None else text_weight(extra) + 2)]
    return [(seg, text_weight(seg) + 1) for seg in _split_long(line, max_chars, tokens)]


def chunk_markdown(content: str, tokens: int = 400, overlap: int = 80) -> list[Chunk]:
    """Split ``content`` into overlapping chunks of about ``tokens`` tokens (1-based inclusive lines).

    ``tokens`` is raised to at least 1 and ``overlap`` clamped to ``[0, tokens - 1]``.
    Chunks whose text is empty or whitespace-only are not returned. Records (lines from
    :data:`RECORD_OPEN_PREFIX` to :data:`RECORD_CLOSE_PREFIX`) get chunks of their own, without
    overlap into their neighbours; a marker line is never split, and counts in the budget as what
    :func:`indexed_text` keeps of it. An opening marker heavier than a chunk (a long index text) still shares its
    chunk with the record's first line, and a marker weighing nothing (a closing one) never starts a chunk.
    """
    tokens = max(1, tokens)
    overlap = min(max(0, overlap), tokens - 1)
    max_chars = max(32, tokens * 4)
    overlap_chars = overlap * 4

    chunks: list[Chunk] = []
    cur: list[tuple[str, int, int]] = []  # (segment, line number, weight incl. its newline)
    cur_chars = 0

    lines = content.split("\n")
    if len(lines) > 1 and lines[-1] == "":  # the final newline ends the last line; no line follows it
        lines.pop()
    hidden = _hidden_lines(lines) if _hides_body(content) else set()

    def flush() -> None:
        text = "\n".join(seg for seg, _, _ in cur)
        if text.strip() and not (hidden and not indexed_text(text).strip()):  # a record asking for no index: none
            chunks.append(Chunk(start_line=cur[0][1], end_line=cur[-1][1], text=text, hash=_sha256(text)))

    for line_no, line in enumerate(lines, start=1):
        if cur and line.startswith(RECORD_OPEN_PREFIX):  # a record starts a chunk of its own
            flush()
            cur, cur_chars = [], 0
        if line_no - 1 in hidden:  # the body of a record that is not indexed: whole, weighing nothing, never cut
            cur.append((line, line_no, 0))
        else:
            for seg, size in _segments(line, max_chars, tokens):
                # an opening marker heavier than the budget (a long index text) keeps its record's first line with it:
                # a chunk of the marker alone would be a hit on no line of the record's text
                alone = len(cur) == 1 and cur[0][0].startswith(RECORD_OPEN_PREFIX)
                if cur and size and cur_chars + size > max_chars and not alone:  # a weightless marker never overflows
                    flush()
                    kept: list[tuple[str, int, int]] = []
                    acc = 0
                    if overlap_chars > 0:
                        for entry in reversed(cur):
                            kept.insert(0, entry)
                            acc += entry[2]
                            if acc >= overlap_chars:
                                break
                    while kept and acc + size > max_chars:
                        acc -= kept.pop(0)[2]
                    cur, cur_chars = kept, acc
                cur.append((seg, line_no, size))
                cur_chars += size
        if line.startswith(RECORD_CLOSE_PREFIX):  # and nothing after it joins its chunk
            flush()
            cur, cur_chars = [], 0
    if cur:
        flush()
    return chunks


def chunk_id(source: str, path: str, start_line: int, end_line: int, chunk_hash: str, model: str) -> str:
    """Stable id of a chunk row: sha256 of ``source:path:start:end:hash:model``."""
    return _sha256(f"{source}:{path}:{start_line}:{end_line}:{chunk_hash}:{model}")


def _utf8_prefix_len(text: str, max_bytes: int) -> int:
    """Number of leading code points of ``text`` that fit in ``max_bytes`` UTF-8 bytes (at least 1)."""
    data = text.encode("utf-8")[:max_bytes]
    return max(1, len(data.decode("utf-8", errors="ignore")))


def _next_piece(rest: str, max_bytes: int) -> int:
    """Length of the next piece of ``rest`` for :func:`split_for_input_limit`: at most ``max_bytes`` UTF-8 bytes
    of embedded text, ending at a line break (or else a space) in the second half of the window, never inside a
    record marker line: a marker starting the piece goes whole and weighs its index text, one starting later
    ends the piece before it."""
    head, budget = 0, max_bytes
    if is_record_marker(rest):
        end = rest.find("\n")
        if end < 0:
            return len(rest)
        head = end + 1
        extra = _index_text_of(rest[:end])
        budget = max(1, max_bytes - (0 if extra is None else len(extra.encode("utf-8")) + 2))
    tail = rest[head:]
    if head and is_record_marker(tail):  # two marker lines in a row: one each
        return head
    n = _utf8_prefix_len(tail, budget)
    if n < len(tail):
        for sep in ("\n", " "):
            cut = tail.rfind(sep, 0, n)
            if cut >= n // 2:
                n = cut + 1
                break
        start = tail.rfind("\n", 0, n) + 1  # the line the piece ends in
        if tail[n - 1] != "\n" and start and is_record_marker(tail[start:]):  # a marker line cut by the window
            n = start  # starts the next piece
    return head + n


def _pieces(text: str, max_bytes: int) -> Iterator[str]:
    """``text`` cut by :func:`_next_piece` into consecutive pieces that join back to it."""
    rest = text
    while rest:
        n = _next_piece(rest, max_bytes)
        yield rest[:n]
        rest = rest[n:]


def split_for_input_limit(chunks: list[Chunk], max_bytes: int) -> list[Chunk]:
    """Split chunks longer than ``max_bytes`` UTF-8 bytes into pieces that fit, never inside a character.

    Pieces end at a line break (or else a space) when one falls in the second half of the
    window. When the chunk's line breaks are its source lines, each piece carries the lines it
    covers; otherwise (segments of a split long line) it keeps the parent's range. A single character
    longer than ``max_bytes`` still becomes a piece of its own. A chunk's size is that of its
    :func:`indexed_text` (what is embedded), so a long record marker alone does not split it; a record whose
    body is not indexed (:data:`RECORD_INDEX_BODY`) is never split: it stays one chunk (one search hit, its
    record's lines), and an index text longer than ``max_bytes`` is embedded in pieces
    (:func:`split_text_for_input_limit`) whose vectors the sync combines.
    """
    out: list[Chunk] = []
    for chunk in chunks:
        if len(indexed_text(chunk.text).encode("utf-8")) <= max_bytes:  # what is embedded, without markers
            out.append(chunk)
            continue
        if _hides_body(chunk.text) and _hidden_lines(chunk.text.split("\n")):  # only its index text is embedded
            out.append(chunk)
            continue
        line = chunk.start_line
        mappable = chunk.text.count("\n") == chunk.end_line - chunk.start_line
        for piece in _pieces(chunk.text, max_bytes):
            start, end = chunk.start_line, chunk.end_line
            if mappable:
                start = min(line, chunk.end_line)
                end = min(chunk.end_line, start + piece.rstrip("\n").count("\n"))
            out.append(replace(chunk, start_line=start, end_line=end, text=piece, hash=_sha256(piece)))
            line += piece.count("\n")
    return out


def split_text_for_input_limit(text: str, max_bytes: int) -> list[str]:
    """``text`` (what is embedded for a chunk, :func:`indexed_text`) cut into pieces of at most ``max_bytes``
    UTF-8 bytes, as :func:`split_for_input_limit` cuts a chunk: at a line break (or else a space) in the second
    half of the window, never inside a character. ``[text]`` when it fits; whitespace-only pieces are left out.

    For a text that stays one chunk however long, such as the index text of a record whose body is not indexed
    (:data:`RECORD_INDEX_BODY`): its pieces are embedded and their vectors combined into the chunk's one.
    """
    if len(text.encode("utf-8")) <= max_bytes:
        return [text]
    pieces = [piece for piece in _pieces(text, max_bytes) if piece.strip()]
    return pieces or [text[: _utf8_prefix_len(text, max_bytes)]]


def remap_chunk_lines(chunks: list[Chunk], line_map: list[int]) -> list[Chunk]:
    """Map content line ``k`` to ``line_map[k-1]`` for start and end (session transcripts → JSONL lines).

    Lines past the end of ``line_map`` map to its last entry; an empty map changes nothing.
    """
    if not line_map:
        return list(chunks)

    def at(k: int) -> int:
        return line_map[min(k, len(line_map)) - 1]

    return [replace(c, start_line=at(c.start_line), end_line=at(c.end_line)) for c in chunks]

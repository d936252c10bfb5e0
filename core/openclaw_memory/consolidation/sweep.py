"""One consolidation sweep: candidates from recent daily notes, gated; the model's decisions; the
composed MEMORY.md (or append-only promotion); its preimage; the ``DREAMS.md`` summary. And undo.

The model is a plain function: ``complete(prompt) -> answer`` (or an async one). It sees no tools
and no conversation, only the prompt of :func:`~openclaw_memory.consolidation.decisions.build_prompt`.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_memory.files.append import append_memory, local_now, today as local_today
from openclaw_memory.files.memory_writes import file_lock, replace_atomically
from openclaw_memory.config import MemoryConfig
from openclaw_memory.consolidation.candidates import (
    Candidate,
    GateCounts,
    collect_candidates,
    gate_candidates,
    rehydrate,
)
from openclaw_memory.consolidation.decisions import Decision, InvalidDecisions, build_prompt, parse_decisions
from openclaw_memory.text.entries import source_refs
from openclaw_memory.consolidation.forgetting import forgotten_set, resolve, without
from openclaw_memory.consolidation.records import memory_entries
from openclaw_memory.retrieval.recall_signals import RecallSignals, state_dir
from openclaw_memory.consolidation.writer import (
    MemoryChanged,
    Plan,
    append_only,
    compose,
    digest,
    edit_memory,
    read_memory,
    readable,
    rewrite_memory,
    with_newlines_of,
)
from openclaw_memory.errors import MemoryArgumentError, OpenClawMemoryError
from openclaw_memory.providers._loops import run_on_own_loop
from openclaw_memory.redaction import redact

if TYPE_CHECKING:
    from openclaw_memory.index import MemoryIndex

__all__ = ["AsyncCompletion", "Completion", "ConsolidationReport", "aconsolidate", "consolidate", "forget", "undo"]

log = logging.getLogger(__name__)

#: A model as consolidation sees it: the prompt in, the answer out.
Completion = Callable[[str], str]
AsyncCompletion = Callable[[str], Awaitable[str]]

_MEMORY = "MEMORY.md"
_DREAMS = "DREAMS.md"
_KEPT_PREIMAGES = 20  # the newest preimages kept (undone ones included)
_ATTEMPTS = 2  # a hand edit during the sweep: plan once more against the edited file, then give up


@dataclass
class ConsolidationReport:
    """What a sweep decided and (with ``applied``) wrote.

    ``mode`` is ``"rewrite"`` (the model's decisions applied), ``"append-only"`` (the fallback:
    ``fallback_reason`` says why) or ``"none"`` (nothing to promote). ``added``/``merged``/
    ``superseded``/``deferred`` hold candidate sources (``path#Lx-Ly``); ``diff`` is the unified
    diff of MEMORY.md; ``skipped_reason`` says why nothing was written although there was a plan.
    """

    mode: str
    applied: bool
    decisions: list[Decision] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    highlights: list[str] = field(default_factory=list)
    diff: str = ""
    fallback_reason: str | None = None
    skipped_reason: str | None = None
    counts: GateCounts = field(default_factory=GateCounts)
    candidates: list[Candidate] = field(default_factory=list)
    preimage: Path | None = None


@dataclass
class _Sweep:
    config: MemoryConfig
    workspace: Path
    today: date
    memory_text: str
    candidates: list[Candidate]
    counts: GateCounts
    prompt: str

    @property
    def entries(self) -> list[str]:
        return [readable(block.text) for block in memory_entries(self.memory_text)]


def _config(memory: MemoryIndex | MemoryConfig) -> MemoryConfig:
    return memory if isinstance(memory, MemoryConfig) else memory.config


def _read_memory(workspace: Path) -> str:
    return read_memory(workspace, _MEMORY)


def _day(today: object) -> date | None:
    """The ``today`` argument as a date: a datetime's own date; MemoryArgumentError for anything else."""
    if today is None or type(today) is date:
        return today  # type: ignore[return-value]
    if isinstance(today, datetime):
        return today.date()
    raise MemoryArgumentError(f"today must be a date (or a datetime), such as date(2026, 11, 27), not "
                              f"{type(today).__name__} ({today!r:.40})")


def _prepare(config: MemoryConfig, today: date | None) -> _Sweep:
    workspace = config.resolved_workspace()
    day = today or local_today(config.timezone)
    memory_text = _read_memory(workspace)
    counts = GateCounts()
    found = collect_candidates(workspace, memory_text, today=day, lookback_days=config.dreaming.lookback_days,
                               counts=counts, forgotten=forgotten_set(state_dir(config)))
    signals = RecallSignals(state_dir(config) / "recalls.sqlite")
    gated = rehydrate(workspace, gate_candidates(found, signals, config.dreaming, counts), counts)
    sweep = _Sweep(config, workspace, day, memory_text, gated, counts, "")
    sweep.prompt = build_prompt(sweep.entries, gated, max_chars=config.dreaming.max_entry_chars)
    return sweep


def _plan(sweep: _Sweep, answer: str | BaseException) -> tuple[Plan, list[Decision]]:
    plan, decisions = _planned(sweep, answer)
    plan.text = with_newlines_of(sweep.memory_text, plan.text)
    return plan, decisions


def _planned(sweep: _Sweep, answer: str | BaseException) -> tuple[Plan, list[Decision]]:
    settings = sweep.config.dreaming
    live = rehydrate(sweep.workspace, sweep.candidates, sweep.counts)  # before writing: drop what changed
    if isinstance(answer, BaseException):  # the reason goes to DREAMS.md: no secret in it
        reason = redact(f"the model failed: {answer}")
        return append_only(sweep.memory_text, live, settings, sweep.today, reason=reason), []
    try:
        decisions = parse_decisions(answer, entry_count=len(sweep.entries), candidates=sweep.candidates)
    except InvalidDecisions as exc:
        log.warning("consolidation: %s; promoting append-only", exc)
        return append_only(sweep.memory_text, live, settings, sweep.today, reason=str(exc)), []
    return compose(sweep.memory_text, decisions, live, settings, sweep.today), decisions


def _diff(before: str, after: str) -> str:
    return readable("".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                                 "MEMORY.md (before)", "MEMORY.md (after)")))


def _report(sweep: _Sweep, plan: Plan, decisions: list[Decision], applied: bool) -> ConsolidationReport:
    return ConsolidationReport(
        mode=plan.mode, applied=applied, decisions=decisions, added=plan.added, merged=plan.merged,
        superseded=plan.superseded, deferred=plan.deferred, highlights=plan.highlights,
        diff=_diff(sweep.memory_text, plan.text), fallback_reason=plan.fallback_reason, counts=sweep.counts,
        candidates=sweep.candidates)


def _preimages(config: MemoryConfig) -> Path:
    return state_dir(config) / "preimages"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """``data`` as ``path``, atomically (the state directory is trusted configuration)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, json.dumps(data).encode("utf-8"))


@contextlib.contextmanager
def _preimages_locked(config: MemoryConfig) -> Iterator[None]:
    """Hold the preimages' lock: a sweep or forget holds it from writing its preimage to writing MEMORY.md, undo
    from choosing a preimage to marking it undone. So undo never takes the preimage of a sweep still writing for
    the one of a sweep killed before its write (and deletes it), nor two undos the same preimage."""
    folder = _preimages(config)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.parent / ".preimages.lock", folder, "another consolidation, undo or forget keeps it"):
        yield


def _save_preimage(config: MemoryConfig, before: str, after: str) -> Path:
    now = datetime.now(timezone.utc)  # names in UTC: the local clock jumps with time zones and summer time
    path = _preimages(config) / f"{now.strftime('%Y%m%dT%H%M%S%f')}.json"
    _write_json(path, {"path": _MEMORY, "before": before, "after_sha256": digest(after),
                       "at": local_now(config.timezone, now).isoformat(timespec="seconds")})
    kept = sorted((p for p in path.parent.iterdir() if p.suffix in (".json", ".undone")), key=_written_at)
    for old in kept[:-_KEPT_PREIMAGES]:
        old.unlink(missing_ok=True)
    return path


def _written_at(path: Path) -> tuple[float, str]:
    """When a preimage was written, for ordering: its record's time (with its UTC offset, so a change of time zone
    between two changes does not reorder them), then its name."""
    try:
        at = datetime.fromisoformat(json.loads(path.read_text(encoding="utf-8"))["at"])
        written = at.timestamp() if at.tzinfo is not None else 0.0
    except (OSError, ValueError, KeyError, TypeError):
        written = 0.0
    return written, path.stem


def _stamp(config: MemoryConfig) -> str:
    """The current time for DREAMS.md, in the configured time zone (as the day of ``## Promoted``)."""
    return local_now(config.timezone).strftime("%Y-%m-%d %H:%M")


def _diary(sweep: _Sweep, plan: Plan) -> str:
    counts = sweep.counts
    lines = [f"## Deep Sleep {_stamp(sweep.config)}", "",
             f"- {plan.mode}: added {len(plan.added)}, merged {len(plan.merged)}, superseded {len(plan.superseded)}"
             f"; candidates found {counts.found}, untrusted {counts.untrusted}, forgotten {counts.forgotten}, already in "
             f"memory {counts.already_in_memory}, below the gates "
             f"{counts.below_gates}, stale {counts.stale}"]
    if plan.fallback_reason:
        lines.append(f"- fallback: {plan.fallback_reason}")
    if plan.deferred:
        lines.append(f"- deferred (MEMORY.md budget): {len(plan.deferred)}")
    lines += [f"    {highlight}" for highlight in plan.highlights[:12]]
    return "\n".join(lines) + "\n"


def _apply(sweep: _Sweep, plan: Plan) -> Path:
    """Preimage, then MEMORY.md (atomic, only if unchanged since the sweep read it), then DREAMS.md."""
    with _preimages_locked(sweep.config):
        preimage = _save_preimage(sweep.config, sweep.memory_text, plan.text)
        try:
            rewrite_memory(sweep.workspace, sweep.memory_text, plan.text)
        except BaseException:
            preimage.unlink(missing_ok=True)
            raise
    append_memory(sweep.workspace, _DREAMS, "\n" + _diary(sweep, plan), allowed={_DREAMS})
    return preimage


def _finish(sweep: _Sweep, answer: str | BaseException, apply: bool) -> ConsolidationReport | None:
    """The report of the sweep (written when ``apply``), or None when MEMORY.md changed meanwhile."""
    plan, decisions = _plan(sweep, answer)
    report = _report(sweep, plan, decisions, applied=False)
    if not apply or plan.mode == "none":
        return report
    if digest(_read_memory(sweep.workspace)) != digest(sweep.memory_text):
        return None
    try:
        report.preimage = _apply(sweep, plan)
    except MemoryChanged:
        return None
    report.applied = True
    return report


def _changed_report(config: MemoryConfig, today: date | None) -> ConsolidationReport:
    sweep = _prepare(config, today)
    report = _report(sweep, Plan(sweep.memory_text, "none"), [], applied=False)
    report.skipped_reason = "MEMORY.md was edited during the sweep (twice); nothing written, run it again"
    return report


def _failed(exc: Exception) -> Exception:
    """The user's model failed (unavailable, rate-limited, ...): the sweep promotes append-only."""
    log.warning("consolidation: the model failed (%s); promoting append-only", redact(str(exc)))
    return exc


def _text(answer: object) -> str:
    """The model's answer, which must be its text."""
    if isinstance(answer, str):
        return answer
    raise MemoryArgumentError(
        f"the model function returned {type(answer).__name__}, not the answer's text (str). Pass a function "
        "returning the text, or use the adapter that reads a model's reply: langchain_openclaw_memory.consolidate"
        "(memory, chat_model) or llama_index_openclaw_memory.consolidate(memory, llm)")


def _ask(complete: Completion | AsyncCompletion, prompt: str) -> str | Exception:
    """The answer of ``complete`` (a plain or an async function) to ``prompt``, or why it failed."""
    try:
        answer: object = complete(prompt)
    except Exception as exc:
        return _failed(exc)
    if inspect.isawaitable(answer):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            if inspect.iscoroutine(answer):
                answer.close()
            raise MemoryArgumentError("the model function is async and an event loop is running: "
                                      "use 'await aconsolidate(...)'")
        try:
            answer = run_on_own_loop(answer)  # asyncio.run would unset the caller's event loop
        except Exception as exc:
            return _failed(exc)
    return _text(answer)


async def _aask(complete: Completion | AsyncCompletion, prompt: str) -> str | Exception:
    """:func:`_ask` in an event loop."""
    try:
        answer: object = complete(prompt)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        return _failed(exc)
    return _text(answer)


def consolidate(memory: MemoryIndex | MemoryConfig, complete: Completion | AsyncCompletion, *, apply: bool = True,
                today: date | None = None) -> ConsolidationReport:
    """Consolidate the recent daily notes into MEMORY.md with the model ``complete``: a function
    from the prompt to the answer's text, plain or async (outside a running event loop).

    Without ``apply`` nothing is written (the report holds the decisions and the diff). When
    MEMORY.md is edited while the model thinks, the sweep plans again against the edited file;
    a second edit leaves MEMORY.md alone (``skipped_reason``). A write that fails raises
    (OpenClawMemoryError, or OSError such as a full disk) and leaves MEMORY.md as it was; a
    failing model falls back to append-only promotion. MemoryArgumentError, before anything is
    written, when ``complete`` returns something else than text (a chat model's message). ``today`` (default:
    today in the configured timezone) is a date; a datetime stands for its date."""
    config, today = _config(memory), _day(today)
    for _ in range(_ATTEMPTS):
        sweep = _prepare(config, today)
        if not sweep.candidates:
            return _report(sweep, Plan(sweep.memory_text, "none"), [], applied=False)
        report = _finish(sweep, _ask(complete, sweep.prompt), apply)
        if report is not None:
            return report
    return _changed_report(config, today)


async def aconsolidate(memory: MemoryIndex | MemoryConfig, complete: AsyncCompletion | Completion, *,
                       apply: bool = True, today: date | None = None) -> ConsolidationReport:
    """:func:`consolidate` in an event loop (``complete`` async, or plain)."""
    config, today = _config(memory), _day(today)
    for _ in range(_ATTEMPTS):
        sweep = await asyncio.to_thread(_prepare, config, today)
        if not sweep.candidates:
            return _report(sweep, Plan(sweep.memory_text, "none"), [], applied=False)
        answer = await _aask(complete, sweep.prompt)
        report = await asyncio.to_thread(_finish, sweep, answer, apply)
        if report is not None:
            return report
    return await asyncio.to_thread(_changed_report, config, today)


def _last_written(folder: Path, current: str) -> tuple[Path, dict[str, Any]]:
    """The newest preimage of a change that was written. The preimage of a sweep killed before its
    write (MEMORY.md still reads as its ``before``, not as its ``after``) is removed."""
    for path in sorted(folder.glob("*.json"), key=_written_at, reverse=True) if folder.is_dir() else []:
        record = json.loads(path.read_text(encoding="utf-8"))
        if digest(current) != record["after_sha256"] and digest(current) == digest(record["before"]):
            path.unlink(missing_ok=True)
            continue
        return path, record
    raise OpenClawMemoryError(f"nothing to undo: no consolidation preimage in {folder}")


def undo(memory: MemoryIndex | MemoryConfig, *, force: bool = False) -> Path:
    """Restore MEMORY.md as it was before the last applied sweep (or forget) and note it in
    ``DREAMS.md``; returns the preimage used.

    Refuses (OpenClawMemoryError) when there is nothing to undo, or when MEMORY.md changed since
    that sweep wrote it, unless ``force`` (the changes since are then lost)."""
    config = _config(memory)
    workspace = config.resolved_workspace()
    with _preimages_locked(config):
        path, record = _restore_last(config, workspace, force)
    append_memory(workspace, _DREAMS, f"\n## Undone {_stamp(config)}\n\n- MEMORY.md restored as it was before the "
                                      f"change of {record.get('at', 'the last sweep')}\n", allowed={_DREAMS})
    return path


def _restore_last(config: MemoryConfig, workspace: Path, force: bool) -> tuple[Path, dict[str, Any]]:
    """MEMORY.md restored from the last written preimage, which is marked undone; that preimage and its record."""
    current = _read_memory(workspace)
    path, record = _last_written(_preimages(config), current)
    if digest(current) != record["after_sha256"] and not force:
        raise OpenClawMemoryError(
            "MEMORY.md changed after the last consolidation wrote it; undoing would lose those changes. "
            "Review it, then undo with force=True (CLI: --force) to restore the preimage anyway")
    try:
        rewrite_memory(workspace, current, record["before"])
    except MemoryChanged:
        raise OpenClawMemoryError("MEMORY.md changed while undoing; nothing was restored, try again") from None
    path.rename(path.with_suffix(".undone"))
    return path, record


def forget(memory: MemoryIndex | MemoryConfig, what: str) -> int:
    """Forget a memory: ``what`` is its text or its source (``memory/2026-11-26.md#L3-L3``). The
    entries of MEMORY.md that hold that text or cite that source are removed (a preimage is kept,
    so :func:`undo` brings them back), and the source and text are recorded, with the sources the
    removed entries cite, so no later sweep promotes them again. Returns how many MEMORY.md
    entries were removed."""
    config = _config(memory)
    source, text = resolve(config, what)
    forgotten = forgotten_set(state_dir(config))
    forgotten.add(source, text)
    removed = 0
    preimages: list[Path] = []
    cited: set[str] = set()

    def change(before: str) -> str | None:  # under MEMORY.md's lock: no edit or append in between
        nonlocal removed
        after, removed = without(before, source, text)
        if not removed:
            return None
        preimages.append(_save_preimage(config, before, after))
        cited.update(source_refs(before) - source_refs(after))  # the notes of a cut entry, say
        return after

    try:
        with _preimages_locked(config):
            edit_memory(config.resolved_workspace(), change, rel=_MEMORY)
    except BaseException:
        for preimage in preimages:
            preimage.unlink(missing_ok=True)
        raise
    for reference in sorted(cited - {source}):
        forgotten.add(reference, None)
    return removed

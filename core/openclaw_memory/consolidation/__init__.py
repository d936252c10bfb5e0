"""Consolidation ("dreaming"): recent daily notes promoted into ``MEMORY.md`` with the user's own
model, safely.

A sweep collects candidate lines from the recent daily notes (each grounded as ``path#Lx-Ly``),
keeps those the searches recalled enough (:mod:`~openclaw_memory.retrieval.recall_signals`), asks the
model for decisions (add / merge / supersede / skip, as JSON) and applies them with bounded,
sourced entries, within a loss limit and a size budget (else append-only). It stores a preimage
before it writes, replaces MEMORY.md atomically only if nobody edited it meanwhile, and
summarises the change in ``DREAMS.md``. :func:`undo` restores the preimage.

The model is any ``str -> str`` function (:data:`Completion`) or its async twin; the adapters
turn a LangChain chat model or a LlamaIndex LLM into one.
"""

from openclaw_memory.consolidation.candidates import Candidate, GateCounts
from openclaw_memory.consolidation.decisions import Decision, InvalidDecisions
from openclaw_memory.retrieval.recall_signals import RecallSignals, RecallStats, record_recalls
from openclaw_memory.consolidation.sweep import (
    AsyncCompletion,
    Completion,
    ConsolidationReport,
    aconsolidate,
    consolidate,
    forget,
    undo,
)

__all__ = [
    "AsyncCompletion",
    "Candidate",
    "Completion",
    "ConsolidationReport",
    "Decision",
    "GateCounts",
    "InvalidDecisions",
    "RecallSignals",
    "RecallStats",
    "aconsolidate",
    "consolidate",
    "forget",
    "record_recalls",
    "undo",
]

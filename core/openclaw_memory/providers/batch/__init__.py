"""Vendor batch APIs (OpenAI, Gemini, Voyage) for indexing embeddings.

* :mod:`.embed`: :func:`embed_for_index` chooses between a vendor batch API and normal batched
  requests; :class:`BatchState` is what status reports about batch mode.
* :mod:`.common`: errors, options, JSONL and polling shared by the runners.
* :mod:`.openai`, :mod:`.gemini`, :mod:`.voyage`: one runner per vendor, imported only when used.
"""

from __future__ import annotations

from openclaw_memory.providers.batch.embed import BatchState, embed_for_index, supports_batch_api

__all__ = ["BatchState", "embed_for_index", "supports_batch_api"]

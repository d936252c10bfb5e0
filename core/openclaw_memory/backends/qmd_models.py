"""Whether QMD has the GGUF models a search mode needs, without starting QMD (which would try to download
a missing one from its model hub: minutes at best, forever where the hub is unreachable)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["command_env", "missing_models"]

# The GGUF models QMD 2.x loads (its defaults, overridden by these environment variables): the vector modes need
# the embedding model, `query` also the reranker and the query-expansion model.
_MODEL_DEFAULTS = {
    "QMD_EMBED_MODEL": "hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf",
    "QMD_RERANK_MODEL": "hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf",
    "QMD_GENERATE_MODEL": "hf:tobil/qmd-query-expansion-1.7B-gguf/qmd-query-expansion-1.7B-q4_k_m.gguf",
}
_MODELS_NEEDED = {"search": (), "vsearch": ("QMD_EMBED_MODEL",),
                  "query": ("QMD_EMBED_MODEL", "QMD_RERANK_MODEL", "QMD_GENERATE_MODEL")}


def missing_models(search_mode: str, env: dict[str, str], models_dir: Path) -> list[str]:
    """The models ``search_mode`` needs that are neither in QMD's model cache ``models_dir`` (a file whose
    name contains the model's file name, as QMD looks for it) nor, for a model given as a path, on disk."""
    try:
        cached = [e.name for e in os.scandir(models_dir) if e.is_file() and e.stat().st_size > 0]
    except OSError:
        cached = []
    missing = []
    for key in _MODELS_NEEDED[search_mode]:
        model = env.get(key) or _MODEL_DEFAULTS[key]
        if model.startswith("hf:"):
            file_name = model.rsplit("/", 1)[-1]
            if not any(file_name in name for name in cached):
                missing.append(file_name)
        elif not Path(model).expanduser().is_file():
            missing.append(model)
    return missing


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def command_env(argv: Sequence[str], env: dict[str, str]) -> dict[str, str]:
    """``env`` with the ``NAME=value`` assignments of a command that starts with ``env``
    (``env QMD_EMBED_MODEL=/models/embed.gguf qmd``): the environment QMD itself runs with."""
    if not argv or os.path.basename(argv[0]) != "env":
        return env
    out = dict(env)
    for arg in argv[1:]:
        if not _ASSIGNMENT.match(arg):
            break
        name, _, value = arg.partition("=")
        out[name] = value
    return out

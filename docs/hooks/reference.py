"""MkDocs hook: the configuration and CLI references, generated from the code at build time.

``<!-- config-reference -->`` in a page becomes one table per configuration section, read from the pydantic
models of :mod:`openclaw_memory.config` (keys, types, defaults) and their ``#:`` comments and docstrings, so
the reference cannot drift from what the library accepts.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticUndefined

CONFIG_MARKER = "<!-- config-reference -->"


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """The ``#:`` comment lines above each field of ``model``, joined into one paragraph per field."""
    source = textwrap.dedent(inspect.getsource(model))
    lines = source.splitlines()
    found: dict[str, str] = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            above: list[str] = []
            row = node.lineno - 2
            while row >= 0 and lines[row].strip().startswith("#:"):
                above.insert(0, lines[row].strip()[2:].strip())
                row -= 1
            if above:
                found[node.target.id] = " ".join(above)
    return found


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _type_name(annotation: Any) -> str:
    text = str(annotation).replace("typing.", "").replace("pathlib.", "").replace("NoneType", "None")
    text = text.replace("pydantic.types.", "")
    if isinstance(annotation, type):
        text = annotation.__name__
    return text.replace("|", "\\|")


def _default(info: Any) -> str:
    if info.default_factory is not None:
        value = info.default_factory()
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if value is None:
        return "unset"
    return f"`{value!r}`".replace("|", "\\|")


def _markdown(text: str) -> str:
    """Docstring text as Markdown: Sphinx roles become code spans."""
    return re.sub(r":(?:mod|func|class|meth|attr|data):`~?([^`]+)`", r"`\1`", text)


def _cell(text: str) -> str:
    return _markdown(" ".join(text.split())).replace("|", "\\|")


def _sections(model: type[BaseModel], prefix: str = "") -> list[tuple[str, type[BaseModel]]]:
    found = [(prefix, model)]
    for name, info in model.model_fields.items():
        nested = _model_of(info.annotation)
        if nested is not None:
            found += _sections(nested, f"{prefix}{to_camel(name)}.")
    return found


def config_reference() -> str:
    """Markdown: one table per section of :class:`openclaw_memory.config.MemoryConfig`."""
    from openclaw_memory.config import MemoryConfig

    parts: list[str] = []
    for prefix, model in _sections(MemoryConfig):
        title = prefix.rstrip(".") or "top level"
        doc = _markdown(inspect.getdoc(model) or "")
        comments = _comments(model)
        rows = ["| key (`snake_case`) | type | default | notes |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            if _model_of(info.annotation) is not None:
                continue
            spelled = info.alias or to_camel(name)
            key = f"`{prefix}{spelled}`" + (f" (`{name}`)" if spelled != name else "")
            rows.append(f"| {key} | {_type_name(info.annotation)} | {_default(info)} | {_cell(comments.get(name, ''))} |")
        if len(rows) == 2:
            continue
        parts.append(f"### `{title}`\n\n{doc}\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if CONFIG_MARKER in markdown:
        markdown = markdown.replace(CONFIG_MARKER, config_reference())
    return markdown


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    """The benchmark plot beside the Benchmarks page, which includes ``bench/results/latest.md`` as written."""
    from pathlib import Path

    from mkdocs.structure.files import File

    results = Path(config["config_file_path"]).parent / "bench" / "results"
    if (results / "latency.png").is_file():
        files.append(File("latency.png", str(results), config["site_dir"], config["use_directory_urls"]))
    return files

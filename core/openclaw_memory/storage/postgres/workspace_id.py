"""The identity of a workspace's copy: a random id in a small file at the workspace's root.

A namespace on the server records the id of the workspace it indexes. Hosts sharing one volume read
the same file; a host with its own copy of the workspace at the same path has none (or another), so
it cannot undo the other copy's index unnoticed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from pathlib import Path

from openclaw_memory.files.safe_fs import open_file, read_file

__all__ = ["WORKSPACE_ID_FILE", "read_workspace_id", "workspace_id"]

log = logging.getLogger(__name__)

#: the file at the workspace's root holding its id (one line)
WORKSPACE_ID_FILE = ".openclaw-memory-workspace-id"
_MAX_BYTES = 200


def read_workspace_id(workspace: str | os.PathLike[str]) -> str | None:
    """The id of the workspace copy at ``workspace``, or None when it has none (or it cannot be read)."""
    try:
        found = read_file(workspace, WORKSPACE_ID_FILE, limit=_MAX_BYTES)
    except OSError:
        return None
    if found is None:
        return None
    text = found[1].decode("utf-8", "replace").strip()
    return text or None


def workspace_id(workspace: str | os.PathLike[str]) -> str | None:
    """The id of the workspace copy at ``workspace``, created when it has none; None when the workspace
    cannot be written (a read-only mount: then no identity is checked)."""
    found = read_workspace_id(workspace)
    if found is not None:
        return found
    new = uuid.uuid4().hex
    try:
        fd = open_file(Path(workspace), WORKSPACE_ID_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:  # another process made it first
        return read_workspace_id(workspace)
    except OSError as exc:
        log.info("cannot record the workspace id in %s (%s): copies of it are not told apart", workspace, exc)
        return None
    with contextlib.closing(os.fdopen(fd, "w", encoding="utf-8")) as fh:
        fh.write(new + "\n")
    return new

"""A thread that swaps a file for a symlink to outside the workspace, and helpers for the race tests."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


SECRET = "OUTSIDESECRET"


RUN_S = float(os.environ.get("OPENCLAW_RACE_SECONDS", "2.5"))


@contextmanager
def fast_switching() -> Iterator[None]:
    """Switch threads every 10 µs (not 5 ms) so the swapper interleaves with the checks."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


class Swapper(threading.Thread):
    """Swap ``target`` (a directory) for a symlink to ``outside`` and back, in a loop, until stopped.

    When the directory cannot be renamed back (something made a new one meanwhile), it stays
    inside the workspace under its temporary name and the loop goes on with the new one.
    """

    def __init__(self, target: Path, outside: Path, dwell: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.target, self.outside, self.dwell = target, outside, dwell
        self.stop = threading.Event()
        self.swaps = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            i = 0
            while not self.stop.is_set():
                i += 1
                away = self.target.with_name(f"{self.target.name}.away{i}")
                try:
                    os.rename(self.target, away)
                except FileNotFoundError:
                    os.makedirs(self.target, exist_ok=True)
                    continue
                try:
                    os.symlink(self.outside, self.target)
                    self.swaps += 1
                    time.sleep(self.dwell)  # how long the symlink stays in place
                    os.unlink(self.target)
                except FileExistsError:
                    pass  # something made a new directory there meanwhile
                finally:
                    try:
                        os.rename(away, self.target)
                    except OSError:
                        pass  # a new directory took its place; `away` stays inside the workspace
                time.sleep(self.dwell)  # and how long the directory stays
        except BaseException as exc:  # noqa: BLE001  (surfaced by the test)
            self.error = exc

    def __enter__(self) -> Swapper:  # noqa: PYI034
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.join(10)
        if self.target.is_symlink():
            self.target.unlink()
        if self.error is not None:
            raise self.error


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


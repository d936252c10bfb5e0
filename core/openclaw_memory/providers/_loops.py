"""Async SDK clients kept one per event loop, and closed from any thread.

An async HTTP client's pooled connections belong to the event loop that opened them: used from another loop
(a second ``asyncio.run``) they fail with "Event loop is closed", and only a coroutine run on their own loop
closes them. :class:`LoopClients` makes a client for each running loop, closes it when ``asyncio.run`` ends
that loop, and closes them all in :meth:`close` (from any thread) or :meth:`aclose`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["LoopClients", "close_here", "close_soon", "run_on_own_loop", "running_loop"]

_T = TypeVar("_T")

log = logging.getLogger(__name__)

#: how long :meth:`LoopClients.close` waits for a loop running in another thread to close its client
CLOSE_WAIT_SECONDS = 5.0

_pending: set[asyncio.Task[Any]] = set()  # tasks started here (closes, guards' first steps), kept until done


def running_loop() -> asyncio.AbstractEventLoop | None:
    """This thread's running event loop, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def close_soon(closing: Callable[[], Awaitable[Any]], loop: asyncio.AbstractEventLoop, what: str) -> None:
    """Run the coroutine ``closing()`` on ``loop``: awaited to its end when ``loop`` runs in another thread (at most
    :data:`CLOSE_WAIT_SECONDS`) or is idle, scheduled when it is this thread's running loop; nothing when it is
    closed (no coroutine can run there any more: its sockets are freed by the garbage collector)."""
    if loop.is_closed():
        return
    here = running_loop()
    try:
        if loop is here:
            task: asyncio.Task[Any] = loop.create_task(closing())  # type: ignore[arg-type]
            _pending.add(task)
            task.add_done_callback(_pending.discard)
        elif loop.is_running():
            coroutine: Any = closing()
            future: concurrent.futures.Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, loop)
            future.result(timeout=CLOSE_WAIT_SECONDS)
        elif here is None:
            loop.run_until_complete(closing())
    except Exception as exc:  # noqa: BLE001 - closing is best effort
        log.debug("closing %s failed: %s", what, exc)


def close_here(closing: Callable[[], Awaitable[Any]], what: str) -> None:
    """Run the coroutine ``closing()`` from this thread: scheduled on its running loop, else to its end on a loop of
    its own (the thread's current event loop, which ``asyncio.run`` would unset, stays as it is)."""
    here = running_loop()
    if here is not None:
        close_soon(closing, here, what)
        return
    try:
        run_on_own_loop(closing())
    except Exception as exc:  # noqa: BLE001 - closing is best effort
        log.debug("closing %s failed: %s", what, exc)


async def _awaited(awaitable: Awaitable[_T]) -> _T:
    return await awaitable


def run_on_own_loop(awaitable: Awaitable[_T]) -> _T:
    """``awaitable``'s result, run to its end from sync code (no loop running in this thread) on a new loop, as
    ``asyncio.run`` does (tasks left are cancelled, async generators and the default executor shut down), but
    leaving the thread's current event loop as it is: ``asyncio.run`` unsets it, and a caller that had set one
    (Jupyter, a LangChain app) finds ``asyncio.get_event_loop()`` failing after."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_awaited(awaitable))
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


class LoopClients:
    """One client per running event loop, made by ``factory`` on first use in that loop; ``closer(client)`` is
    the coroutine that closes one."""

    def __init__(self, factory: Callable[[], Any], closer: Callable[[Any], Awaitable[Any]], what: str) -> None:
        self._factory = factory
        self._closer = closer
        self._what = what
        self._clients: dict[asyncio.AbstractEventLoop, Any] = {}
        self._guards: dict[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = {}
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The running loop's client (RuntimeError outside a running loop)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for old in [known for known in self._clients if known.is_closed()]:
                # its client was closed at its loop's end (asyncio.run); else the garbage collector frees its sockets
                del self._clients[old]
                self._guards.pop(old, None)
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = self._factory()
                self._guards[loop] = self._closed_at_shutdown(client)
        return client

    def _closed_at_shutdown(self, client: Any) -> AsyncGenerator[None, None]:
        """An async generator of the running loop whose end closes ``client``: ``asyncio.run`` closes its loop's
        async generators before closing the loop (``shutdown_asyncgens``), while the client's connections can still
        be closed there. Kept referenced until the client is dropped."""

        async def until_shutdown() -> AsyncGenerator[None, None]:
            try:
                yield
            finally:
                try:
                    await self._closer(client)
                except Exception as exc:  # noqa: BLE001 - closing is best effort
                    log.debug("closing %s failed: %s", self._what, exc)

        guard = until_shutdown()
        started = asyncio.ensure_future(guard.__anext__())  # registered with the loop; run to its yield
        _pending.add(started)
        started.add_done_callback(_pending.discard)
        return guard

    def _take_all(self) -> dict[asyncio.AbstractEventLoop, Any]:
        with self._lock:
            clients, self._clients = self._clients, {}
            self._guards = {}  # a dropped guard of a running loop closes its client again there: harmless
        return clients

    def close(self) -> None:
        """Close every loop's client, from any thread (see :func:`close_soon`)."""
        for loop, client in self._take_all().items():
            close_soon(functools.partial(self._closer, client), loop, self._what)

    async def aclose(self) -> None:
        """Close every loop's client; the running loop's is awaited."""
        here = asyncio.get_running_loop()
        clients = self._take_all()
        for loop, client in clients.items():
            if loop is here:
                await self._closer(client)
            elif not loop.is_closed():
                await asyncio.to_thread(close_soon, functools.partial(self._closer, client), loop, self._what)

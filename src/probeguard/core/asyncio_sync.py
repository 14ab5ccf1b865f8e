"""Running a coroutine from synchronous code, wherever that code is called from."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Awaitable[T]], *, thread_name: str = "probeguard-sync") -> T:
    """Run the coroutine ``make()`` to completion in a fresh event loop and return its
    result: in this thread when no loop is running here, else in a helper thread (a running
    loop cannot be re-entered). An exception is re-raised in the caller's thread."""

    async def run() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run())
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(run()))
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    worker = threading.Thread(target=target, name=thread_name)
    worker.start()
    worker.join()
    if error:
        raise error[0]
    return result[0]

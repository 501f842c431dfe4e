"""Child processes that end when their parent dies, however it dies.

The server's search pool and ``tiler worker --concurrency N`` run their work in child processes.
A parent that exits normally stops them, but one killed with SIGKILL (or by the out-of-memory
killer) cannot: its children were reparented to init and lived on, each holding a search's
memory, and multiprocessing's resource tracker lived on with them (it exits when the last
process holding its pipe does). :func:`exit_with_parent` makes a child end with its parent, in
two ways:

* On Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the child when the thread
  that started it ends, at once, even while the child's search holds its GIL in a long numpy
  call. The callers start children only from threads that live as long as their process (the
  event loop, a job worker's thread, the main thread), so that thread's end is the process's.
* Everywhere, a watchdog thread that polls the parent's pid, which also covers a parent killed
  before the child got to call ``prctl``.

Both start before the child imports its work (:func:`run_in_child`): importing the service takes
seconds on a loaded machine, and a child killed-while-importing would otherwise finish the
import first.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import sys
import threading
from typing import Any

#: How often the watchdog checks that the parent is alive.
PARENT_POLL_S = 0.5
#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``.
_PR_SET_PDEATHSIG = 1


def _kill_with_parent_thread() -> bool:
    """Asks Linux to SIGKILL this process when its parent thread ends; False when unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return bool(prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)


def exit_with_parent(parent_pid: int, poll_s: float = PARENT_POLL_S) -> None:
    """Ends this process soon after its parent dies (call once, early in a child process).

    Exits without cleanup: the parent's resources (pool queues, database claims) are gone or
    lease-bound, and a search's result has nobody to go to.

    Args:
        parent_pid: The parent's pid, as the parent gave it (``os.getpid()`` there). Not this
            process's ``os.getppid()``: a child still importing when its parent was killed would
            read init's pid and never notice.
        poll_s: Interval between the watchdog's checks.
    """
    _kill_with_parent_thread()

    def watch() -> None:
        stop = threading.Event()
        while os.getppid() == parent_pid:
            stop.wait(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="tiler-parent-watch", daemon=True).start()


def run_in_child(parent_pid: int, target: str, *args: Any) -> Any:
    """Watches the parent (:func:`exit_with_parent`), then imports and calls ``target``.

    The entry point (or pool initializer) of a child process: this module is light, so the
    watch starts at once, and the heavy import of the work comes after it.

    Args:
        parent_pid: The parent's pid (``os.getpid()`` in the parent).
        target: ``"module:function"`` to call.
        *args: Its arguments.

    Returns:
        What ``target`` returns.
    """
    exit_with_parent(parent_pid)
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)(*args)

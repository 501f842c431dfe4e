"""Child processes that end when their parent dies, however it dies.

The server's search pool and ``tiler worker --concurrency N`` run their work in child processes.
A parent that exits normally stops them, but one killed with SIGKILL (or by the out-of-memory
killer) cannot: its children were reparented to init and lived on, each holding a search's
memory, and multiprocessing's resource tracker lived on with them (it exits when the last
process holding its pipe does). :func:`exit_with_parent` makes a child watch its parent.

A watchdog thread rather than Linux's ``PR_SET_PDEATHSIG``: that signal fires when the *thread*
that started the child exits, and the pool starts workers from whichever thread submits (the
event loop, a job worker's thread), so a child would die with a thread that merely finished.
"""

from __future__ import annotations

import os
import threading

#: How often a child checks that its parent is alive: the delay before an orphan exits.
PARENT_POLL_S = 0.5


def exit_with_parent(poll_s: float = PARENT_POLL_S) -> None:
    """Ends this process soon after its parent dies (call once, early in a child process).

    Starts a daemon thread that polls the parent's pid; when the process has been reparented
    (the parent died), it exits at once with status 1, without cleanup: the parent's resources
    (pool queues, database claims) are gone or lease-bound, and a search's result has nobody to
    go to.

    Args:
        poll_s: Interval between checks.
    """
    parent = os.getppid()

    def watch() -> None:
        stop = threading.Event()
        while not stop.wait(poll_s):
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="tiler-parent-watch", daemon=True).start()

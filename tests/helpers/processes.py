"""Finding the processes a test started, wherever they ended up (their own process group, a
session of their own, reparented to init after their parent died): by a tag in their
environment, which every descendant inherits."""

from __future__ import annotations

import time
import uuid

import psutil

#: the environment variable that carries a test's tag to every process it starts
TAG_VARIABLE = "SIMDASK_TEST_PROCESS_TAG"


def new_tag() -> dict[str, str]:
    """A fresh tag, as the environment variables to start a process with."""
    return {TAG_VARIABLE: uuid.uuid4().hex}


def tagged(env: dict[str, str]) -> list[str]:
    """``"pid cmdline"`` of every live process (zombies are dead: not listed) whose
    environment holds the tag of ``env`` (:func:`new_tag`)."""
    tag = env[TAG_VARIABLE]
    out = []
    for p in psutil.process_iter():
        try:
            if p.status() == psutil.STATUS_ZOMBIE or p.environ().get(TAG_VARIABLE) != tag:
                continue
            out.append(f"{p.pid} {' '.join(p.cmdline())[:200]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def left_after(env: dict[str, str], timeout: float) -> list[str]:
    """:func:`tagged` once none is left, or what is still left after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := tagged(env)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left

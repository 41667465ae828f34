"""A test that needs a component of the machine (a program, a library, a C function): without
it the test skips locally and FAILS under CI=true with a message naming what is missing and
what installs it (.ci/run installs everything the suite needs). Only the tests that need the
component are affected: never a whole module at collection."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def need(present: bool, what: str, installed_by: str) -> None:
    """Skip (fail under CI=true) unless ``present``; ``what`` is missing, ``installed_by``
    says what provides it."""
    if present:
        return
    message = f"needs {what} ({installed_by})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test: {message}", pytrace=False)
    pytest.skip(message)


def need_module(name: str, installed_by: str) -> ModuleType:
    """The module ``name``, imported; :func:`need` when it cannot be."""
    try:
        return importlib.import_module(name)
    except ImportError:
        need(False, f"the Python module {name}", installed_by)
        raise  # not reached: need() skipped or failed

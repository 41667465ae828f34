"""Example counts of the property tests that guard data (incremental = full build, compaction,
pairing): more under CI=true, where the hypothesis profile ``ci`` (tests/conftest.py) also
derandomises the draw, so CI runs the same examples every time and a failure repeats."""

from __future__ import annotations

import os


def examples(default: int, ci: int) -> int:
    """``SIMDASK_PROPERTY_EXAMPLES`` if set, else ``ci`` under CI=true, else ``default``."""
    given = os.environ.get("SIMDASK_PROPERTY_EXAMPLES")
    if given:
        return int(given)
    return ci if os.environ.get("CI") == "true" else default

"""Progress reporting through a callback (as in fsspec's ``callbacks.py``).

The pipeline calls :class:`Callback` methods; the user interface (a terminal bar, nothing, a
log) is chosen at the edge by passing another subclass. :class:`TqdmCallback` draws one bar
per stage.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["Callback", "RecordingCallback", "TqdmCallback"]


class Callback:
    """Receives progress; the base class ignores everything."""

    def stage(self, name: str, total: int | None) -> None:
        """A stage starts with ``total`` units of work (None: unknown)."""

    def advance(self, n: int = 1) -> None:
        """``n`` units of the current stage are done."""

    def end_stage(self) -> None:
        """The current stage is done."""

    def message(self, text: str) -> None:
        """An informational line (e.g. the dashboard address)."""


class RecordingCallback(Callback):
    """Records calls; for tests and for callers that want the events."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def stage(self, name: str, total: int | None) -> None:
        self.events.append(("stage", (name, total)))

    def advance(self, n: int = 1) -> None:
        self.events.append(("advance", n))

    def end_stage(self) -> None:
        self.events.append(("end", None))

    def message(self, text: str) -> None:
        self.events.append(("message", text))


class TqdmCallback(Callback):
    """One tqdm bar per stage on stderr; messages printed above the bars."""

    def __init__(self, file=None) -> None:
        self.file = file or sys.stderr
        self._bar = None

    def stage(self, name: str, total: int | None) -> None:
        from tqdm import tqdm  # only a progress bar needs it

        self.end_stage()
        self._bar = tqdm(total=total, desc=f"{name:<10}", unit="task", file=self.file, leave=True)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def end_stage(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def message(self, text: str) -> None:
        print(text, file=self.file)

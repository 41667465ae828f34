"""The one stage driver (engine/stage.py) on the session's LocalCluster: every unit collected
once, at most ``limit`` running, a retry returned by ``collect`` waited for, progress per unit,
deterministic task names."""

from __future__ import annotations

import pytest

from simdask.cluster.transfer import Traffic
from simdask.engine.context import RunContext
from simdask.engine.stage import drive
from simdask.progress import RecordingCallback

pytestmark = pytest.mark.integration


def _square(x: int, fail: bool) -> int:
    if fail:
        raise ValueError(f"unit {x} fails on its first try")
    return x * x


class _Squares:
    name = "squares"

    def __init__(self, ctx: RunContext, size: int, limit: int, failing: set[int]):
        self.ctx, self.size, self.limit, self.failing = ctx, size, limit, failing
        self.running = 0
        self.most_running = 0
        self.out: dict[int, int] = {}
        self.keys: list[str] = []

    def _start(self, i: int, fail: bool, suffix: str = ""):
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        key = self.ctx.key("square", b=i, suffix=suffix)
        self.keys.append(key)
        return self.ctx.client.submit(_square, i, fail, key=key)

    def submit(self, i: int):
        return self._start(i, i in self.failing)

    def collect(self, i: int, future):
        self.running -= 1
        if future.status == "error":
            return self._start(i, False, "again")
        assert i not in self.out
        self.out[i] = future.result()
        return None


@pytest.mark.parametrize("limit", [1, 3, 20])
def test_drive_limits_retries_and_reports_progress(client, limit):
    cb = RecordingCallback()
    tag = f"t-drive-{limit}"
    ctx = RunContext(client, 1, tag, cb, Traffic(client), "dask", 2, in_flight=limit)
    stage = _Squares(ctx, 9, limit, failing={0, 4})
    drive(ctx, stage)
    assert stage.out == {i: i * i for i in range(9)}
    assert stage.most_running == min(limit, 9)
    assert cb.events[0] == ("stage", ("squares", 9)) and cb.events[-1] == ("end", None)
    assert sum(n for what, n in cb.events if what == "advance") == 9
    assert f"simdask-square-{tag}-b000004-again" in stage.keys
    assert len(stage.keys) == 11 and stage.keys[0] == f"simdask-square-{tag}-b000000"


def test_drive_no_units(client):
    cb = RecordingCallback()
    ctx = RunContext(client, 1, "t-empty", cb, Traffic(client), "dask", 2, in_flight=4)
    stage = _Squares(ctx, 0, 4, set())
    drive(ctx, stage)
    assert stage.out == {} and cb.events == [("stage", ("squares", 0)), ("end", None)]

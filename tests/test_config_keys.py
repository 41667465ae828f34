"""Every config's ``from_dict`` refuses keys it does not have, naming them and the fields
(one check, :func:`simdask.errors.check_keys`), and reads its own ``to_dict`` back."""

from __future__ import annotations

import pytest

from simdask.alignment.config import AlignConfig
from simdask.config import IndexConfig
from simdask.engine.repeats_run import RepeatsConfig
from simdask.errors import ConfigError, check_keys
from simdask.evidence.pair_view import ViewOptions
from simdask.kernels.merge_policy import MergePolicy

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("cls", [IndexConfig, AlignConfig, RepeatsConfig, ViewOptions, MergePolicy])
def test_from_dict_refuses_unknown_keys_and_reads_its_own_dict(cls):
    d = cls().to_dict()
    assert cls.from_dict(d) == cls()
    with pytest.raises(ConfigError, match=rf"unknown {cls.__name__} keys \['zz_typo'\]"):
        cls.from_dict({**d, "zz_typo": 1})


def test_check_keys_names_the_unknown_and_the_allowed():
    check_keys("X", ["a"], ["a", "b"])
    with pytest.raises(
        ConfigError, match=r"unknown X keys \['c'\]; expected a subset of \['a', 'b'\]"
    ):
        check_keys("X", ["a", "c"], ["b", "a"])

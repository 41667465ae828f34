"""Values read from the catalog that must parse (issue 30 item 9): a stored config, an integer
``meta`` value, a JSON column. One that does not parse is damage (``IndexDamagedError``, exit 5
with a pointer to ``simdask check``), never a ``ValueError`` traceback nor a usage error: a
config that fails its own validation when read back was changed on disk, not by the user.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simdask.config import IndexConfig
from simdask.errors import ConfigError, IndexDamagedError, IndexFormatError, damaged

__all__ = ["meta_int", "stored_config", "stored_int", "stored_json"]


def _damage(catalog: Path, where: str, expected: str, e: Exception) -> IndexDamagedError:
    return damaged(f"the catalog {catalog} is damaged: {where} should be {expected}, found {e}")


def stored_json(raw: str, where: str, catalog: Path) -> Any:
    """``raw`` (the value of ``where``, e.g. ``meta.config``, in the catalog file ``catalog``)
    parsed as JSON."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError) as e:
        raise _damage(catalog, where, "JSON", e) from None


def stored_int(raw: str | None, where: str, catalog: Path, default: int = 0) -> int:
    """``raw`` as an integer (None: ``default``)."""
    if raw is None:
        return default
    try:
        return int(raw)
    except (TypeError, ValueError) as e:
        raise _damage(catalog, where, "an integer", e) from None


def stored_config(raw: str | None, catalog: Path) -> IndexConfig:
    """The index settings stored as JSON in ``meta.config`` (None: there are none)."""
    if raw is None:
        raise IndexFormatError(f"index at {catalog.parent} has no stored config")
    d = stored_json(raw, "meta.config", catalog)
    try:
        if not isinstance(d, dict):
            raise ConfigError(f"expected a JSON object, found {type(d).__name__}")
        return IndexConfig.from_dict(d)
    except (ConfigError, TypeError, ValueError) as e:
        raise _damage(catalog, "meta.config", "valid index settings", e) from None


def meta_int(catalog: Any, name: str, default: int = 0) -> int:
    """The integer ``meta`` value ``name`` of an open :class:`~simdask.storage.catalog.Catalog`
    (missing or empty: ``default``)."""
    return stored_int(catalog.meta(name) or None, f"meta.{name}", catalog.path, default)

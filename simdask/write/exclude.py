"""Boilerplate control (issue 16): the template texts an index excludes, and its exclusions.

``simdask update INDEX SOURCE... --exclude FILE...`` names texts (a thesis template, a licence
text, last year's assignment sheet; any format the extractors read) whose chunks are left out
of every document's chunk set, so of ``|A|`` and of every shared count. The index keeps each
template's name, content hash and extracted text in the catalog (metadata ``exclusions``,
written in the same transaction as the run that starts using them), so that its chunk IDs can
be computed again under any ``k``, ``hash_bits`` and seed (``--rebuild``) and reports can mark
template text. ``--exclude-quotes`` and ``--exclude-bibliography`` are index settings
(:class:`~simdask.config.IndexConfig`). :func:`index_exclusions` turns both into the
:class:`~simdask.kernels.exclusions.Exclusions` that chunking, queries and reports apply.

No dask here: the reader (``simdask.index``) and the writer (``simdask.writer``) share it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from simdask.config import IndexConfig
from simdask.errors import ConfigError, ExtractionError, SourceError
from simdask.ingest.extract import extract_text
from simdask.ingest.sources import content_hash
from simdask.kernels.exclusions import Exclusions, template_chunk_ids

__all__ = [
    "META_NAME",
    "Template",
    "index_exclusions",
    "read_templates",
    "same_exclusions",
    "templates_from_meta",
    "templates_to_meta",
]

#: the catalog metadata holding the templates (JSON)
META_NAME = "exclusions"


@dataclass(frozen=True)
class Template:
    """One excluded text: the file name it was read from, the xxh3-128 hash of its bytes, and
    its extracted text."""

    name: str
    content_hash: str
    text: str


def read_templates(paths: Iterable[str | os.PathLike]) -> tuple[Template, ...]:
    """Read and extract the template files (sorted by name; the same file twice counts once).

    Raises :class:`SourceError` for a file that is missing or cannot be read or extracted,
    naming it: an exclusion that silently failed would leave the template counted."""

    out: dict[str, Template] = {}
    for p in paths:
        path = os.fspath(p)
        try:
            with open(path, "rb") as f:
                data = f.read()
            text = extract_text(data, os.path.basename(path), 0)
        except OSError as e:
            raise SourceError(
                f"--exclude {path!r}: expected a readable file, found {type(e).__name__}: {e}"
            ) from e
        except ExtractionError as e:
            raise SourceError(f"--exclude {path!r}: no text extracted ({e.kind}: {e})") from e
        digest = content_hash(data)
        out[digest] = Template(os.path.basename(path), digest, text)
    return tuple(sorted(out.values(), key=lambda t: (t.name, t.content_hash)))


def templates_to_meta(templates: Iterable[Template]) -> str:
    """The catalog metadata value for ``templates`` (JSON)."""
    return json.dumps({"templates": [asdict(t) for t in templates]}, sort_keys=True)


def templates_from_meta(value: str | None) -> tuple[Template, ...]:
    """The templates of a metadata value (None: an index without any)."""
    if not value:
        return ()
    try:
        return tuple(Template(**t) for t in json.loads(value)["templates"])
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(
            f"catalog metadata {META_NAME!r}: expected {{'templates': [...]}}, found {value[:80]!r}"
        ) from e


def index_exclusions(config: IndexConfig, templates: Iterable[Template]) -> Exclusions:
    """The :class:`Exclusions` of an index with ``config`` and ``templates`` (the templates'
    chunk IDs computed under the index's ``k``, ``hash_bits`` and seed)."""
    texts = [t.text for t in templates]
    ids = template_chunk_ids(texts, config.k, config.hash_bits, config.seed)
    return Exclusions(config.exclude_quotes, config.exclude_bibliography, ids)


def same_exclusions(
    a: IndexConfig, ta: Iterable[Template], b: IndexConfig, tb: Iterable[Template]
) -> bool:
    """Whether two settings and template lists exclude the same (compared by content)."""
    flags = all(getattr(a, n) == getattr(b, n) for n in IndexConfig.EXCLUSION_SETTINGS)
    return flags and sorted(t.content_hash for t in ta) == sorted(t.content_hash for t in tb)

"""A report of a pair for people: both percentages in words, the share of each text in the
aligned passages, and the passages with their kind, a few words of each and where they are
(``simdask report A B`` without options)."""

from __future__ import annotations

from typing import Any

from simdask.evidence.pair_view import coverage_sentence
from simdask.kernels.words import WORD_PATTERN
from simdask.read.review import review_lines
from simdask.read.undirected_pairs import counted, holds

__all__ = ["format_report", "snippet"]

#: passages shown in the summary (``--format json`` lists all)
SHOWN_PASSAGES = 10


def snippet(text: str, start: int, end: int, head: int = 6, tail: int = 4) -> str:
    """``"first words of the passage ... its last words"`` (all of it when short)."""
    found = WORD_PATTERN.findall(text[start:end])
    if len(found) <= head + tail:
        return " ".join(found)
    return " ".join(found[:head]) + " ... " + " ".join(found[-tail:])


def _where(start: int, end: int, size: int) -> str:
    """A position for people: ``at 12-40 %`` of the text (characters)."""
    if size <= 0:
        return "at 0 %"
    lo, hi = 100 * start // size, -(-100 * end // size)
    return f"{lo}-{min(hi, 100)} %"


def format_report(rep: dict[str, Any], a_text: str, b_text: str, k: int = 5) -> str:
    """The human summary of a report (as :meth:`Index.report <simdask.index.Index.report>`
    returns it) of the texts ``a_text`` (``rep["doc"]``) and ``b_text`` (``rep["other"]``);
    ``k``: the index's words per chunk."""
    a, b = rep["doc"], rep["other"]
    passages = rep["passages"]
    lines = [f"{a} and {b}", "  " + holds(a, b, rep["similarity"], rep["reverse_similarity"])]
    cover = coverage_sentence(rep)
    if cover is not None:
        lines.append(f"  {cover}")
    lines.append(
        f"  {counted(rep['shared'], 'shared chunk')} (a chunk is a run of {k} words, in any "
        "order); "
        f"{len(passages)} {'' if cover is not None else 'exact '}matching "
        f"passage{'' if len(passages) == 1 else 's'}" + (":" if passages else ".")
    )
    for i, p in enumerate(passages[:SHOWN_PASSAGES], 1):
        kind = f" ({p['kind']})" if p.get("kind") else ""
        lines.append(
            f"  {i}. {p['words']} words, at {_where(p['doc_start'], p['doc_end'], len(a_text))}"
            f" of {a} and {_where(p['other_start'], p['other_end'], len(b_text))} of {b}{kind}:"
        )
        lines.append(f'     "{snippet(a_text, p["doc_start"], p["doc_end"])}"')
    if len(passages) > SHOWN_PASSAGES:
        lines.append(
            f"  ... and {len(passages) - SHOWN_PASSAGES} more passages "
            "(--format json lists all, --html shows them side by side)"
        )
    if rep.get("passages_note"):
        lines.append(f"  ({rep['passages_note']})")
    if rep.get("passages_truncated"):
        lines.append("  (very repetitive text: the shortest passages were left out)")
    if rep.get("review"):  # who was first, the decision kept (issue 31)
        lines += [f"  {line}" for line in review_lines(rep["review"], a, b)]
    return "\n".join(lines)

"""A term's archive as a teacher has it (issue 31), generated: last year's essays and a thesis,
this term's essays, in every format simdask reads (.txt .docx .odt .pdf .html .rtf); every essay
starts with the same assignment sheet, quotes a sentence in quotation marks and ends with a
reference list; PDFs carry page footers ("Page 2/3"). Both years keep their essays in a
folder called ``submissions`` (``2025/submissions``, ``2026/submissions``).

Planted in this term's essays: a verbatim copy of last year's essay of the same file name, a
copied section, a light and a heavy paraphrase, a short essay taken from the thesis, and one
essay copied from three sources. :data:`PLANTED` says which is which.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.documents import docx_bytes, html_bytes, odt_bytes, pdf_bytes, wrap
from tests.helpers.made_up_words import FUNCTION_WORDS, SYLLABLES
from tests.helpers.paraphrase import disguise

#: the first 20 syllables (the term's words were drawn from these)
_SYLLABLES = SYLLABLES[:20]

#: ~2,900 made-up content words (two or three syllables), drawn with Zipf frequencies: text
#: whose sentences share words as real essays do, so that a paraphrase is still recognisable
#: (a 40-word vocabulary makes every sentence look like every other)
_WORDS = sorted({"".join(random.Random(i).choices(_SYLLABLES, k=2 + i % 2)) for i in range(6000)})
random.Random(0).shuffle(_WORDS)
_WEIGHTS = [1.0 / (r + 1) ** 1.05 for r in range(len(_WORDS))]


def prose(n_words: int, seed: int = 0) -> str:
    """Sentences of ``n_words`` words: Zipf-distributed made-up content words with function
    words between them, deterministic by ``seed``."""
    rng = random.Random(seed)
    out, sentence = [], []
    for i in range(n_words):
        pool = FUNCTION_WORDS if rng.random() < 0.35 else None
        sentence.append(rng.choice(pool) if pool else rng.choices(_WORDS, _WEIGHTS)[0])
        if len(sentence) >= rng.randint(8, 18) or i == n_words - 1:
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    return " ".join(out)


#: the assignment sheet every essay starts with (to be excluded as a template)
SHEET = (
    "Assignment three, autumn term. Write an essay of about five hundred words on the history "
    "of a technology of your choice. Explain how it changed the work of ordinary people, cite "
    "every source you use, put quotations in quotation marks and list your references at the "
    "end. Essays are due on the last Friday of November and are checked for text reuse."
)
#: the sentence every essay quotes (in quotation marks)
QUOTE = (
    "Any sufficiently advanced technology is indistinguishable from magic, and every "
    "generation rediscovers this with its own machines"
)


def references(seed: int) -> list[str]:
    """A reference list, a heading and one paragraph per entry (excluded with
    ``--exclude-bibliography``)."""
    return [
        "References",
        f"Smith, J. ({2000 + seed % 20}). A History of Printing. Oxford University Press.",
        "Brown, K. (2021). Railways and Time. Cambridge University Press.",
        "Clarke, A. (1973). Profiles of the Future. Harper and Row.",
    ]


def essay_parts(body: list[str], seed: int) -> list[str]:
    """An essay's paragraphs: the sheet, the body with a quotation, the references."""
    quoted = f"As one writer put it, “{QUOTE}.” {prose(40, seed=seed + 500)}"
    return [SHEET, body[0], quoted, *body[1:], *references(seed)]


def rtf_bytes(text: str) -> bytes:
    """``text`` as a small RTF document (``\\uN?`` for non-ASCII characters)."""
    body = "".join(c if ord(c) < 128 else f"\\u{ord(c)}?" for c in text).replace("\n", r"\par ")
    return (
        r"{\rtf1\ansi\deff0{\fonttbl{\f0\fswiss Helvetica;}}\f0\pard " + body + r"\par}"
    ).encode()


def footer_pdf(paragraphs: list[str], lines_per_page: int = 34) -> bytes:
    """A PDF of ``paragraphs`` with a footer line "Page i/n" on every page."""
    lines: list[str] = []
    for p in paragraphs:  # the PDF's core font has no curly quotes
        lines += [*wrap(p.replace("“", '"').replace("”", '"')), ""]
    pages = [lines[i : i + lines_per_page] for i in range(0, len(lines), lines_per_page)]
    n = len(pages)
    return pdf_bytes([[*page, *[""] * (lines_per_page - len(page) + 2), f"Page {i + 1}/{n}"]
                      for i, page in enumerate(pages)])  # fmt: skip


def write(path: Path, paragraphs: list[str]) -> None:
    """Write ``paragraphs`` in the format of ``path``'s suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = path.suffix
    if kind == ".txt":
        path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    elif kind == ".docx":
        path.write_bytes(docx_bytes(paragraphs))
    elif kind == ".odt":
        path.write_bytes(odt_bytes(paragraphs))
    elif kind == ".pdf":
        path.write_bytes(footer_pdf(paragraphs))
    elif kind == ".html":
        path.write_bytes(html_bytes(paragraphs, noise=False))
    elif kind == ".rtf":
        path.write_bytes(rtf_bytes("\n\n".join(paragraphs)))
    else:
        raise ValueError(f"no writer for {kind}")


@dataclass(frozen=True)
class Term:
    """Where the archive was written: ``root`` holds ``2025/`` and ``2026/``."""

    root: Path
    last: Path  # 2025/submissions
    thesis_dir: Path  # 2025/theses
    now: Path  # 2026/submissions


#: this term's planted copies: (key, case, source key); keys with --key-prefix 2025/ or 2026/
PLANTED = (
    ("2026/submissions/smith.docx", "verbatim", "2025/submissions/smith.docx"),
    ("2026/submissions/jones.odt", "copied section", "2025/submissions/taylor.txt"),
    ("2026/submissions/brown.html", "light paraphrase", "2025/submissions/wilson.pdf"),
    ("2026/submissions/clark.rtf", "heavy paraphrase", "2025/submissions/moore.docx"),
    ("2026/submissions/short.txt", "taken from a thesis", "2025/theses/thesis.pdf"),
    ("2026/submissions/quinn.docx", "three sources", "2025/submissions/evans.odt"),
)
#: the three sources of quinn.docx
QUINN_SOURCES = (
    "2025/submissions/evans.odt",
    "2025/submissions/hall.html",
    "2025/submissions/king.txt",
)


def _thesis_text() -> list[str]:
    """The thesis's paragraphs after its sheet (six of 300 words)."""
    return [prose(300, seed=300 + i) for i in range(6)]


def short_copy() -> str:
    """What ``short.txt`` takes from the thesis: the first 1,400 characters of its third
    paragraph, which cross the PDF's page break between its pages 2 and 3 (the slice may
    end inside a word)."""
    return _thesis_text()[2][:1400]


def write_term(root: Path) -> Term:
    """Write the archive under ``root`` (see the module docstring)."""
    last, theses, now = (
        root / "2025" / "submissions",
        root / "2025" / "theses",
        root / "2026" / "submissions",
    )
    names = ("smith", "taylor", "wilson", "moore", "evans", "hall", "king", "lee", "young")
    own = {
        n: [prose(140, seed=10 + 2 * i), prose(130, seed=11 + 2 * i)] for i, n in enumerate(names)
    }
    section = {k: prose(170, seed=200 + i) for i, k in enumerate(own)}  # each essay's core
    files = {
        "smith.docx": "smith", "taylor.txt": "taylor", "wilson.pdf": "wilson",
        "moore.docx": "moore", "evans.odt": "evans", "hall.html": "hall", "king.txt": "king",
        "lee.rtf": "lee", "young.pdf": "young",
    }  # fmt: skip
    for i, (file, name) in enumerate(files.items()):
        body = [own[name][0], section[name], own[name][1]]
        write(last / file, essay_parts(body, seed=i))
    thesis_text = _thesis_text()
    write(theses / "thesis.pdf", [SHEET.replace("an essay", "a thesis"), *thesis_text])
    planted = {
        "smith.docx": essay_parts([own["smith"][0], section["smith"], own["smith"][1]], 0),
        "jones.odt": essay_parts([prose(150, seed=60), section["taylor"], prose(120, seed=61)], 30),
        "brown.html": essay_parts(
            [prose(150, seed=62), disguise(section["wilson"], seed=1, swap=0.05),
             prose(120, seed=63)], 31),
        "clark.rtf": essay_parts(
            [prose(150, seed=64), disguise(section["moore"], seed=2, swap=0.2),
             prose(120, seed=65)], 32),
        "short.txt": [SHEET, short_copy()],
        "quinn.docx": essay_parts(
            [section["evans"][:700], section["hall"][:700], section["king"][:700]], 33),
        "park.pdf": essay_parts([prose(150, seed=66), prose(160, seed=67)], 34),
        "reid.txt": essay_parts([prose(150, seed=69), prose(160, seed=70)], 35),
    }  # fmt: skip
    for file, parts in planted.items():
        write(now / file, parts)
    return Term(root, last, theses, now)

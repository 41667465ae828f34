"""Real English paragraphs on unrelated topics, and reworded versions of some, for tests of
the aligned passages: a student's essay that paraphrases two sections of a source among
paragraphs of its own, and a verbatim copy planted at known offsets."""

from __future__ import annotations

import random
from dataclasses import dataclass

from simdask.storage.aligned_tables import AlignJob

#: paragraphs on unrelated topics (written for these tests)
PARAGRAPHS = (
    "The river valley was settled by farmers who drained the marshes and planted barley on "
    "the higher ground. Every spring the floods brought fresh silt to the fields, and the "
    "villages grew along the old banks where the soil stayed dry. Over three centuries the "
    "settlers built mills, bridges and a small harbour, and the valley became the granary of "
    "the whole province.",
    "Photosynthesis turns light into chemical energy inside the chloroplasts of green plants. "
    "The pigment chlorophyll absorbs red and blue light and passes the energy to a chain of "
    "proteins that split water molecules. Oxygen is released as a by-product, while the "
    "captured energy is stored in sugars that the plant uses to grow its roots, stems and "
    "leaves.",
    "Early railway companies competed fiercely for passengers and freight. Each line used its "
    "own timetable and often its own local time, which confused travellers who changed "
    "trains in large cities. The adoption of standard time zones at the end of the century "
    "ended this confusion and made national timetables possible for the first time.",
    "A good sourdough bread needs only flour, water, salt and patience. The starter, a "
    "culture of wild yeasts and lactic bacteria, is fed daily until it doubles within a few "
    "hours. The dough is folded gently during a long rise, shaped by hand and baked in a very "
    "hot oven, which gives the crust its colour and the crumb its open texture.",
    "Glaciers shape mountains more slowly than rivers but far more deeply. As the ice moves "
    "downhill it plucks rocks from the valley floor and grinds them against the walls, "
    "carving the broad U-shaped valleys and steep cirques that climbers admire today. When "
    "the climate warms, the retreating ice leaves behind moraines, lakes and scattered "
    "boulders far from their origin.",
    "The printing press changed the way knowledge spread across Europe. Before it, books were "
    "copied by hand in monasteries and were rare and expensive. Within fifty years of its "
    "invention, printers in hundreds of towns had produced millions of volumes, and ideas "
    "about religion, science and politics travelled faster than any ruler could control.",
    "Honeybees communicate the location of flowers through a dance performed on the "
    "honeycomb. The angle of the dance relative to the vertical shows the direction of the "
    "food source relative to the sun, and the length of the waggle run tells the other bees "
    "how far they must fly. Foragers that follow the dance find the flowers with surprising "
    "accuracy.",
    "Municipal libraries began as reading rooms funded by wealthy donors and trade unions. "
    "They offered newspapers, reference works and a warm place to study for workers who could "
    "not afford books of their own. Later, public funding allowed them to lend books freely, "
    "run programmes for children and, much later, provide access to computers and the "
    "internet.",
)

#: reworded versions of PARAGRAPHS[1] and PARAGRAPHS[4]: synonyms, reordered clauses,
#: inserted and deleted words (a student's light paraphrase)
PARAPHRASES = {
    1: "Inside the chloroplasts of green plants, photosynthesis converts light into chemical "
    "energy. Red and blue light is absorbed by the pigment chlorophyll, which hands the energy "
    "on to a chain of proteins that break water molecules apart. The energy that is captured "
    "is kept in sugars which the plant needs to grow its stems, roots and leaves, and oxygen "
    "is given off as a by-product.",
    4: "Glaciers shape mountains far more deeply than rivers, although more slowly. Moving "
    "downhill, the ice plucks rocks from the floor of the valley and grinds them against its "
    "walls, so that it carves the steep cirques and the broad U-shaped valleys which climbers "
    "admire today. When the climate becomes warmer, the ice retreats and leaves moraines, "
    "lakes and boulders scattered far from where they came from.",
}

#: the essay's own paragraphs (unrelated to the source)
OWN = (
    "My grandmother kept a notebook of every storm that crossed her island, with the date, "
    "the wind and the damage to the fishing boats. Reading it now, I can follow forty years "
    "of weather and see how the village learned to build its houses further from the shore.",
    "Chess clubs in small towns often meet in cafes, where the regular players know each "
    "other's openings by heart. Newcomers are welcomed with a quick game and a cup of coffee, "
    "and within a few months they are arguing about endgames like everyone else.",
    "Learning a second language as an adult is mostly a matter of habit. Ten minutes of "
    "reading every morning, a radio programme on the way to work and a weekly conversation "
    "with a patient friend do more than an expensive course that ends after a month.",
)


@dataclass(frozen=True)
class Paraphrased:
    """An essay paraphrasing two sections of a source: ``spans_a`` / ``spans_b`` are the
    character spans of the reworded sections in the essay and of the originals in the
    source."""

    essay: str
    source: str
    spans_a: tuple[tuple[int, int], ...]
    spans_b: tuple[tuple[int, int], ...]


def _join(parts: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """``parts`` joined by blank lines, with the span of each."""
    text, spans = "", []
    for p in parts:
        if text:
            text += "\n\n"
        spans.append((len(text), len(text) + len(p)))
        text += p
    return text, spans


def paraphrased_pair(in_order: bool = False) -> Paraphrased:
    """The essay (own, paraphrase of 4, own, paraphrase of 1, own: the two sections in the
    other order than in the source; ``in_order``: 1 before 4, as in the source) and the
    source (all of :data:`PARAGRAPHS`)."""
    source, src_spans = _join(list(PARAGRAPHS))
    first, second = (1, 4) if in_order else (4, 1)
    essay, spans = _join([OWN[0], PARAPHRASES[first], OWN[1], PARAPHRASES[second], OWN[2]])
    return Paraphrased(essay, source, (spans[1], spans[3]), (src_spans[first], src_spans[second]))


def verbatim_pair(which: int = 5) -> tuple[str, str, tuple[int, int], tuple[int, int]]:
    """An essay with ``PARAGRAPHS[which]`` copied word for word between two paragraphs of its
    own, the source; and the character spans of the copy in each."""
    source, src_spans = _join(list(PARAGRAPHS))
    essay, spans = _join([OWN[0], OWN[1], PARAGRAPHS[which], OWN[2]])
    return essay, source, spans[2], src_spans[which]


#: English function words a "translated" text drops or inserts
_FUNCTION_WORDS = ("the", "a", "of", "to", "that", "which", "it", "is", "was", "in", "on")


def disguise(text: str, seed: int = 0, swap: float = 0.2) -> str:
    """A disguised copy of ``text``, the obfuscations of PAN's corpora done by a program:
    its sentences shuffled, a ``swap`` share of its words replaced by a "synonym" (the word
    reversed: a word the source never has), and translated style: every fifth word dropped or
    preceded by a function word, neighbouring words exchanged. Deterministic by ``seed``."""
    rng = random.Random(seed)
    sentences = [s.split() for s in text.replace("\n", " ").split(".") if s.strip()]
    rng.shuffle(sentences)
    out: list[str] = []
    for words in sentences:
        ws = [w[::-1] if rng.random() < swap else w for w in words]
        for i in range(0, len(ws) - 1, 7):
            ws[i], ws[i + 1] = ws[i + 1], ws[i]
        styled: list[str] = []
        for i, w in enumerate(ws):
            if i % 5 == 4:
                if rng.random() < 0.5:
                    continue
                styled.append(rng.choice(_FUNCTION_WORDS))
            styled.append(w)
        out.append(" ".join(styled) + ".")
    return " ".join(out)


def totals_jobs() -> tuple[dict, list]:
    """Four texts (a paraphrased pair, a verbatim pair) by location and four totals jobs over
    them, each text in two jobs: ``(texts, jobs)`` for :func:`simdask.engine.totals.
    align_job_batch` (``texts`` given by location, as to workers without the index's files)."""
    p = paraphrased_pair()
    a, b, *_ = verbatim_pair()
    texts = {("p", i, 0): t for i, t in enumerate((p.essay, p.source, a, b))}
    locs = list(texts)
    jobs = [
        AlignJob(1, 2, locs[0], locs[1], first=1),
        AlignJob(1, 3, locs[0], locs[2], first=3),
        AlignJob(2, 4, locs[1], locs[3], first=2),
        AlignJob(3, 4, locs[2], locs[3], first=4),
    ]
    return texts, jobs

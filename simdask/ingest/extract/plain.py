"""Plain text (.txt, .md): byte order marks, UTF-8, and legacy 8-bit encodings by detection.

Order of decisions (DESIGN §3.1, docs/formats.md):

1. A byte order mark decides: UTF-8, UTF-16 LE/BE or UTF-32 LE/BE.
2. NUL bytes without a BOM: BOM-less UTF-16 if most bytes of one parity are NUL and few of
   the other. Otherwise a few stray control bytes (NUL and the other C0 controls that are not
   whitespace, at most :data:`STRAY_SHARE` of the bytes) are dropped, the rest decoded as
   below, and a ``control_bytes`` note says so (the document is indexed); more is binary data.
3. Valid UTF-8 is UTF-8. UTF-8 with a few damaged bytes (a cut-off last character) is
   decoded with U+FFFD in their place; more than that is not UTF-8.
4. Otherwise the detector (charset-normalizer) proposes encodings. For Latin text (few
   bytes >= 0x80, as accented letters in mostly ASCII words), its candidates plus cp1250,
   iso-8859-2 and cp1252 are ranked by :func:`implausibility` (control characters, symbols
   inside words) plus :func:`foreign_letters` (letters no single European alphabet has), so
   that Czech in iso-8859-2 and in cp1250 are told apart: the detector alone often confuses
   them on short texts. Other text takes the detector's first plausible candidate. Text
   that no encoding decodes plausibly is rejected (kind ``encoding``).
5. Decoded text with a few control characters (at most :data:`STRAY_SHARE` of it) loses them,
   with a ``control_bytes`` note; with more it is binary data (kind ``binary``).

Notes: the functions taking ``notes`` append ``(kind, message)`` to it for what they changed
in a document that is still indexed (a warning, listed by ``simdask errors``).
"""

from __future__ import annotations

import codecs
import unicodedata

from simdask.errors import ExtractionError

__all__ = [
    "ALPHABETS",
    "STRAY_SHARE",
    "decode_text",
    "extract_plain",
    "foreign_letters",
    "implausibility",
    "reject_control_heavy",
]

_BOMS = (  # UTF-32 first: its LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: Single-byte encodings always tried for Latin text, in order of preference on a tie.
LATIN_FALLBACKS = ("cp1250", "iso8859_2", "cp1252")
#: Alphabets (non-ASCII lower-case letters) of the languages written in 8-bit Latin code
#: pages; a decoding whose letters no single one of them covers is likely the wrong one.
ALPHABETS = {
    "cs": "áčďéěíňóřšťúůýž",
    "sk": "áäčďéíĺľňóôŕšťúýž",
    "pl": "ąćęłńóśźż",
    "hu": "áéíóöőúüű",
    "de": "äöüß",
    "fr": "àâæçéèêëîïôœùûüÿ",
    "es": "áéíñóúü",
    "pt": "áâãàçéêíóôõú",
    "it": "àèéìíîòóùú",
    "nordic": "åäöæøéðþáíóúý",
    "hr-sl": "čćđšž",
    "ro": "ăâîșşțţ",
    "tr": "çğıöşü",
    "baltic": "āčēģīķļņšūžąęėįų",
}
_WS_CONTROLS = frozenset("\t\n\r\f\v\x1b")
#: the control bytes / characters dropped as stray from text (C0 controls but whitespace)
_CONTROL_BYTES = bytes(b for b in range(32) if chr(b) not in _WS_CONTROLS)
_DROP_CONTROLS = dict.fromkeys(_CONTROL_BYTES)
#: At most this share of a text's bytes (characters) may be stray control bytes: dropped with
#: a note. Random binary data has about 10 % (26 of 256 byte values), executables and images
#: more; web text with a few NUL bytes far less.
STRAY_SHARE = 0.05
_SAMPLE = 1 << 18  # characters scored per candidate encoding
_MAX_COST = 1.0  # mean cost per non-ASCII character above which a decoding is rejected
_LATIN_HIGH_SHARE = 0.5  # at most this share of bytes >= 0x80: Latin text in 8 bits


def implausibility(text: str) -> float:
    """Mean cost per non-ASCII character of a decoded text (0: all plausible).

    Control, unassigned and private-use characters cost 10; a non-ASCII symbol, number or
    punctuation mark costs 3 between two letters and 1 beside one (0 for quotes, brackets
    and dashes, which hug words by nature); an upper-case letter right after a lower-case
    one costs 2. Letters themselves cost nothing here (see :func:`foreign_letters`).
    """
    cost = 0.0
    n = 0
    for i, ch in enumerate(text):
        if ch < "\x80":
            continue
        n += 1
        cat = unicodedata.category(ch)
        if cat[0] == "L":
            if cat == "Lu" and i and unicodedata.category(text[i - 1]) == "Ll":
                cost += 2
        elif cat in ("Cc", "Cn", "Co", "Cs") or (cat == "Cf" and ch != "\ufeff"):
            cost += 10
        elif cat[0] in "PSN":
            before = i > 0 and text[i - 1].isalpha()
            after = i + 1 < len(text) and text[i + 1].isalpha()
            if before and after:
                cost += 3
            elif (before or after) and cat not in ("Pi", "Pf", "Pd", "Ps", "Pe", "Po"):
                cost += 1
    return cost / n if n else 0.0


def foreign_letters(text: str) -> tuple[int, int]:
    """How many distinct non-ASCII letters of ``text`` the best-fitting alphabet of
    :data:`ALPHABETS` lacks (0 for text in one of those languages), and that alphabet's
    place in :data:`ALPHABETS` (earlier ones win a tie: Czech first)."""
    letters = {ch for ch in text.lower() if ch >= "\x80" and ch.isalpha()}
    return min((len(letters - set(a)), i) for i, a in enumerate(ALPHABETS.values()))


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _damaged_utf8(data: bytes) -> str | None:
    """UTF-8 with a few invalid bytes (at most 1 per 100 valid multi-byte characters, or 2,
    and 5 valid ones for each), decoded with U+FFFD for them; None when there are more."""
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    leads = len(data.translate(None, bytes(range(0xC0))))  # bytes that start a multi-byte char
    good = leads - bad
    return text if good >= 5 * bad and bad <= max(2, good // 100) else None


def _latin_like(data: bytes) -> bool:
    """True when few bytes are >= 0x80, as in Latin text with accented letters (Cyrillic or
    Greek in 8 bits and multi-byte East Asian encodings have mostly high bytes)."""
    sample = data[:_SAMPLE]
    high = len(sample) - len(sample.translate(None, bytes(range(0x80, 0x100))))
    return high <= _LATIN_HIGH_SHARE * len(sample)


def _legacy(data: bytes, name: str) -> str:
    try:
        from charset_normalizer import from_bytes  # heavy: only text not in UTF-8 needs it
    except ImportError as e:  # a dependency of simdask itself; only a broken install lacks it
        raise ExtractionError(
            name,
            "missing_dependency",
            "expected the library charset-normalizer to detect legacy encodings, found it is "
            "not installed: pip install charset-normalizer",
        ) from e
    matches = list(from_bytes(data[: 4 * _SAMPLE]))
    if not _latin_like(data):
        for m in matches:
            text = _strict(data, m.encoding)
            if text is not None and implausibility(text[:_SAMPLE]) <= _MAX_COST:
                return text
        raise ExtractionError(
            name,
            "encoding",
            "expected UTF-8, UTF-16 with a byte order mark or a legacy 8-bit encoding; found "
            "bytes that no encoding decodes to plausible text",
        )
    names = list(dict.fromkeys([m.encoding for m in matches] + list(LATIN_FALLBACKS)))
    scored = []
    for rank, enc in enumerate(names):  # scored on a sample, decoded in full only if chosen
        sample = _strict(data[:_SAMPLE], enc) if len(data) > _SAMPLE else None
        sample = sample if sample is not None else _strict(data, enc)
        if sample is not None:
            cost = implausibility(sample)
            foreign, alphabet = foreign_letters(sample)
            scored.append((cost + 0.25 * foreign, alphabet, rank, cost, enc))
    for *_, cost, enc in sorted(scored):
        if cost > _MAX_COST:
            raise ExtractionError(
                name,
                "encoding",
                "expected UTF-8 or a legacy 8-bit encoding, found invalid UTF-8 that no "
                f"encoding decodes to plausible text (best guess {enc}: {cost:.1f} "
                "implausible per non-ASCII character)",
            )
        text = _strict(data, enc)
        if text is not None:
            return text
    raise ExtractionError(
        name, "encoding", "expected text in some encoding, found bytes none decodes"
    )


def _stray_limit(n: int) -> int:
    """How many stray control bytes a text of ``n`` bytes or characters may have."""
    return max(2, int(STRAY_SHARE * n))


def reject_control_heavy(
    text: str, name: str, encoding: str, notes: list[tuple[str, str]] | None = None
) -> str:
    """``text`` without its control characters other than whitespace when they are at most
    :data:`STRAY_SHARE` of it (at least 2 allowed), with a ``control_bytes`` note in
    ``notes``; more: :class:`~simdask.errors.ExtractionError` of kind ``binary``."""
    cleaned = text.translate(_DROP_CONTROLS)
    controls = len(text) - len(cleaned)
    if not controls:
        return text
    if controls > _stray_limit(len(text)):
        raise ExtractionError(
            name,
            "binary",
            f"expected text, found binary data ({controls} control characters in "
            f"{len(text)} characters decoded as {encoding})",
        )
    _note(notes, controls, "control characters", len(text), "characters", encoding)
    return cleaned


def _note(notes, count: int, what: str, total: int, unit: str, encoding: str) -> None:
    if notes is not None:
        notes.append(
            (
                "control_bytes",
                f"warning: dropped {count} stray {what} in {total} {unit} of text "
                f"decoded as {encoding}; the document is indexed without them",
            )
        )


def decode_text(data: bytes, name: str = "<text>", notes: list | None = None) -> str:
    """Decode a text file's bytes (see the module docstring for the order of decisions);
    ``notes`` receives a ``(kind, message)`` for stray control bytes dropped.

    Raises :class:`~simdask.errors.ExtractionError` of kind ``binary`` (NUL bytes or control
    characters over :data:`STRAY_SHARE`) or ``encoding`` (invalid under its BOM, or plausible
    in no encoding).
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(enc)
            except UnicodeDecodeError as e:
                raise ExtractionError(
                    name,
                    "encoding",
                    f"expected {enc.upper()} after its byte order mark, found an invalid "
                    f"sequence at byte {e.start + len(bom)}",
                ) from e
            return reject_control_heavy(text, name, enc, notes)
    nuls = data.count(0)
    controls = 0  # stray control bytes dropped before decoding
    if nuls:
        even, odd = data[0::2].count(0), data[1::2].count(0)
        if len(data) % 2 == 0 and max(even, odd) >= 0.6 * (len(data) // 2) >= 6 * min(even, odd):
            enc = "utf-16-le" if odd > even else "utf-16-be"
            text = _strict(data, enc)
            if text is not None:
                return reject_control_heavy(text, name, enc + " (no byte order mark)", notes)
        cleaned = data.translate(None, _CONTROL_BYTES)
        controls = len(data) - len(cleaned)
        if controls > _stray_limit(len(data)):
            raise ExtractionError(
                name,
                "binary",
                f"expected text, found binary data ({nuls} NUL bytes and {controls - nuls} "
                f"other control bytes in {len(data)} bytes)",
            )
        size, data = len(data), cleaned
    text = _strict(data, "utf-8")
    if text is None:
        text = _damaged_utf8(data)
        enc = "utf-8 (damaged)"
    else:
        enc = "utf-8"
    if text is None:
        text = _legacy(data, name)
        enc = "a legacy encoding"
    if controls:
        _note(notes, controls, f"control bytes ({nuls} NUL)", size, "bytes", enc)
    return reject_control_heavy(text, name, enc, notes)


def extract_plain(data: bytes, name: str = "<text>", notes: list | None = None, limits=None) -> str:
    """The text of a plain text or Markdown file (Markdown is indexed as it is written);
    ``notes``: see :func:`decode_text`. ``limits``
    (:class:`~simdask.ingest.extract.extract_limits.ExtractLimits`): more than ``text_chars``
    characters is ``too_large``."""
    text = decode_text(data, name, notes)
    if limits is not None and len(text) > limits.text_chars:
        raise ExtractionError(
            name,
            "too_large",
            f"expected at most {limits.text_chars:,} characters of text, found {len(text):,}",
        )
    return text

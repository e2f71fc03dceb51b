"""Credential words of other languages and the value after them: "mot de passe: X",
"Passwort ist X", "パスワードは X". The words, verbs and fill words are data
(`secret_rules.LANGUAGES`); here they become patterns, read on the lowercased screening copy.

A value counts when a separator (":", "=", a dash, an arrow) or one of the language's verbs
stands between the word and it, and it looks like a password (letters with digits or
symbols; a quoted value as it is) or, after a secret's word, like a key. A value made of
letters only is a word of the sentence ("das Passwort ist abgelaufen"), and nothing
follows a word that only talks about passwords ("le mot de passe doit être changé").
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from ..secret_rules import LANGUAGES, Language
from .hits import Hit
from .names import judge, kind_of, name_class
from .reading import folded
from .shapes import STRUCT_RANK
from .values import TRAILING, is_path, is_pathlike, looks_like_password

# What stands between a word and its value in every language: a colon, an equals sign, a
# dash or an arrow (the screening copy has already read a fullwidth "：" as ":").
_SEPARATOR = r"(?::|=|—|–|->|=>|→|⇒)"
# A value: optionally quoted, ending at a blank, a quote, or a Chinese, Japanese or Korean
# character (those write the verb or the sentence right after it: "X です", "X입니다").
_CJK = "\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef"
_OPEN = "\"'`“‘„«‹「『"
_VALUE = rf"(?P<open>[{_OPEN}]?)[ \t]?(?P<v>[^\s\"'`“”‘’„«»‹›「」『』{_CJK}]{{1,256}})"


@functools.cache  # the table reads the same few letters thousands of times
def _letter(char: str) -> str:
    """A letter as the lowercased screening copy may show it: Cyrillic "т" stays, but "Т"
    reads Latin "T" (a look-alike), so the pattern takes both."""
    forms = {folded(char).lower()}
    upper = char.upper()
    if len(upper) == 1:
        forms.add(folded(upper).lower())
    escaped = sorted(re.escape(form) for form in forms)
    return escaped[0] if len(escaped) == 1 else f"[{''.join(escaped)}]"


def _word(text: str) -> str:
    return "".join("[ \t-]?" if c in " -" else _letter(c) for c in text)


def _words(field: str) -> list[str]:
    return [w.strip() for w in field.split(",") if w.strip()]


def _alternatives(words: list[str]) -> str:
    return "|".join(_word(w) for w in sorted(words, key=len, reverse=True))


def _tail(language: Language, separators: bool) -> str | None:
    """What may follow one of the language's words: fill, then a separator (group `sep`: an
    assignment) or a verb, then the value. None when nothing may. A pattern's text: each
    costs milliseconds to compile (the value's class of characters is large), so it is
    compiled the first time one of its words is found (`_compiled`), or by `prepare`."""
    gap = "[ \t]+" if language.spaced else "[ \t]*"
    fill_words = _alternatives(_words(language.fill))
    fill = rf"(?:[ \t]+(?:{fill_words})(?:[ \t]+[^\s:=]{{1,30}}){{1,3}}?)?" if fill_words else ""
    verbs = _alternatives(_words(language.verbs))
    ways = []
    if separators:
        then = rf"(?:[ \t]*(?:{verbs})(?![^\W\d_]))?" if verbs else ""  # "пароль — это X"
        # after the closing quote of a key: {"contraseña": "X"}
        ways.append(rf"[\"'`]?[ \t]*(?P<sep>{_SEPARATOR}){then}[ \t]*")
    if verbs:
        ways.append(rf"{gap}(?:{verbs})(?:[ \t]*:)?{gap}")
    return rf"{fill}(?:{'|'.join(ways)}){_VALUE}" if ways else None


# Thread-safe: two threads compiling the same tail at once each get an equal pattern.
_compiled = functools.cache(re.compile)


@dataclass(frozen=True, slots=True)
class _Word:
    """One credential word of one language, ready to run."""

    cls: str  # "password" or "secret"
    pattern: str  # the word, in any case (`_compiled`, as the patterns below)
    tail: str  # what follows it: fill, a separator or a verb, the value (`_compiled`)
    # A word the English reading names too ("password", "Passwort") reads there with a
    # separator; here only with a verb ("la password è X"), unless it ends a compound.
    verb_tail: str | None
    english: bool
    compounds: bool
    spaced: bool


def _stable(char: str) -> str | None:
    """The letter as the lowercased copy shows it, when that is the same in any case."""
    pattern = _letter(char)
    return None if pattern.startswith("[") else re.sub(r"\\(.)", r"\1", pattern)


def _head(word: str) -> str:
    """The first letters of `word` that read the same in any case ("mot" of "mot de passe")."""
    head = ""
    for char in word:
        shown = _stable(char) if char not in " -" else None
        if shown is None:
            break
        head += shown
    return head


def _parts(word: str, size: int) -> dict[str, int]:
    """Each run of `size` letters of `word` that reads the same in any case, and where."""
    shown = "".join(_stable(c) or "\0" if c not in " -" else "\0" for c in word)
    return {
        shown[i : i + size]: i
        for i in range(len(word) - size + 1)
        if "\0" not in shown[i : i + size]
    }


def _anchors(words: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Few literals that find every word: greedily, the part that most words share (of 3
    letters, or 2 for words of two characters such as "密码"), then the next."""
    parts = {w: _parts(w, 3) or _parts(w, 2) for w in words}
    anchors: dict[str, list[tuple[int, str]]] = {}
    left = set(words)
    while left:
        counts: dict[str, int] = {}
        for w in left:
            for part in parts[w]:
                counts[part] = counts.get(part, 0) + 1
        best = max(sorted(counts), key=lambda part: counts[part])
        anchors[best] = [(parts[w][best], w) for w in sorted(left) if best in parts[w]]
        left -= {w for _, w in anchors[best]}
    return anchors


_CYRILLIC = "\u0400-\u04ff"
# A letter of the script a word is written in: a text without one holds none of its words.
_SCRIPT_LETTER = {
    "cyrillic": re.compile(f"[{_CYRILLIC}]"),
    "cjk": re.compile(f"[{_CJK}]"),
    "latin": re.compile("[\u00c0-\u024f]"),  # é, ñ, ö, ł, ş, ø: Latin with marks
}


def _script(word: str) -> str:
    if word.isascii():
        return "ascii"
    return next(s for s, letter in _SCRIPT_LETTER.items() if letter.search(word))


@dataclass(frozen=True, slots=True)
class _Place:
    """Words an anchor finds at the same place in them: `offset` letters after their start,
    which are `head`; `any_word` matches one of them, a cheap test before each is read."""

    offset: int
    head: str
    any_word: str
    words: tuple[_Word, ...]


_Anchors = dict[str, list[_Place]]


def _places(found: list[tuple[int, str]], entries: dict[str, list[_Word]]) -> list[_Place]:
    grouped: dict[tuple[int, str], list[str]] = {}
    for offset, word in found:
        grouped.setdefault((offset, _head(word)), []).append(word)
    places = []
    for (offset, head), words in grouped.items():
        found_here = tuple(entry for word in words for entry in entries[word])
        places.append(_Place(offset, head, _alternatives(words), found_here))
    return places


def _table() -> dict[str, _Anchors]:
    """By script, each anchor with the words it finds and where it stands in them."""
    entries: dict[str, list[_Word]] = {}
    for language in LANGUAGES:
        tail, verb_tail = _tail(language, True), _tail(language, False)
        assert tail is not None  # a separator may always stand there
        for cls, field in (("password", language.passwords), ("secret", language.secrets)):
            for word in _words(field):
                english = name_class(word, "") is not None
                entry = _Word(cls, _word(word), tail, verb_tail, english,
                              language.compounds, language.spaced)  # fmt: skip
                entries.setdefault(word, []).append(entry)
    table: dict[str, _Anchors] = {}
    for script in ("ascii", *_SCRIPT_LETTER):
        words = sorted(w for w in entries if _script(w) == script)
        table[script] = {
            anchor: _places(found, entries) for anchor, found in _anchors(words).items()
        }
    return table


# Built on first use, not at import: importing the gate (every command, `palimpsest serve`
# before its first answer) should not pay for a table only a screened text needs.
_ANCHORS: dict[str, _Anchors] | None = None
_BUILDING = threading.Lock()


def _anchor_table() -> dict[str, _Anchors]:
    global _ANCHORS
    table = _ANCHORS
    if table is None:
        with _BUILDING:  # one thread builds it; the others wait for it, then read it
            if _ANCHORS is None:
                _ANCHORS = _table()
            table = _ANCHORS
    return table


def prepare() -> None:
    """Build the table and compile every pattern now, so that no screened text waits for
    it (`palimpsest serve` calls it on a thread of its own after its first answer)."""
    for anchors in _anchor_table().values():
        for places in anchors.values():
            for place in places:
                _compiled(place.any_word)
                for word in place.words:
                    _compiled(word.pattern)
                    _compiled(word.tail)
                    if word.verb_tail is not None:
                        _compiled(word.verb_tail)


def _anchors_in(lower: str) -> Iterator[tuple[str, list[_Place]]]:
    """The anchors worth looking for in `lower`: a plain ASCII text (most notes) is searched
    for the ASCII ones only; the Cyrillic, CJK and accented Latin ones only if it holds such
    a letter."""
    table = _anchor_table()
    yield from table["ascii"].items()
    if lower.isascii():
        return
    for script, letter in _SCRIPT_LETTER.items():
        if letter.search(lower):
            yield from table[script].items()


_RANK = STRUCT_RANK + 10  # as a credential word of English names it


def _bounded(lower: str, start: int, end: int, word: _Word) -> bool:
    """The word stands alone: no letter or digit runs on into it (unless the language
    builds compounds, "Datenbankpasswort") or out of it ("Passwortmanager")."""
    if not word.spaced:
        return True  # no blanks between words: the tail decides
    before = start == 0 or not lower[start - 1].isalnum() or word.compounds
    return before and (end == len(lower) or not lower[end].isalnum())


def _is_a_word(value: str) -> bool:
    """Letters only (a word of the sentence, punctuation after it) or a path."""
    core = value.rstrip(TRAILING + "!?¡¿…")
    return core.isalpha() or is_path(value) or ("/" in value and is_pathlike(value))


def _value_hit(text: str, lower: str, at: int, word: _Word) -> Hit | None:
    """The credential labelled by `word` where it starts at `at`, if one follows it."""
    found = _compiled(word.pattern).match(lower, at)
    if found is None or not _bounded(lower, at, found.end(), word):
        return None
    compound = at > 0 and lower[at - 1].isalnum()
    tail = word.verb_tail if word.english and not compound else word.tail
    m = _compiled(tail).match(lower, found.end()) if tail else None
    if m is None:
        return None
    quoted, start = bool(m["open"]), m.start("v")
    value = text[start : m.end("v")]
    value = value if quoted else value.rstrip(TRAILING)
    if not value or (not quoted and _is_a_word(value)):
        return None
    mode, end = ("assign" if m.groupdict().get("sep") else "prose"), start + len(value)
    if word.cls == "password" and not quoted:
        credential = looks_like_password(value)  # the word of a sentence has no digit
    else:
        credential = judge(word.cls, mode, value, quoted, text, end)
    return Hit(kind_of(word.cls, mode, ""), start, end, _RANK) if credential else None


def labelled_in_other_languages(text: str, lower: str) -> Iterator[Hit]:
    """Each value labelled with a credential word of another language.

    A substring search for each anchor finds the few places to look: a note without any
    costs that and no more (a regex of every word would try each character).
    """
    for anchor, places in _anchors_in(lower):
        at = lower.find(anchor)
        while at != -1:
            for place in places:
                start = at - place.offset
                if start < 0 or not lower.startswith(place.head, start):  # the cheapest test
                    continue
                if _compiled(place.any_word).match(lower, start):
                    for word in place.words:
                        if hit := _value_hit(text, lower, start, word):
                            yield hit
            at = lower.find(anchor, at + 1)

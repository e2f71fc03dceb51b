"""Reading a shell command the way the shell would: words, operators and what runs inside.

Not a whole shell grammar: enough to find every simple command a line would run. Quotes
(`'...'`, `"..."`, `$'...'`) and backslashes join text into one word; `&&`, `||`, `;`,
`|`, `&` and newlines separate commands; `(`, `)` group them. The text of `$(...)`,
backticks and `<(...)` runs too (even inside double quotes): it is returned as a script of
its own, to be read the same way. A here-document's body is data, skipped, unless the
command reading it is a shell. What cannot be read (an unclosed quote or substitution) is
`Unparseable`: the guard then asks instead of guessing.

Hand-written rather than `bashlex` (GPL, and it refuses much of what agents type) or
`shlex` (which knows nothing of `$(...)`, backticks or here-documents).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .quoting import ANSI_ESCAPE, Unparseable, ansi_char, closing, substitutions

OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
REDIRECTS = ("<<<", "<<-", "<<", ">>", "&>>", "&>", ">&", "<&", ">|", "<>", ">", "<")
SEPARATOR = "\n"


@dataclass
class Word:
    text: str  # quotes removed, substitutions left out
    quoted: bool = False  # some of it was quoted: never an operator or a reserved word
    dynamic: bool = False  # holds an expansion or substitution: its value is unknown here
    many: bool = False  # may become several words, any of them (`$x`, `"$@"`, `{a,b}`)
    glob: str | None = None  # when a glob is all that is dynamic: a regex of what it yields
    home: bool = False  # holds `$HOME` or `${HOME}`, written `~` in `text`
    more: bool = False  # holds an expansion besides the home's (`"$HOME$X"`: anywhere)

    @property
    def fixed(self) -> str:
        """The characters written in the word itself, which its value holds in this order."""
        return self.text.replace("~", "") if self.home else self.text


@dataclass
class Token:
    kind: str  # "word", "op", "redirect"
    word: Word | None = None
    op: str = ""


@dataclass
class Lexed:
    tokens: list[Token] = field(default_factory=list)
    inner: list[str] = field(default_factory=list)  # scripts run by substitutions
    heredocs: list[tuple[int, str]] = field(default_factory=list)  # (token index, body)


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.out = Lexed()
        # (token, delimiter, strip tabs, expands: an unquoted delimiter's body runs `$(...)`)
        self.pending_heredocs: list[tuple[int, str, bool, bool]] = []

    def run(self) -> Lexed:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == "\\" and text.startswith("\\\n", self.i):
                self.i += 2
            elif char in " \t\r":
                self.i += 1
            elif char == "\n":
                self.i += 1
                self._op(SEPARATOR)
                self._read_heredocs()
            elif char == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif self._redirect() or self._operator():
                continue
            else:
                self._word()
        if self.pending_heredocs:
            self._read_heredocs()
        return self.out

    def _op(self, op: str) -> None:
        self.out.tokens.append(Token("op", op=op))

    def _operator(self) -> bool:
        for op in OPERATORS:
            if self.text.startswith(op, self.i):
                if op in "<>" and self.text.startswith("(", self.i + 1):
                    return False
                self.i += len(op)
                self._op(op)
                return True
        return False

    def _redirect(self) -> bool:
        text = self.text
        start = self.i
        j = start
        while j < len(text) and text[j].isdigit():
            j += 1
        for op in REDIRECTS:
            if text.startswith(op, j):
                if op in ("<", ">") and text.startswith("(", j + 1):  # process substitution
                    return False
                self.i = j + len(op)
                self.out.tokens.append(Token("redirect", op=op))
                if op in ("<<", "<<-"):
                    self._heredoc_delimiter(strip=op == "<<-")
                return True
        return False

    def _heredoc_delimiter(self, *, strip: bool) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        word = self._word(record=False)
        if not word.text:
            raise Unparseable("a here-document has no delimiter")
        self.pending_heredocs.append((len(self.out.tokens) - 1, word.text, strip, not word.quoted))

    def _read_heredocs(self) -> None:
        for token_index, delimiter, strip, expands in self.pending_heredocs:
            lines = []
            while True:
                if self.i >= len(self.text):
                    raise Unparseable(f"a here-document never reaches its end ({delimiter})")
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            self.out.heredocs.append((token_index, body))
            if expands:
                self.out.inner.extend(substitutions(body))
        self.pending_heredocs = []

    def _word(self, *, record: bool = True) -> Word:
        text = self.text
        word = Word("")
        parts: list[str] = []
        bare: list[str] = []  # unquoted characters a glob or brace expansion starts with
        shape: list[str] = []  # the word as a regex, its unquoted `*` and `?` as a glob's
        while self.i < len(text):
            char = text[self.i]
            before = len(parts)
            if char in " \t\r\n;&|()<>":
                if char in "<>" and text.startswith("(", self.i + 1):
                    self._substitution(self.i + 2, ")")
                    word.dynamic = word.more = True
                    continue
                break
            if char == "\\":
                if self.i + 1 < len(text) and text[self.i + 1] != "\n":
                    parts.append(text[self.i + 1])
                    word.quoted = True
                self.i += 2
            elif char == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise Unparseable("a single quote is never closed")
                parts.append(text[self.i + 1 : end])
                word.quoted = True
                self.i = end + 1
            elif char == '"':
                parts.append(self._double_quoted(word, parts))
                word.quoted = True
            elif char == "$":
                parts.append(self._dollar(word, parts, quoted=False))
            elif char == "`":
                self._backticks()
                word.dynamic = word.many = True
            else:
                parts.append(char)
                if char in "*?[{":
                    bare.append(char)
                shape.append(_GLOB.get(char, re.escape(char)))
                self.i += 1
                continue
            shape.extend(re.escape(part) for part in parts[before:])
        word.text = "".join(parts)
        if _expands(bare, word.text):
            # a glob or a brace list: the shell makes other words of it
            if not word.dynamic and "[" not in bare and "{" not in bare:
                word.glob = "".join(shape)  # a glob alone: its words fit it
            word.dynamic = word.many = True
        if record:
            self.out.tokens.append(Token("word", word=word))
        return word

    def _double_quoted(self, word: Word, before: list[str]) -> str:
        text = self.text
        self.i += 1
        parts: list[str] = []
        while True:
            if self.i >= len(text):
                raise Unparseable("a double quote is never closed")
            char = text[self.i]
            if char == '"':
                self.i += 1
                return "".join(parts)
            if char == "\\" and self.i + 1 < len(text):
                following = text[self.i + 1]
                if following in '"\\$`':
                    parts.append(following)
                elif following != "\n":
                    parts.append(char + following)
                self.i += 2
            elif char == "$":
                so_far = [*before, *parts]
                value = self._dollar(word, so_far, quoted=True)
                if not so_far and (before or parts):  # `"/home/$USER"`: the home, `~`
                    before.clear()
                    parts.clear()
                parts.append(value)
            elif char == "`":
                self._backticks()
                word.dynamic = word.more = True
            else:
                parts.append(char)
                self.i += 1

    def _dollar(self, word: Word, before: list[str], *, quoted: bool) -> str:
        """`$...` at `self.i`: a substitution (its script kept), an expansion (unknown), or
        a plain `$`. Returns the literal text it stands for, if any. Outside double quotes
        an expansion's value is split into any number of words; `"$@"` is too."""
        text = self.text
        following = text[self.i + 1 : self.i + 2]
        many_before = word.many  # `$HOME` is one path: an assignment to HOME is asked about
        word.more = word.more or word.dynamic  # an expansion before this one, or the home
        if following in ("(", "{") or following.isalnum() or following in "_@*#?$!-":
            word.many = word.many or not quoted
        if text.startswith("$((", self.i):  # arithmetic: only a substitution in it runs
            end = closing(text, self.i + 3, "(", ")", "an arithmetic expansion", depth=2)
            inside = text[self.i + 3 : end - 2]
            if "$(" in inside or "`" in inside:
                self.out.inner.append(inside)
            self.i = end
            word.dynamic = True
            return ""
        if following == "(":
            self._substitution(self.i + 2, ")")
            word.dynamic = True
            return ""
        if following == "{":
            end = closing(text, self.i + 2, "{", "}", "a ${...} expansion")
            inside = text[self.i + 2 : end - 1]
            if "$(" in inside or "`" in inside:
                self.out.inner.append(inside)  # `${x:-$(cmd)}` may run cmd: read it all
            self.i = end
            word.dynamic = True
            word.many = word.many or "@" in inside  # `"${args[@]}"`, `"${@:2}"`
            if inside == "HOME" or _users_home(inside, before):
                word.home, word.many = True, many_before
                return "~"
            return ""
        if following == "'":
            return self._ansi_c()
        if following == '"':  # `$"..."`, a translated string: read as "..."
            self.i += 1
            word.quoted = True
            return self._double_quoted(word, before)
        if following and (following.isalnum() or following in "_@*#?$!-"):
            start = self.i + 1
            self.i += 2
            if following.isalpha() or following == "_":
                while self.i < len(text) and (text[self.i].isalnum() or text[self.i] == "_"):
                    self.i += 1
            word.dynamic = True
            word.many = word.many or following == "@"
            name = text[start : self.i]
            if name == "HOME" or _users_home(name, before):  # the home directory, as `~` is
                word.home, word.many = True, many_before
                return "~"
            return ""
        self.i += 1
        return "$"

    def _ansi_c(self) -> str:
        """`$'...'` at `self.i`, its escapes decoded as bash does (`$'\\x67it'` is `git`)."""
        text = self.text
        self.i += 2
        parts: list[str] = []
        while True:
            if self.i >= len(text):
                raise Unparseable("a $'...' quote is never closed")
            char = text[self.i]
            if char == "'":
                self.i += 1
                return "".join(parts)
            escape = ANSI_ESCAPE.match(text, self.i) if char == "\\" else None
            if escape is not None:
                parts.append(ansi_char(escape.group(1)))
                self.i = escape.end()
            else:
                parts.append(char)
                self.i += 1

    def _substitution(self, start: int, closer: str) -> None:
        end = closing(self.text, start, "(", closer, "a $(...) substitution")
        self.out.inner.append(self.text[start : end - 1])
        self.i = end

    def _backticks(self) -> None:
        text = self.text
        j = self.i + 1
        parts: list[str] = []
        while True:
            if j >= len(text):
                raise Unparseable("a backtick is never closed")
            if text[j] == "\\" and j + 1 < len(text):
                parts.append(text[j + 1] if text[j + 1] in "`$\\" else text[j : j + 2])
                j += 2
            elif text[j] == "`":
                break
            else:
                parts.append(text[j])
                j += 1
        self.out.inner.append("".join(parts))
        self.i = j + 1


_HOMES = re.compile(r"/+(home|Users)/+")
_GLOB = {"*": "[^/]*", "?": "[^/]"}  # what a glob's `*` and `?` stand for in a file name


def _users_home(name: str, before: list[str]) -> bool:
    """Whether `$name` completes the user's home (`/home/$USER`, `/Users/${LOGNAME}`): then
    the word so far is dropped, and the home is `~`. A line that sets them is asked about."""
    if name not in ("USER", "LOGNAME") or not _HOMES.fullmatch("".join(before)):
        return False
    before.clear()
    return True


def _expands(bare: list[str], text: str) -> bool:
    """Whether a word with these unquoted `*?[{` is expanded by the shell: a glob (`gi?`,
    `*.py`, `[ab]x`), or a brace list (`{git,push}`); `[`, `[[` and `{` alone are words."""
    if not bare or text in ("[", "[[", "{", "{}"):
        return False
    if "*" in bare or "?" in bare:
        return True
    if "[" in bare and "]" in text[text.index("[") + 1 :]:
        return True
    return "{" in bare and "}" in text and ("," in text or ".." in text)


def lex(text: str) -> Lexed:
    """The tokens of `text`, the scripts its substitutions run, and its here-documents."""
    return _Lexer(text).run()


__all__ = ["SEPARATOR", "Lexed", "Unparseable", "Word", "lex", "substitutions"]

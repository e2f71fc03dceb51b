"""Credential words (password, secret, token, key, ...) and the value next to them: the name
around the word decides the class, the value after it (assigned, stated in prose, simply
following, or alone on the next line) must look like a password or a random key."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from ..secret_rules import (
    CODE_VARS,
    FILL_STOP,
    NOT_CREDENTIAL,
    PASSWORD_KEY_WORDS,
    PASSWORD_WORDS,
    PLURAL_OK,
    SECRET_KEY_QUALIFIERS,
    SECRET_WORDS,
    STEMS,
    VALUE_SUFFIXES,
)
from .hits import Hit
from .shapes import STRUCT_RANK
from .values import (
    CODE,
    HEX,
    TRAILING,
    WORDY,
    b64_text,
    is_allowed,
    is_path,
    looks_like_password,
    looks_random,
    looks_secretish,
    password_literal,
)

# --- 4. credential words and the value next to them ----------------------------------------

_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEGMENTS = re.compile(r"[_.\-]+")

# A value assigned to the name: `= v`, `: v`, `=> v`, `:= v`, `== v`, `("v")`, `>v<` (XML),
# after an optional closing quote of the name and an optional type (`password: str = ...`).
_ASSIGN = re.compile(
    r"""(?P<close>["'`\]]{0,2})[ \t]*
    (?::[ \t]*[A-Za-z_][\w.\[\]|, ]{0,40}?[ \t]+(?==[^=]))?
    (?P<op>:=|=>|->|==|=|:(?![:/])|>(?=[^<\r\n]{1,256}</)|\()
    [ \t]*
    (?:[rRbBuUfF]{0,2}"(?P<dq>[^"\r\n]{0,512})"
      |[rRbBuUfF]{0,2}'(?P<sq>[^'\r\n]{0,512})'
      |`(?P<bq>[^`\r\n]{0,512})`
      |(?P<uv>[^\s"'`,;<=]{1,512}={0,2}))?""",
    re.X,
)
# A value stated in prose: "<name> [for the router] is|was|:|= [now] <value>"; the words
# between must open with a preposition or pronoun ("password manager is" changes subject).
_PROSE = re.compile(
    r"""(?P<fill>[ \t]+(?i:for|of|to|on|at|in|from|with|we|i|you|they|he|she|that|which|here
    |there|now|today|currently|still|used|needed)\b(?:[ \t]+[^\s:=]{0,29}[^\s:=.!?;,]){0,3})?
    [ \t]*(?:[ \t](?i:is|was|are|remains|reads|became|to|(?:will|would|should|must)[ \t]+be
    |ha(?:s|ve)[ \t]+been)|[:=—–→⇒]|->)
    [ \t]+(?:(?i:now|still|currently|just|actually|(?:re)?set[ \t]+to|changed[ \t]+to
    |updated[ \t]+to)[ \t]+)?
    (?P<open>["'“‘`(]?)(?P<v>[^\s"'”’`]{1,256})""",
    re.X,
)
# A value right after the name: "token g9DW...", "--password hunter2", "PASSWORD 'x'".
_DIRECT = re.compile(r"""[ \t]+(?P<open>["'`]?)(?P<v>[^\s"'`,;)]{1,512})""")
_DIGIT = re.compile(r"\d")
_USERNAME = re.compile(r"[A-Za-z0-9_.@\-]{1,64}")
_NEXT_PARAM = re.compile(r"&[A-Za-z_][\w.\-]*=")
_BLOCK_SCALAR = re.compile(r"[|>][+\-]?")
_AFTER_NAME = frozenset(" \t\"'`]:=(>\r\n")
# A value alone on the line after its name: a title "staging DB password" over a text that
# is only the password, a YAML key whose value was put on the next line.
_NEXT_LINE = re.compile(
    r"[ \t]*:?[ \t]*\r?\n[ \t]*(?P<v>[^\s*#>|`\-=:][^\s=:]{0,255}={0,2})[ \t]*(?=\r?\n|$)"
)


def _ident_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    a, b = start, end
    while a > 0 and start - a < 80 and text[a - 1] in _IDENT_CHARS:
        a -= 1
    while b < len(text) and b - end < 80 and text[b] in _IDENT_CHARS:
        b += 1
    while a < b and text[a] in ".-":
        a += 1
    while b > a and text[b - 1] in ".-":
        b -= 1
    return a, b


@functools.lru_cache(maxsize=4096)
def name_class(ident: str, before: str) -> str | None:
    """'password', 'secret' or 'key' when `ident` (with the word `before` it) names one."""
    segments = [s for s in _SEGMENTS.split(_CAMEL.sub("_", ident).lower()) if s]
    if not segments:
        return None
    *qualifiers, last = segments
    while qualifiers and last in VALUE_SUFFIXES:  # SECRET_KEY_BASE, token_value
        last = qualifiers.pop()
    prev_word = before.lower()
    if prev_word:
        qualifiers.insert(0, prev_word)
    if any(q in NOT_CREDENTIAL for q in qualifiers):
        return None
    if last.endswith("s") and not last.endswith("ss") and last not in PLURAL_OK:
        return None
    if last in PASSWORD_WORDS or last.endswith(("password", "passwd", "storepass", "keypass")):
        return "password"
    if last in SECRET_WORDS or last.endswith(("token", "secret", "apikey")):
        if last.endswith(("auth",)) and last != "auth":
            return None
        return "secret"
    if last in ("key", "keys"):
        near = qualifiers[-1] if qualifiers else ""
        if near in PASSWORD_KEY_WORDS:  # a Wi-Fi "network key", a VPN pre-shared key
            return "password"
        return "secret" if near in SECRET_KEY_QUALIFIERS else "key"
    return None


def _word_before(text: str, a: int) -> str:
    """The alphabetic word just before position `a` on the same line ("API" in "API key")."""
    i = a
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    j = i
    while j > 0 and i - j < 20 and text[j - 1].isalpha():
        j -= 1
    return text[j:i] if i < a else ""


def _value_after(text: str, b: int) -> tuple[str, int, int, bool] | None:
    """(mode, start, end, quoted) of the value that follows a name ending at `b`."""
    m = _ASSIGN.match(text, b)
    if m and m["op"]:
        for group in ("dq", "sq", "bq"):
            if m[group] is not None:
                return "assign", m.start(group), m.end(group), True
        if m["op"] == ":" and m["uv"] is not None and _BLOCK_SCALAR.fullmatch(m["uv"]):
            return _value_on_next_line(text, m.end("uv"))  # YAML `password: |`: next line
        if m["uv"] is not None and m["op"] != "(":
            query = _NEXT_PARAM.search(m["uv"])  # ?password=x&user=y: stop at "&user="
            end = m.start("uv") + query.start() if query else m.end("uv")
            return "assign", m.start("uv"), end, False
        return _value_on_next_line(text, b) if m["op"] == ":" else None
    m = _PROSE.match(text, b)
    if m:
        words = [w.strip("()[]'\"").lower() for w in (m["fill"] or "").split()]
        if FILL_STOP.intersection(words):
            return None
        return "prose", m.start("v"), m.end("v"), bool(m["open"])
    m = _DIRECT.match(text, b)
    if m:
        return "direct", m.start("v"), m.end("v"), bool(m["open"])
    return _value_on_next_line(text, b)


def _value_on_next_line(text: str, b: int) -> tuple[str, int, int, bool] | None:
    m = _NEXT_LINE.match(text, b)
    if m and _DIGIT.search(m["v"]) and any(c.isalpha() for c in m["v"]):
        return "line", m.start("v"), m.end("v"), False
    return None


def judge(cls: str, mode: str, value: str, quoted: bool, text: str, end: int) -> bool:
    """Whether `value`, written after a name of class `cls`, is a credential."""
    if cls == "secret" and len(value) >= 8:  # "auth": base64 of "user:password" (Docker)
        raw = b64_text(value)
        if raw is not None and b":" in raw:
            user, _, secret = raw.decode("ascii").partition(":")
            if secret and _USERNAME.fullmatch(user) and not is_allowed(secret):
                return True
    if cls == "secret" and ":" in value and not is_path(value):  # "credentials: bob:hunter2!"
        user, _, password = value.partition(":")
        if _USERNAME.fullmatch(user) and looks_like_password(password):
            return not is_allowed(value)
    shortest = {"key": 16, "password": 4}.get(cls, 8 if mode == "assign" or quoted else 16)
    if len(value) < shortest or is_allowed(value):
        return False
    if not quoted and (CODE.search(value) or value.lower() in CODE_VARS):
        return False  # an expression or a variable: `key = derive(key)`, `password = auth`
    if mode == "assign" and not quoted and text[end : end + 3].lstrip(" \t")[:1] in ("|", ")"):
        return False  # a type in a signature: `key: Ed25519PrivateKey | None`
    if cls == "key":  # a bare "key": hex needs the length of a real key, not a key id
        return looks_random(value, 16) and not (HEX.fullmatch(value) and len(value) < 32)
    if cls == "secret":
        if mode == "assign" or quoted:
            return looks_secretish(value) and not (not quoted and CODE.search(value))
        return looks_random(value, 16)
    # a password
    if quoted:  # a few words need a digit or symbol: "a secret" is a phrase, not a password
        if " " in value and not looks_like_password(value.replace(" ", "")):
            return False
        return password_literal(value)
    if mode != "assign":
        return looks_like_password(value)
    if not password_literal(value) or (WORDY.fullmatch(value) and not value.islower()):
        return False  # a type or constant: `password: SecretStr`, `password=DEFAULT_PW`
    if re.fullmatch(r"[a-z_][a-z0-9_]*_[a-z0-9_]*|[A-Z_][A-Z0-9_]*_[A-Z0-9_]*", value):
        return False  # a variable or constant: `password = db_password`
    if value.isalpha() and value.islower():  # a bare word: only at the end of a line
        rest = text[end : end + 40].lstrip(" \t")
        return not rest or rest[0] in "\r\n,;#}"
    return True


def kind_of(cls: str, mode: str, ident: str) -> str:
    low = ident.lower()
    if cls != "password" and "aws" in low and "secret" in low:
        return "aws-secret-access-key"
    if cls == "password":
        return "password-assignment" if mode == "assign" else "password-in-prose"
    return "secret-assignment" if mode == "assign" else "high-entropy-secret"


def named_values(text: str, lower: str) -> Iterator[Hit]:
    rank = STRUCT_RANK + 10
    seen: set[int] = set()
    for stem in STEMS:
        i = lower.find(stem)
        while i != -1:
            a, b = _ident_bounds(text, i, i + len(stem))
            i = lower.find(stem, max(b, i + 1))
            if a in seen or a >= b:
                continue
            seen.add(a)
            if a > 0 and text[a - 1] in "{%":  # a reference: ${TOKEN}, %PASSWORD%
                continue
            if b < len(text) and text[b] not in _AFTER_NAME:  # "token.", "keys)": no value
                continue
            ident = text[a:b]
            if name_class(ident, "") is None:  # a word before can only narrow the class
                continue
            found = _value_after(text, b)
            if found is None:
                continue
            mode, start, end, quoted = found
            value = text[start:end]
            if value.endswith(("...", "…")):
                continue  # elided on purpose: "sk-abc...", "eyJhbGci..."
            if not quoted:
                value = value.rstrip(TRAILING) if mode != "assign" else value.rstrip(".,:)]}")
                end = start + len(value)
                if mode != "assign" and (len(value) < 6 or (value.isalpha() and len(value) < 16)):
                    continue  # prose goes on: "token budget", "password policy"
            if ident == "secret" and start == b + 1 and is_allowed(text[a:end]):
                continue  # `secret:NAME` names a value in the OS keychain (keychain.py)
            if ident.lower() == "pass" and (
                text[b] not in ":=" if mode == "assign" else quoted or not _DIGIT.search(value)
            ):
                continue  # "pass `notebook`", "pass :meth:`x`": the verb, not a password
            cls = name_class(ident, _word_before(text, a) if ident.isalpha() else "")
            if cls is not None and judge(cls, mode, value, quoted, text, end):
                yield Hit(kind_of(cls, mode, ident), start, end, rank)

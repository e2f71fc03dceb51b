"""Secrets known by the structure around them: JWTs, URLs with a password, authorization
headers, cookies, command lines, .pgpass, XML settings and manifest entries, seed phrases,
and a value named after it ("use hunter2! as the password")."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..secret_rules import COMMAND_LINE_PASSWORDS, DOCUMENTED
from .hits import Hit
from .names import judge, name_class
from .shapes import STRUCT_RANK, starts_word
from .values import (
    TRAILING,
    b64_text,
    is_allowed,
    looks_like_password,
    looks_random,
    password_literal,
)

# --- 3. structures: JWTs, URLs, headers, command lines --------------------------------------

# JWT (JWS or JWE): base64url JSON header "eyJ...", then 2 or 4 more dot-separated parts.
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*){2,4}")
# A URL with a password: scheme://user:password@host (the password may hold '@').
_URL_PASSWORD = re.compile(
    r"://(?P<user>[^\s:/?#@'\"<>]{0,128}):(?P<v>[^\s/'\"<>]{1,256})@(?=[A-Za-z0-9\[._%-])"
)
# Authorization: Basic <base64 of user:password>.
_BASIC = re.compile(r"\b[Bb]asic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
# Bearer <token> (in a header or not).
_BEARER = re.compile(r"\b[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)")
# Authorization: Token/Bot/SSWS/ApiKey <value>, or a bare value.
_AUTH_HEADER = re.compile(
    r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?i:token|bot|ssws|apikey|api-key|key|sso-key|gapi|splunk)[ \t]+)?"
    r"(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)"
)
# curl/wget -u or --user, httpie -a or --auth: user:password.
_CURL_USER = re.compile(
    r"(?:^|[\s'\"])(?:-u|--user|-a|--auth)(?:[ \t]+|=)?[\"']?[^\s:'\"]{1,128}"
    r":(?P<v>[^\s'\"]{1,256})"
)
# Passwords given on a command line or in a call (the table in secret_rules).
_CLI_PASSWORDS = tuple(
    (hints, re.compile(command) if command else None, re.compile(value))
    for hints, command, value in COMMAND_LINE_PASSWORDS
)
# Session cookies: every random value on a "Cookie:" or "Set-Cookie:" line.
_COOKIE_HEADER = re.compile(r"(?i:set-cookie|cookie)[ \t]*:")
_COOKIE_VALUE = re.compile(r"[ \t;=:](?P<v>[A-Za-z0-9%+/_\-.]{16,}={0,2})")
# .pgpass: host:port:database:user:password, one per line.
_PGPASS = re.compile(r"(?m)^[\w.\-*]+:(?:\d{2,5}|\*):[\w.\-*]+:[\w.\-@*]+:(?P<v>[^\s:]\S*)$")
# XML/.NET settings: <add key="ApiKey" value="..."/>, name="DbPassword" value="...".
_KEY_VALUE_ATTR = re.compile(
    r"""\b(?:key|name)[ \t]*=[ \t]*["'](?P<name>[\w.:\-]{1,80})["'][ \t]+value[ \t]*=[ \t]*"""
    r"""["'](?P<v>[^"'\r\n]{1,512})["']""",
    re.I,
)
# The same as an entry of a manifest: Kubernetes `- name: DB_PASSWORD` over `value: x`, an
# ECS task's {"name": "DB_PASSWORD", "value": "x"}.
_NAME_VALUE_PAIR = re.compile(
    r"""\b(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<name>[\w.:\-]{1,80})["']?[ \t]*,?[ \t]*"""
    r"""(?:\r?\n[ \t]*)?["']?value["']?[ \t]*[:=][ \t]*"""
    r"""(?:"(?P<dq>[^"\r\n]{1,512})"|'(?P<sq>[^'\r\n]{1,512})'|(?P<uv>[^\s"',}\]]{1,512}))""",
    re.I,
)
# A login given as "user / password": "login: deploy / Hunter2!", "creds: admin/S3cret".
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?i:login|logins|credentials|creds|username|user)(?:[ \t]*(?:is|are|:|=)[ \t]*|[ \t]+)"
    r"[\"'`]?[\w.@\-]{2,64}[ \t]*/[ \t]*[\"'`]?(?P<v>[^\s\"'`/]{6,128})"
)
# A wallet's recovery words: "seed phrase: <12 or 24 lowercase words>".
_SEED_PHRASE = re.compile(
    r"(?i:seed[ \t]+phrase|recovery[ \t]+phrase|mnemonic|secret[ \t]+recovery[ \t]+phrase)"
    r"[^\r\n\w]{0,12}(?:is[ \t]+)?[\"'`]?(?P<v>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b"
)
# SQL: CREATE/ALTER USER ... IDENTIFIED BY 'password'.
_IDENTIFIED_BY = re.compile(
    r"(?i:identified[ \t]+by)[ \t]+(?P<q>['\"])(?P<v>[^'\"\r\n]{1,256})(?P=q)"
)
# A value named after it: "use hunter2! as the password", "<key> is the API key for staging";
# found at " as "/" is ", the value is the word before.
_NAMED_AFTER = re.compile(
    r"[ \t](?:as|is|was)[ \t]+(?:(?:the|my|our|your|a|an|its)[ \t]+)?"
    r"(?:(?:new|current|temporary|temp|admin|root|db|database|wifi|wi-fi|vpn|router|login"
    r"|account|master|staging|prod|production|dev|test|ci|deploy|api|access|service|bot|app"
    r"|[A-Z][A-Za-z0-9\-]{1,19})[ \t]+){0,2}?"
    r"(?P<name>(?i:password|passphrase|api[ _\-]?key|access[ _\-]?key|secret[ _\-]?key"
    r"|key|token|secret))\b"
)
_ENCODED_WORDS = re.compile(r"[A-Za-z]+(?:%20[A-Za-z]+)+")


def _jwt_ok(token: str) -> bool:
    parts = token.split(".")
    if len(parts) < 3:
        return False
    header = b64_text(parts[0])
    if header is None or not (b'"alg"' in header or b'"enc"' in header or b'"typ"' in header):
        return False
    if any(doc in token for doc in DOCUMENTED):
        return False
    if len(parts) == 5:  # JWE: the IV and the tag are there ("eyJ...." is an elided token)
        return len(parts[2]) >= 16 and len(parts[4]) >= 16
    return len(parts[2]) >= 16


def structures(text: str, lower: str) -> Iterator[Hit]:
    rank = STRUCT_RANK
    if "eyJ" in text:
        for m in _JWT.finditer(text):
            token = m[0].rstrip(".")
            if starts_word(text, m.start()) and _jwt_ok(token):
                yield Hit("jwt", m.start(), m.start() + len(token), rank)
    if "://" in text:
        for m in _URL_PASSWORD.finditer(text):
            password = m["v"]
            if _ENCODED_WORDS.fullmatch(password) or ("," in password and ":" in password):
                continue  # "a%20secret": a sentence; "h1:1,h2:2": a multi-host list
            if password_literal(password, 4) and password != m["user"]:
                yield Hit("url-password", m.start("v"), m.end("v"), rank + 1)
    if "basic" in lower:
        for m in _BASIC.finditer(text):
            raw = b64_text(m["v"])
            if raw is not None and b":" in raw:
                password = raw.split(b":", 1)[1].decode("ascii", "replace")
                if password and not is_allowed(password):
                    yield Hit("basic-auth-header", m.start("v"), m.end("v"), rank + 2)
    if "bearer" in lower:
        for m in _BEARER.finditer(text):
            if looks_random(m["v"].rstrip("="), 16):
                yield Hit("bearer-token", m.start("v"), m.end("v"), rank + 3)
    if "authorization" in lower:
        for m in _AUTH_HEADER.finditer(text):
            value = m["v"]
            if value.lower() not in ("basic", "bearer") and looks_random(value.rstrip("="), 16):
                yield Hit("authorization-header", m.start("v"), m.end("v"), rank + 3)
    flags = " -" in text  # most command lines pass the password as a flag
    if flags:
        for m in _CURL_USER.finditer(text):
            yield from _literal_hit("cli-password", text, m.start("v"), m.end("v"), rank + 4)
    for hints, command, value in _CLI_PASSWORDS:
        if (flags or command is None) and any(hint in text for hint in hints):
            for m in _cli_values(text, command, value):
                yield from _literal_hit("cli-password", text, m.start("v"), m.end("v"), rank + 4)
    if "cookie" in lower:
        for header in _COOKIE_HEADER.finditer(text):
            line_end = text.find("\n", header.end())
            line_end = len(text) if line_end < 0 else line_end
            for m in _COOKIE_VALUE.finditer(text, header.end() - 1, line_end):
                if looks_random(m["v"], 16):
                    yield Hit("session-cookie", m.start("v"), m.end("v"), rank + 4)
    if text.count(":") >= 4:
        for m in _PGPASS.finditer(text):
            if password_literal(m["v"]):
                yield Hit("password-assignment", m.start("v"), m.end("v"), rank + 5)
    if "value" in lower:
        for m in _KEY_VALUE_ATTR.finditer(text):
            cls = name_class(m["name"], "")
            if cls is not None and judge(cls, "assign", m["v"], True, text, m.end("v")):
                kind = "password-assignment" if cls == "password" else "secret-assignment"
                yield Hit(kind, m.start("v"), m.end("v"), rank + 5)
        for m in _NAME_VALUE_PAIR.finditer(text):
            cls = name_class(m["name"], "")
            group = next(g for g in ("dq", "sq", "uv") if m[g] is not None)
            quoted, value = group != "uv", m[group]
            if cls is not None and judge(cls, "assign", value, quoted, text, m.end(group)):
                kind = "password-assignment" if cls == "password" else "secret-assignment"
                yield Hit(kind, m.start(group), m.end(group), rank + 5)
    if "/" in text:
        for at in _occurrences(lower, ("login", "cred", "user")):
            pair = _USER_SLASH_PASSWORD.match(text, at)
            value = pair["v"].rstrip(TRAILING) if pair else ""
            if pair and looks_like_password(value):
                start = pair.start("v")
                yield Hit("password-in-prose", start, start + len(value), rank + 6)
    if "phrase" in lower or "mnemonic" in lower:
        for m in _SEED_PHRASE.finditer(text):
            yield Hit("seed-phrase", m.start("v"), m.end("v"), rank + 5)
    if "identified" in lower:
        for m in _IDENTIFIED_BY.finditer(text):
            if password_literal(m["v"]):
                yield Hit("password-assignment", m.start("v"), m.end("v"), rank + 5)
    if _has_stem(lower):
        for at in _occurrences(lower, (" as ", " is ", " was ")):
            named = _NAMED_AFTER.match(text, at)
            if named is None:
                continue
            end = named.start()
            start = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end), end - 256) + 1
            value = text[start:end].strip("\"'`(").rstrip(",;:")
            if not value:
                continue
            start = text.index(value, start)
            if named["name"].lower().startswith("pass"):
                if looks_like_password(value):
                    yield Hit("password-in-prose", start, start + len(value), rank + 6)
            elif looks_random(value, 16):
                yield Hit("high-entropy-secret", start, start + len(value), rank + 6)
    if "basic" in lower or _AUTH_WORD.search(lower):
        for m in _B64_TOKEN.finditer(text):
            if _is_b64_credentials(m[0]):
                yield Hit("basic-auth-header", m.start(), m.end(), rank + 2)


def _cli_values(
    text: str, command: re.Pattern[str] | None, value: re.Pattern[str]
) -> Iterator[re.Match[str]]:
    """Each value: anywhere, or on the rest of the line of each command (200 characters)."""
    if command is None:
        yield from value.finditer(text)
        return
    for cmd in command.finditer(text):
        line_end = text.find("\n", cmd.end())
        end = min(len(text) if line_end < 0 else line_end, cmd.end() + 200)
        yield from value.finditer(text, cmd.end(), end)


def _occurrences(lower: str, words: tuple[str, ...]) -> Iterator[int]:
    """Where each word starts in the lowercased text (a regex .match() then runs there)."""
    for word in words:
        at = lower.find(word)
        while at != -1:
            yield at
            at = lower.find(word, at + 1)


def _has_stem(lower: str) -> bool:
    return "pass" in lower or "key" in lower or "token" in lower or "secret" in lower


_AUTH_WORD = re.compile(r"auth[\"' :=]")
# A standalone base64 token, for base64 of "user:password" near the word auth or basic.
_B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{8,256}={0,2}(?![A-Za-z0-9+/=])")
_CREDENTIAL_PAIR = re.compile(r"[\w.@+\-]{1,64}:[^\s:]{4,128}")


def _is_b64_credentials(value: str) -> bool:
    """Base64 of "user:password" (no spaces), with a password that is not a placeholder."""
    raw = b64_text(value)
    if raw is None:
        return False
    pair = raw.decode("ascii")
    return bool(_CREDENTIAL_PAIR.fullmatch(pair)) and not is_allowed(pair.partition(":")[2])


def _literal_hit(kind: str, text: str, start: int, end: int, rank: int) -> Iterator[Hit]:
    value = text[start:end].rstrip(TRAILING)
    if password_literal(value):
        yield Hit(kind, start, start + len(value), rank)

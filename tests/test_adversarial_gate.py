"""The write gate attacked as a careless writer's text would: each test here failed first.

Keys cut by a fixed-width line wrap (a terminal, a mail client), ...
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from palimpsest.secrets import find_secrets
from palimpsest.service import Service

from .test_gate import assert_refused_without_echo
from .test_revise_rules import current, fact

RNG = random.Random(81)
ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


TOKEN = "ghp_" + _random(ALNUM, 36)
ANTHROPIC = "sk-ant-api03-" + _random(ALNUM + "-_", 93) + "AA"
JWT = ".".join(
    (
        _b64url({"alg": "HS256", "typ": "JWT"}),
        _b64url({"sub": "1234567890", "name": "Ana Lopez", "iat": 1716239022, "role": "admin"}),
        _random(ALNUM + "-_", 43),
    )
)


def _wrapped(text: str, width: int = 76) -> str:
    """`text` cut every `width` characters, as a terminal or a mail client wraps it."""
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


# -- keys cut by a line wrap ---------------------------------------------------------------

WRAPPED = {
    "Anthropic key in a mail wrapped at 76": (
        ANTHROPIC,
        _wrapped(f"Hi, here is the new key for the deploy pipeline, keep it safe: {ANTHROPIC}"),
    ),
    "JWT in a terminal wrapped at 80": (
        JWT,
        _wrapped(f"curl -H 'Authorization: Bearer' https://api.internal/orders {JWT}", 80),
    ),
    "GitHub token cut early, CRLF": (TOKEN, f"CI token:\r\n{TOKEN[:12]}\r\n{TOKEN[12:]}\r\n"),
    "GitHub token cut, blanks before the break": (TOKEN, f"{TOKEN[:20]}   \n{TOKEN[20:]} ok"),
}


@pytest.mark.parametrize(("secret", "text"), WRAPPED.values(), ids=WRAPPED.keys())
def test_a_key_cut_by_a_line_wrap_is_refused(service: Service, secret: str, text: str) -> None:
    call = lambda: fact(service, text=text)  # noqa: E731
    assert_refused_without_echo(service, secret, call)
    mid = fact(service, text="Deploy keys live in the vault")
    assert_refused_without_echo(service, secret, lambda: service.revise(id=mid, why=text))
    assert current(service, mid)["version"] == 1


MULTILINE_CLEAN = [
    "Commits in the release:\n" + "\n".join(_random("0123456789abcdef", 40) for _ in range(6)),
    "Request ids:\n"
    + "\n".join(
        "-".join(_random("0123456789abcdef", n) for n in (8, 4, 4, 4, 12)) for _ in range(5)
    ),
    "Paths touched:\nsrc/palimpsest/secrets.py\nsrc/palimpsest/gate.py\ntests/test_gate.py",
    "def connect(token: str) -> Client:\n    client = Client(token)\n    return client\n",
    "integrity sha512-" + base64.b64encode(RNG.randbytes(64)).decode() + "\n"
    "resolved https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
    "We wrapped the line at\nghp_ because the prefix\nis what GitHub uses",
    "Keys are in kv/prod/api;\nskip the sk-ant-\nprefix when you search the vault",
]


@pytest.mark.parametrize("text", MULTILINE_CLEAN)
def test_ordinary_multiline_text_still_passes(service: Service, text: str) -> None:
    assert find_secrets(text) == []
    mid = fact(service, text=text)
    assert current(service, mid)["text"] == text

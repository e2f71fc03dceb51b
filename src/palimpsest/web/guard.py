"""What every answer of the web page carries, and what every request must show.

- Headers on every answer, errors and files included: a Content-Security-Policy that lets
  a page load only this server's own script and style files (no inline script, no other
  origin, no framing), no MIME sniffing, no Referer sent anywhere.
- The cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends
  it), Secure with a `__Host-` name when served over TLS or told it is behind TLS.
- Cross-site requests: a request that changes anything must come from a page of this
  origin (its `Origin` header names scheme and `Host` of this very request, or the browser
  marks it `Sec-Fetch-Site: same-origin`) and carry its session's form token. Either alone
  would do in today's browsers; both together also hold where one is missing (an old
  browser, a proxy dropping a header).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.requests import Request

from ..mcp.peers import peer_is_this_user as peer_is_this_user  # the local owner's

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)
HEADERS: Mapping[str, str] = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",  # frame-ancestors, for browsers that predate it
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
COOKIE = "palimpsest_session"
SECURE_COOKIE = "__Host-palimpsest_session"  # a browser takes it only over TLS, for Path=/


def is_secure(request: Request, behind_tls: bool) -> bool:
    return behind_tls or request.url.scheme == "https"


def cookie_name(secure: bool) -> str:
    return SECURE_COOKIE if secure else COOKIE


def session_cookie(request: Request, secure: bool) -> str | None:
    return request.cookies.get(cookie_name(secure))


def set_cookie(value: str, secure: bool) -> str:
    """A `Set-Cookie` value; no Max-Age: the browser forgets it when it closes."""
    flags = "; Secure" if secure else ""
    return f"{cookie_name(secure)}={value}; Path=/; HttpOnly; SameSite=Strict{flags}"


def clear_cookie(secure: bool) -> str:
    flags = "; Secure" if secure else ""
    return f"{cookie_name(secure)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{flags}"


def own_origin(request: Request, secure: bool) -> str | None:
    hosts = request.headers.getlist("host")
    if len(hosts) != 1 or not hosts[0]:
        return None
    return f"{'https' if secure else 'http'}://{hosts[0].lower()}"


def same_origin(request: Request, secure: bool) -> bool:
    """The request comes from a page of this origin.

    Either its one `Origin` names the scheme and `Host` this request was sent to, or, as
    browsers send for a page whose Referrer-Policy is no-referrer, it is `null` (or absent)
    and `Sec-Fetch-Site`, a header no page's script can set, says `same-origin`. A form
    another site posts names that site, or is marked `cross-site`."""
    given = request.headers.getlist("origin")
    own = own_origin(request, secure)
    if own is None or len(given) > 1:
        return False
    if given and given[0].lower() == own:
        return True
    fetched = request.headers.getlist("sec-fetch-site")
    return (not given or given[0] == "null") and fetched == ["same-origin"]


def made_by_another_page(request: Request) -> bool:
    """A browser's request that a page of another origin made without a person going
    there: its script, image, frame or fetch (as Fetch Metadata marks it).

    SameSite=Strict keeps the cookie from another *site*, but a page on another port of
    this host is the same site, and gets it sent: such a request could run a search as
    the person (its timing and size leak what it finds) and spend the key's calls. A
    person following a link (a top-level navigation) is not refused here; a form posted
    so is refused by `same_origin`. A client that sends no Fetch Metadata is not a
    browser carrying someone else's cookie."""
    fetched_from = request.headers.get("sec-fetch-site")
    if fetched_from not in ("same-site", "cross-site"):
        return False
    mode, dest = request.headers.get("sec-fetch-mode"), request.headers.get("sec-fetch-dest")
    return not (mode == "navigate" and dest == "document")


def token_matches(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())

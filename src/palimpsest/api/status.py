"""The HTTP status of each error class: one table for the API's answers, its document and
the web page's refusals."""

from __future__ import annotations

STATUS = {
    "validation": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "retryable": 503,  # 429 when the refusal carries `retry_after`: a key past its bound
    "internal": 500,
}
TOO_MANY = 429

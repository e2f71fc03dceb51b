"""What the guard's hook does with a command an agent is about to run, for tests that need
commands kept for trials without a hook process: judge it, then keep it."""

from __future__ import annotations

from palimpsest.service import Service
from palimpsest.service.findings import GuardAnswer


def ran(
    service: Service,
    command: str,
    *,
    dir: str | None = None,
    notebook: str | None = None,
    session: str | None = None,
) -> GuardAnswer:
    answer = service.guard(command=command, dir=dir, notebook=notebook)
    service.keep_seen(command, answer["decision"], answer.get("notebook"), session)
    return answer

"""A notebook's activity over time: its events (and its memories') counted by UTC day and
operation, every day of the span listed, quiet ones at zero, so that a table or a chart
reads it as it is."""

from __future__ import annotations

from ..domain.errors import ValidationError
from ..domain.model import add_days
from .base import ServiceBase
from .notebook_answers import ActivityAnswer, ActivityDay
from .shown import notebook_view

MAX_DAYS = 366


class ActivityOps(ServiceBase):
    def activity(self, *, notebook: str, days: int = 30) -> ActivityAnswer:
        """The events of `notebook` and its memories in the last `days` days (today
        included), by day and operation, oldest day first."""
        if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
            raise ValidationError(f"`days` is a whole number from 1 to {MAX_DAYS}.", field="days")
        now = self.clock()
        span = [add_days(now, offset)[:10] for offset in range(1 - days, 1)]
        with self.store.read(self.workspace) as tx:
            nb = self._find_notebook(tx, notebook)
            counted = tx.event_days(nb.id, span[0])
        by_day: dict[str, ActivityDay] = {day: {"day": day, "total": 0, "ops": {}} for day in span}
        for found in counted:
            day = by_day.get(found.day)
            if day is None:  # an event stamped after now (a clock set back): not in the span
                continue
            day["ops"][found.op] = found.events
            day["total"] += found.events
        activity = list(by_day.values())
        total = sum(d["total"] for d in activity)
        return {"notebook": notebook_view(nb), "days": days, "activity": activity, "total": total}

"""A whole workspace as rows and back, for a lossless copy between stores (the same SQL on
both): dumped table by table in an order a load can replay."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .rows import Row
from .session_base import SessionBase, marks


class CopyRows(SessionBase):
    """The copying part of a store session."""

    def dump(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every row of this workspace, table by table, in an order `load` can replay."""
        for table, order in COPY_ORDER:
            if table == "memory_vectors":
                yield from self._dump_vectors()
                continue
            rows = self._cursor(
                f"SELECT * FROM {table} WHERE workspace = ? ORDER BY {order}", (self.workspace,)
            )
            for row in rows:
                yield table, {k: v for k, v in dict(row).items() if k not in DERIVED}

    def _dump_vectors(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Vectors as little-endian float32 bytes, whichever store holds them."""
        rows = self._cursor(
            f"SELECT mv.version_rowid, mv.model, {self.VECTOR_OUT} AS vector "
            "FROM memory_vectors mv WHERE mv.workspace = ? ORDER BY mv.version_rowid",
            (self.workspace,),
        )
        for row in rows:
            vector = self._vector_from(row["vector"]).astype("<f4").tobytes()
            yield "memory_vectors", {**dict(row), "vector": vector}

    def load(self, records: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Replay `dump` records into this (empty) workspace; returns the rows per table.

        Sequence numbers are handed out anew, in the same order (a store's sequence is
        shared by its workspaces), and the versions' spans follow them.
        """
        seqs: dict[int, int] = {}
        rowids: dict[int, int] = {}  # a version's row in the source -> its row here
        counts: dict[str, int] = {}
        for table, row in records:
            values = {**row, "workspace": self.workspace}
            if table == "memory_vectors":
                import numpy as np

                vector = np.frombuffer(row["vector"], dtype="<f4").astype(np.float32)
                self._put_vector_row(rowids[row["version_rowid"]], vector, row["model"])
                counts[table] = counts.get(table, 0) + 1
                continue
            if table == "events":
                values.pop("seq")
            elif table == "memory_versions":
                values.pop("rowid")
                values["from_seq"] = seqs[row["from_seq"]]
                values["to_seq"] = seqs[row["to_seq"]] if row["to_seq"] is not None else None
                if not row["scrubbed"]:
                    values.update(self._search_values(values))
            elif table == "dispute_versions":
                values = self._copied_dispute(values, seqs)
            insert = f"INSERT INTO {table}({', '.join(values)}) VALUES ({marks(values)})"
            if table == "events":
                inserted = self._row(insert + " RETURNING seq", tuple(values.values()))
                seqs[row["seq"]] = int(inserted["seq"]) if inserted else 0
            elif table == "memory_versions":
                inserted = self._row(insert + " RETURNING rowid", tuple(values.values()))
                if inserted:
                    rowids[row["rowid"]] = int(inserted["rowid"])
                if inserted and not row["scrubbed"]:
                    self._indexed(int(inserted["rowid"]), values)
            else:
                self._run(insert, tuple(values.values()))
            counts[table] = counts.get(table, 0) + 1
        return counts

    def table_rows(self, table: str) -> Iterator[Row]:
        """Every row of this workspace in `table` (one of COPY_ORDER's), in its copy order,
        streamed."""
        order = dict(COPY_ORDER)[table]
        return self._cursor(
            f"SELECT * FROM {table} WHERE workspace = ? ORDER BY {order}", (self.workspace,)
        )

    def ids_held(self, table: str, column: str, ids: Sequence[str]) -> dict[str, str]:
        """Which of `ids` `column` of `table` holds already, in any workspace of the store:
        id -> that workspace (ids are unique store-wide)."""
        held: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._rows(
                f"SELECT {column} AS id, workspace FROM {table} WHERE {column} IN ({marks(chunk)})",
                chunk,
            )
            held.update({row["id"]: row["workspace"] for row in rows})
        return held

    def is_empty(self) -> bool:
        return self.last_event() is None and not self.list_notebooks()

    @staticmethod
    def _copied_dispute(values: dict[str, Any], seqs: dict[int, int]) -> dict[str, Any]:
        """A dispute version row of a `dump`, its spans renumbered for this store."""
        values.pop("rowid")
        values["from_seq"] = seqs[values["from_seq"]]
        values["to_seq"] = seqs[values["to_seq"]] if values["to_seq"] is not None else None
        return values


# Tables of a workspace in the order a copy writes them (what a row refers to comes first).
COPY_ORDER = (
    ("notebooks", "id"),
    ("memories", "id"),
    ("events", "seq"),
    ("memory_versions", "rowid"),
    ("memory_vectors", "version_rowid"),
    ("links", "id"),
    ("idempotency", "key"),
    ("idempotency_targets", "key, target_id"),
    ("notebook_tombstones", "id"),
    ("workspace_settings", "name"),
    ("dispute_versions", "rowid"),
    ("seen_commands", "seen_at, id"),  # the guard's, for trials: they come along too
    ("users", "name"),
    ("access_keys", "created_at, id"),  # hashes only: the same keys work on the copy
)
# Columns a store derives from the content (PostgreSQL's search): a copy makes them anew.
DERIVED = frozenset({"search", "search_counts", "search_length", "screened"})

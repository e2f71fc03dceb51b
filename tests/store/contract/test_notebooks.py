"""NotebookReader / NotebookWriter (store/protocols.py): notebooks by id or name, links,
and a notebook forgotten for good."""

from __future__ import annotations

from dataclasses import replace

from palimpsest.domain.model import Link, Tombstone
from palimpsest.store import EventFilter, Store

from .records import at, event, filed, memory, new_id, notebook, revised


def link(workspace: str, source_id: str, target_id: str, second: int) -> Link:
    return Link(new_id("ln"), workspace, source_id, target_id, "relates_to", at(second),
                "user:ann")  # fmt: skip


def test_a_notebook_is_found_by_id_or_name_and_put_replaces_it(
    store: Store, workspace: str
) -> None:
    first = notebook(workspace, "beta", summary="the first")
    with store.write(workspace) as tx:
        tx.put_notebook(first)
        # A notebook named as another's id: the id wins.
        tx.put_notebook(notebook(workspace, first.id))
        tx.put_notebook(notebook(workspace, "alpha"))
        renamed = replace(first, name="gamma", summary="renamed", created_at=at(30))
        tx.put_notebook(renamed)
    with store.read(workspace) as tx:
        kept = replace(renamed, created_at=first.created_at)  # its creation time stays
        assert tx.get_notebook(first.id) == kept
        assert tx.get_notebook("gamma") == kept
        assert tx.get_notebook("beta") is None
        assert [n.name for n in tx.list_notebooks()] == ["alpha", "gamma", first.id]
    with store.read(f"{workspace}-other") as tx:
        assert tx.get_notebook(first.id) is None and tx.list_notebooks() == []


def test_links_are_listed_from_and_to_an_object_oldest_first(store: Store, workspace: str) -> None:
    a, b, c = new_id("m"), new_id("m"), new_id("m")
    later, earlier, other = (
        link(workspace, a, b, 20),
        link(workspace, c, a, 10),
        link(workspace, b, c, 5),
    )
    with store.write(workspace) as tx:
        for each in (later, earlier, other):
            tx.add_link(each)
    with store.read(workspace) as tx:
        assert tx.links(a) == [earlier, later]
    with store.write(workspace) as tx:
        tx.remove_link(earlier.id)
    with store.read(workspace) as tx:
        assert tx.links(a) == [later]
        assert tx.links(c) == [other]


def test_a_forgotten_notebook_leaves_a_tombstone_and_no_row_name_or_link(
    store: Store, workspace: str
) -> None:
    nb = notebook(workspace, new_id("secret-project"))
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        made = tx.append_event(event("notebook.create", nb.id, target_type="notebook",
                                     data={"name": nb.name}))  # fmt: skip
        tx.add_link(link(workspace, nb.id, new_id("m"), 3))
        tombstone = Tombstone(nb.id, at(9), "user:ann", "named a client")
        seq = tx.append_event(event("notebook.forget", nb.id, target_type="notebook"))
        tx.forget_notebook(tombstone, seq)
    with store.read(workspace) as tx:
        assert tx.get_notebook(nb.id) is None and tx.get_notebook(nb.name) is None
        assert tx.get_notebook_tombstone(nb.id) == tombstone
        assert tx.links(nb.id) == []
        created = [e for e in tx.events(EventFilter(target_id=nb.id)) if e.seq == made]
        assert created[0].data == {}
        assert nb.id in {p.target_id for p in tx.pending_scrubs()}


def test_forget_notebook_field_erases_the_fields_past_values_only(
    store: Store, workspace: str
) -> None:
    nb = notebook(workspace, "plain")
    with store.write(workspace) as tx:
        tx.put_notebook(nb)
        past = {"summary": "the client is Acme", "domain": "ops"}
        old = tx.append_event(event("notebook.revise", nb.id, target_type="notebook", data=past))
        seq = tx.append_event(event("notebook.forget_field", nb.id, target_type="notebook"))
        tx.forget_notebook_field(nb.id, "summary", seq)
        after = tx.append_event(event("notebook.revise", nb.id, target_type="notebook",
                                      data={"summary": "a new summary"}))  # fmt: skip
    with store.read(workspace) as tx:
        data = {e.seq: e.data for e in tx.events(EventFilter(target_id=nb.id))}
        assert data[old] == {"domain": "ops"}
        assert data[after] == {"summary": "a new summary"}
        assert tx.get_notebook(nb.id) == nb
        assert nb.id in {p.target_id for p in tx.pending_scrubs()}


def test_notebook_counts_count_current_memories_active_ones_and_active_rules(
    store: Store, workspace: str
) -> None:
    held, empty = notebook(workspace, new_id("held")), notebook(workspace, new_id("empty"))
    rule = memory(workspace, held.id, "Never push on Friday", kind="rule", severity="costly",
                  falsifier="a Friday push that went well")  # fmt: skip
    guide = memory(workspace, held.id, "Prefer small commits", kind="orientation",
                   falsifier="big commits reviewed as fast")  # fmt: skip
    fact, gone = memory(workspace, held.id, "The pool is 20"), memory(workspace, held.id, "x")
    with store.write(workspace) as tx:
        for nb in (held, empty):
            tx.put_notebook(nb)
        for each in (rule, guide, fact, gone):
            filed(tx, each)
        revised(tx, rule, status="retracted")  # retired: held, not active, no rule
        revised(tx, fact, text="The pool is 40")  # a new version is still one memory
        seq = tx.append_event(event("forget", gone.id))
        tx.forget_memory(Tombstone(gone.id, at(9), "user:ann", "pasted by mistake"), seq)
    with store.write(f"{workspace}-other") as tx:  # a memory of another workspace, under that id
        filed(tx, memory(f"{workspace}-other", held.id, "theirs"))
    with store.read(workspace) as tx:
        counts = tx.notebook_counts()
    assert counts[held.id] == (3, 2, 1)
    assert counts[held.id].rules == 1 and empty.id not in counts

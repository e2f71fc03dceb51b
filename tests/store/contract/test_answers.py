"""AnswerReader / AnswerWriter (store/protocols.py): answers of requests with an idempotency
key, by (actor, op, key), that go with a memory they name when it is forgotten."""

from __future__ import annotations

import json

from palimpsest.domain.model import Tombstone
from palimpsest.store import Store, StoredResponse

from .records import at, event, filed, memory


def test_a_stored_answer_is_read_by_actor_op_and_key(store: Store, workspace: str) -> None:
    answer = StoredResponse("h" * 64, json.dumps({"id": "m_x", "version": 1}))
    with store.write(workspace) as tx:
        tx.store_response("user:ann", "remember", "k1", answer)
    with store.read(workspace) as tx:
        assert tx.stored_response("user:ann", "remember", "k1") == answer
        assert tx.stored_response("user:bob", "remember", "k1") is None
        assert tx.stored_response("user:ann", "revise", "k1") is None
    with store.read(f"{workspace}-other") as tx:
        assert tx.stored_response("user:ann", "remember", "k1") is None


def test_an_answer_naming_a_forgotten_memory_goes_with_it(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "The code is 9911")
        filed(tx, m)
        naming = StoredResponse("h" * 64, json.dumps({"hits": [{"id": m.id}]}))
        other = StoredResponse("i" * 64, json.dumps({"id": "m_other", "text": m.id}))
        tx.store_response("user:ann", "remember", "k-naming", naming)
        tx.store_response("user:ann", "remember", "k-other", other)
        seq = tx.append_event(event("forget", m.id))
        tx.forget_memory(Tombstone(m.id, at(9), "user:ann", "a secret"), seq)
    with store.read(workspace) as tx:
        assert tx.stored_response("user:ann", "remember", "k-naming") is None
        assert tx.stored_response("user:ann", "remember", "k-other") == other  # text, not an id

"""GuardReader / GuardWriter (store/protocols.py): the rules holding a `forbidden` check,
and the commands seen, kept a while and a number."""

from __future__ import annotations

from palimpsest.domain.model import Check, SeenCommand
from palimpsest.store import Store

from .records import at, filed, memory, new_id, revised


def test_forbidding_rules_are_the_current_active_rules_with_a_forbidden_check(
    store: Store, workspace: str
) -> None:
    forbidden = Check("forbidden", literal="rm -rf /")
    with store.write(workspace) as tx:
        rule = memory(workspace, "nb_a", "Never wipe the disk", kind="rule", check=forbidden)
        filed(tx, rule)
        orientation = memory(workspace, "nb_a", "No force pushes", kind="orientation",
                             check=Check("forbidden", literal="git push --force"))  # fmt: skip
        filed(tx, orientation)
        filed(tx, memory(workspace, "nb_a", "Keep tests green", kind="rule",
                         check=Check("path_exists", path="tests")))  # fmt: skip
        filed(tx, memory(workspace, "nb_a", "A fact naming rm -rf", check=forbidden))
        dropped = memory(workspace, "nb_a", "No sudo", kind="rule",
                         check=Check("forbidden", literal="sudo"))  # fmt: skip
        filed(tx, dropped)
        revised(tx, dropped, status="retracted")
    with store.read(workspace) as tx:
        assert {m.id for m in tx.forbidding_rules()} == {rule.id, orientation.id}
    with store.read(f"{workspace}-other") as tx:
        assert tx.forbidding_rules() == []


def seen(second: int, command: str = "ls") -> SeenCommand:
    return SeenCommand(new_id("seen"), at(second), command, "allow", "nb_a", "session-1")


def test_seen_commands_keep_the_newest_within_their_time_and_number(
    store: Store, workspace: str
) -> None:
    commands = [seen(n, f"make step{n}") for n in range(1, 6)]
    with store.write(workspace) as tx:
        for command in commands[:4]:
            tx.add_seen_command(command, keep=10, before=at(0))
        tx.add_seen_command(commands[4], keep=3, before=at(2))  # the oldest two go
    with store.read(workspace) as tx:
        assert tx.seen_commands(at(0)) == commands[2:]
        assert tx.seen_commands(at(4)) == commands[3:]
        assert tx.get_seen_command(commands[0].id) is None
        assert tx.get_seen_command(commands[3].id) == commands[3]
    with store.read(f"{workspace}-other") as tx:
        assert tx.seen_commands(at(0)) == []


def test_a_forgotten_seen_command_is_gone_and_pending_its_scrub(
    store: Store, workspace: str
) -> None:
    command = seen(1, "export TOKEN=abc")
    with store.write(workspace) as tx:
        tx.add_seen_command(command, keep=10, before=at(0))
        tx.forget_seen_command(command.id)
    with store.read(workspace) as tx:
        assert tx.get_seen_command(command.id) is None and tx.seen_commands(at(0)) == []
        assert command.id in {p.target_id for p in tx.pending_scrubs()}

"""Who holds a loopback connection: the user this server runs as, or another of the machine.

The server acts for its local owner without a key in two places: a store with no keys yet
(every request on loopback, mcp/keys.py), and `palimpsest web`'s one-time link and the
session it opens (web/). Either would hand the owner's memory to any other user of the
machine who connects to 127.0.0.1; so each asks the kernel whose connection it is.
"""

from __future__ import annotations

import os
import socket

PROC_NET = ("/proc/net/tcp", "/proc/net/tcp6")  # Linux: every TCP socket, and its owner


def peer_is_this_user(client: tuple[str, int] | None, server: tuple[str, int] | None) -> bool:
    """Whether the loopback connection from `client` to `server` (address, port each) is
    held by a process of the user this server runs as.

    A link's token can reach another user of this machine: the browser is opened with it
    in its command line, which every user can read (`/proc/PID/cmdline`). On Linux the
    kernel says who owns each TCP socket (`/proc/net/tcp`, the uid column): a connection
    held by another user is refused. Root's is not: root may read the store itself, and
    relays root runs (WSL's forwarding of a Windows browser's localhost) are root's.
    Where that is not known (no /proc), any is let in.
    """
    if not os.path.exists(PROC_NET[0]):
        return True
    if client is None or server is None:
        return False
    for path, ipv6 in zip(PROC_NET, (False, True), strict=True):
        ends = (_proc_address(*client, ipv6), _proc_address(*server, ipv6))
        try:
            with open(path, encoding="ascii") as table:
                for line in table:
                    fields = line.split()  # sl, local, remote, state, queues, tr, retr, uid
                    if len(fields) > 7 and (fields[1], fields[2]) == ends:
                        return int(fields[7]) in (os.geteuid(), 0)
        except OSError:
            continue
    return False


def _proc_address(host: str, port: int, ipv6: bool) -> str | None:
    """`host:port` as /proc/net/tcp(6) writes it: each 32-bit word in host byte order (the
    little-endian machines Linux runs on here), the port in hex."""
    try:
        packed = socket.inet_pton(socket.AF_INET, host)
        if ipv6:
            packed = bytes(10) + b"\xff\xff" + packed  # as an IPv6 socket sees it
    except OSError:
        if not ipv6:
            return None
        packed = socket.inet_pton(socket.AF_INET6, host)
    words = "".join(packed[i : i + 4][::-1].hex().upper() for i in range(0, len(packed), 4))
    return f"{words}:{port:04X}"

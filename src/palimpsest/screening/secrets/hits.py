"""What the detector reports: a `Finding` for the caller, a ranked `Hit` inside, and how
overlapping hits merge into one finding."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """A credential found in a text: its kind and the span ``[start, end)`` of its value."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str
    start: int
    end: int
    rank: int  # lower is more specific: it names a merged finding


def merge(hits: list[Hit]) -> list[Finding]:
    """One finding per cluster of overlapping hits: their union, named by the best rank."""
    findings: list[Finding] = []
    hits.sort(key=lambda h: (h.start, -h.end))
    cluster: list[Hit] = []
    cluster_end = -1
    for hit in [*hits, None]:
        if hit is not None and hit.start < cluster_end:
            cluster.append(hit)
            cluster_end = max(cluster_end, hit.end)
            continue
        if cluster:
            best = min(cluster, key=lambda h: h.rank)
            findings.append(Finding(best.kind, cluster[0].start, cluster_end))
        if hit is not None:
            cluster, cluster_end = [hit], hit.end
    return findings

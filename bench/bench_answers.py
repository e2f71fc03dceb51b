"""Characters per MCP answer: what an agent pays for recall, inspect, history and orient.

The project dev set (src/palimpsest/evaluation/devsets/projects, shipped) is filed into a temporary
store; one memory of it is revised three times (four versions). Then, through the official
MCP client against the real server in process, it asks every dev question as a recall
(limit 10), inspects and reads the history of the revised memory, and orients in each
notebook, and prints the characters of each answer's text block (what most clients hand
the model): the mean per call, and for recall the mean per hit.

    .venv/bin/python bench/bench_answers.py [--embedder minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import TextContent

from palimpsest.evaluation.devset import SHIPPED, file_devset, read_devset
from palimpsest.mcp import build_server
from palimpsest.service import Service


async def _text(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    block = result.content[0]
    assert isinstance(block, TextContent) and not result.is_error, block
    return block.text


async def measure(service: Service, questions: list[dict[str, Any]], revised: str) -> None:
    server = build_server(service)
    sizes: dict[str, list[int]] = {"recall": [], "inspect": [], "history": [], "orient": []}
    hits = 0
    async with Client(server) as client:
        for question in questions:
            asked = {k: v for k, v in question.items() if k in ("notebook",)}
            answer = await client.call_tool("recall", {"query": question["question"], **asked})
            assert answer.structured_content is not None
            hits += len(answer.structured_content.get("hits", []))
            sizes["recall"].append(len(answer.content[0].text))  # type: ignore[union-attr]
        sizes["inspect"].append(len(await _text(client, "inspect", id=revised)))
        sizes["history"].append(len(await _text(client, "history", id=revised)))
        notebooks = sorted({q["notebook"] for q in questions if q.get("notebook")})
        for notebook in notebooks:
            sizes["orient"].append(len(await _text(client, "orient", notebook=notebook)))
    server.close()
    for tool, counted in sizes.items():
        print(f"{tool:8} {len(counted):4} calls, {statistics.fmean(counted):8,.0f} characters each")
    print(f"recall   {hits / len(questions):.1f} hits a call, "
          f"{sum(sizes['recall']) / max(hits, 1):,.0f} characters a hit")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    memories, questions = read_devset(SHIPPED)
    with tempfile.TemporaryDirectory(prefix="palimpsest-bench-") as scratch:
        service, labels = file_devset(Path(scratch) / "answers.db", memories, args.embedder,
                                      "user:local")  # fmt: skip
        revised = next(iter(labels))
        for n, note in enumerate(["tightened", "a typo", "the owner asked"], 1):
            service.revise(id=revised, append=f" (revision {n})", note=note)
        asyncio.run(measure(service, questions, revised))
        service.store.close()


if __name__ == "__main__":
    main()

"""Drives an MCP server with the Python `mcp` client, one JSON line per command.

The tests of clients that cannot receive tasks run this as a real Python host would run its
client: it declares no tasks capability (the client has none), and it makes only plain
`tools/list` and `tools/call` requests over Streamable HTTP. The test decides what to call:

- stdin, one JSON object a line: {"id": 1, "op": "list"} or
  {"id": 2, "op": "call", "name": "task_wait", "arguments": {...}}.
  Commands run concurrently, so a test can hold a `task_wait` open while it makes other calls.
- stdout, one JSON object a line: {"event": "ready", ...} once connected; then for each command
  {"id": n, "result": {...}} (the result as the client parsed it, in wire spelling), or
  {"id": n, "error": {"code", "message", "data"}} for a JSON-RPC error, or
  {"id": n, "exception": "..."} when the client itself refused the answer (say, a
  structuredContent that fails the tool's outputSchema). With --elicit, each elicitation the
  client answers is reported as {"event": "elicitation", "message", "requestedSchema"}.

Closing stdin ends the script.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run_command(client: Client, command: dict[str, Any]) -> None:
    command_id = command.get("id")
    try:
        if command["op"] == "list":
            result = await client.list_tools(cache_mode="refresh")
        elif command["op"] == "call":
            result = await client.call_tool(command["name"], command.get("arguments") or {})
        else:
            raise ValueError(f"unknown op {command['op']!r}")
        emit({"id": command_id, "result": dump(result)})
    except MCPError as error:
        emit({"id": command_id, "error": dump(error.error)})
    except Exception as error:  # the client refused what the server sent: the test shows why
        emit({"id": command_id, "exception": f"{type(error).__name__}: {error}"})


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--mode", required=True, help="'legacy' (2025-11-25) or a modern revision (2026-07-28)")
    parser.add_argument("--token", help="a bearer token to send on every request")
    parser.add_argument("--elicit", help="declare elicitation and accept every form with this JSON content")
    args = parser.parse_args()

    elicitation_callback = None
    if args.elicit is not None:
        content = json.loads(args.elicit)

        async def elicitation_callback(
            _context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult:
            emit(
                {
                    "event": "elicitation",
                    "message": params.message,
                    "requestedSchema": getattr(params, "requested_schema", None),
                }
            )
            return types.ElicitResult(action="accept", content=content)

    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    async with create_mcp_http_client(headers=headers) as http_client:
        transport = streamable_http_client(args.url, http_client=http_client)
        async with Client(
            transport,
            mode=args.mode,
            client_info=types.Implementation(name="python-unaware-e2e", version="1.0.0"),
            elicitation_callback=elicitation_callback,
            cache=None,
        ) as client:
            emit({"event": "ready", "protocolVersion": client.protocol_version})
            async with anyio.create_task_group() as group:
                async for line in anyio.wrap_file(sys.stdin):
                    if line.strip():
                        group.start_soon(run_command, client, json.loads(line))


if __name__ == "__main__":
    anyio.run(main)

"""The HTTP benchmark's Python peer: the official Python SDK's MCPServer serving `geomap_capabilities` and
`geomap_lookup` over its streamable HTTP transport (uvicorn), with the SDK's defaults.

It answers each tool with the result the real server gave for the benchmark's arguments (read from a
JSON file), so the peer does the least work a tool can do: the comparison measures the transport and
the SDK, and flatters the peer. Usage: peer_mcp_http.py RESULTS_JSON PORT
"""

import json
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult


def main() -> None:
    results = json.loads(open(sys.argv[1]).read())
    port = int(sys.argv[2])
    server = MCPServer("geomap-peer", log_level="WARNING")
    capabilities = CallToolResult.model_validate(results["geomap_capabilities"])
    lookup = CallToolResult.model_validate(results["geomap_lookup"])

    @server.tool(name="geomap_capabilities")
    def geomap_capabilities() -> CallToolResult:
        """What this server can do."""
        return capabilities

    @server.tool(name="geomap_lookup")
    def geomap_lookup(term: str, providers: list[str] | None = None, language: str | None = None) -> CallToolResult:
        """Looks a term up."""
        return lookup

    anyio.run(lambda: server.run_streamable_http_async(host="127.0.0.1", port=port))


if __name__ == "__main__":
    main()

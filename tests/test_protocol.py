"""The MCP surface in both protocol eras: tools, annotations, schemas, server info, capabilities."""

import json
import re
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from conftest import TRACE_ID

pytestmark = pytest.mark.anyio

def documented_tools() -> dict[str, tuple[bool, bool, bool]]:
    """README's tool table (a unit test keeps it equal to the server's one list of tools):
    name -> (readOnlyHint, idempotentHint, openWorldHint)."""
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    rows = re.findall(r"^\| `(geomap_\w+) \{[^`]*\}` \| .* \| ([a-z -]+(?:, [a-z -]+)*) \|$", readme, re.MULTILINE)
    tools = {}
    for name, words in rows:
        hints = [word.strip() for word in words.split(",")]
        tools[name] = ("read-only" in hints, "idempotent" in hints, "open world" in hints)
    assert len(tools) >= 12, "README's tool table was not found"
    return tools


DOCUMENTED_TOOLS = documented_tools()


async def test_tools_list_has_every_tool_with_truthful_annotations(server, era):
    async with server.connect(era) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(DOCUMENTED_TOOLS)
    for name, (read_only, idempotent, open_world) in DOCUMENTED_TOOLS.items():
        annotations = tools[name].annotations
        assert (annotations.read_only_hint, annotations.idempotent_hint, annotations.open_world_hint) == (read_only, idempotent, open_world), name
        assert annotations.destructive_hint is False, name
        schema = tools[name].output_schema
        assert schema["type"] == "object"
        envelope_branch = schema["anyOf"][1]
        assert envelope_branch["properties"]["schema"]["enum"] == ["geomap-error/v1"], envelope_branch


@pytest.mark.parametrize("mode, expected_version", [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_both_eras_negotiate_and_identify_the_server(server, mode, expected_version):
    async with server.connect(mode) as client:
        assert client.protocol_version == expected_version
        assert client.server_info.name == "stratigraphic-amenity"
        assert client.server_info.version
        assert "trace_id" in client.instructions and "recovery_hints" in client.instructions
        result = await client.call_tool("geomap_capabilities", {})
        assert result.is_error is False
        assert result.structured_content["server"]["version"] == client.server_info.version


async def test_capabilities_report_tools_roots_limits_and_data_root(server, era):
    async with server.connect(era) as client:
        result = await client.call_tool("geomap_capabilities", {})
    caps = result.structured_content
    assert result.is_error is False
    assert json.loads(result.content[0].text) == caps
    assert {tool["name"] for tool in caps["tools"]} == set(DOCUMENTED_TOOLS)
    waiting = {tool["name"]: tool["unavailable_code"] for tool in caps["tools"] if not tool["ready"]}
    assert waiting == {
        "geomap_lookup": "missing_knowledge_asset",
        "geomap_query_knowledge": "missing_knowledge_asset",
        "geomap_process_image": "missing_extra",
        "geomap_read_text": "missing_extra",
    }, "no knowledge asset, detector or OCR model is installed yet"
    assert [provider["name"] for provider in caps["providers"]] == ["ics-timescale", "cgi-lithology", "k2-rocks", "usgs-seismicity"]
    assert caps["map_roots"] == [{"index": 0, "path": str(server.map_root), "resolves_relative_paths": True}]
    assert caps["media"]["supported"] == ["image/png", "image/jpeg", "image/tiff", "application/vnd.geomap.map-bundle+json"]
    assert caps["media"]["max_image_pixels"] == 150_000_000
    assert caps["data_root"] == {"path": str(server.data_root), "state": "ready", "registered_maps": 0, "revisions": 0, "knowledge_bundles": 0}
    line = server.tool_call_lines()[-1]
    assert (line["tool"], line["outcome"]) == ("geomap_capabilities", "ok")


async def test_an_unknown_tool_is_a_protocol_error_carrying_the_envelope(server, era):
    async with server.connect(era) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("geomap_teleport", {})
    error = raised.value.error
    assert error.code == -32602
    envelope = error.data
    assert envelope["schema"] == "geomap-error/v1" and envelope["code"] == "unknown_tool"
    assert TRACE_ID.match(envelope["trace_id"])
    assert "unknown_tool" in error.message and envelope["trace_id"] in error.message
    assert "geomap_register_map" in envelope["details"]["offered"]
    assert envelope["recovery_hints"]
    line = server.tool_call_line(envelope["trace_id"])
    assert (line["tool"], line["outcome"]) == ("geomap_teleport", "unknown_tool")


async def test_every_call_gets_its_own_trace_id_and_one_log_line(server):
    async with server.connect() as client:
        for _ in range(3):
            await client.call_tool("geomap_capabilities", {})
    lines = server.tool_call_lines()
    assert len(lines) == 3
    assert len({line["trace_id"] for line in lines}) == 3

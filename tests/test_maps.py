"""Registering and describing maps, and maps as MCP resources."""

import hashlib
import os

import pytest

from conftest import assert_envelope, pillow_image, png

pytestmark = pytest.mark.anyio


async def register(client, path):
    return await client.call_tool("geomap_register_map", {"path": str(path)})


async def test_register_describe_and_read_as_a_resource(server, era):
    scan = png(server.map_root / "quad" / "scan.png", 64, 48)
    async with server.connect(era) as client:
        result = await register(client, "quad/scan.png")
        assert result.is_error is False, result
        report = result.structured_content
        assert report["media_type"] == "image/png"
        assert (report["width"], report["height"]) == (64, 48)
        assert report["bytes"] == scan.stat().st_size
        assert report["sha256"] == hashlib.sha256(scan.read_bytes()).hexdigest()
        assert report["source"] == {"root_index": 0, "relative_path": "quad/scan.png"}
        assert report["already_registered"] is False
        map_id = report["map_id"]
        uri = f"geomap://maps/{map_id}"
        links = [block for block in result.content if block.type == "resource_link"]
        assert [str(link.uri) for link in links] == [uri]

        described = await client.call_tool("geomap_describe_map", {"map_id": map_id})
        assert described.is_error is False
        assert described.structured_content["sha256"] == report["sha256"]
        assert "already_registered" not in described.structured_content

        listed = await client.list_resources()
        assert [str(resource.uri) for resource in listed.resources] == [uri]
        read = await client.read_resource(uri)
        assert read.contents[0].mime_type == "application/json"
        assert f'"map_id": "{map_id}"' in read.contents[0].text
        templates = await client.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "geomap://maps/{map_id}"


async def test_the_same_unchanged_file_keeps_its_map_id(server, era):
    png(server.map_root / "a.png", 8, 8)
    async with server.connect(era) as client:
        first = (await register(client, "a.png")).structured_content
        again = (await register(client, server.map_root / "a.png")).structured_content
    assert again["map_id"] == first["map_id"]
    assert again["already_registered"] is True
    assert len(server.registry()["maps"]) == 1


@pytest.mark.parametrize("fmt, media_type", [("JPEG", "image/jpeg"), ("TIFF", "image/tiff")])
async def test_jpeg_and_tiff_are_sniffed_and_measured(server, fmt, media_type):
    pillow_image(server.map_root / "scan.bin", 300, 200, fmt)  # the extension says nothing
    async with server.connect() as client:
        report = (await register(client, "scan.bin")).structured_content
    assert (report["media_type"], report["width"], report["height"]) == (media_type, 300, 200)


async def test_a_changed_or_vanished_file_is_artifact_not_found(server, era):
    changed = png(server.map_root / "changed.png", 8, 8)
    vanished = png(server.map_root / "vanished.png", 8, 8)
    async with server.connect(era) as client:
        changed_id = (await register(client, "changed.png")).structured_content["map_id"]
        vanished_id = (await register(client, "vanished.png")).structured_content["map_id"]
        png(changed, 8, 8, color=(1, 2, 3))  # same size, new content
        os.utime(changed, ns=(1, 1))
        vanished.unlink()
        for map_id, reason in [(changed_id, "file_changed"), (vanished_id, "file_missing"), ("map_00000000000000000000", "unknown_map_id")]:
            result = await client.call_tool("geomap_describe_map", {"map_id": map_id})
            envelope = assert_envelope(result, "artifact_not_found", server, tool="geomap_describe_map")
            next_call = envelope["details"].pop("next_call", None)
            assert envelope["details"] == {"map_id": map_id, "reason": reason}
            # A map registered once is registered again by its path; an ID never registered has no path to give.
            path = {changed_id: "changed.png", vanished_id: "vanished.png"}.get(map_id)
            assert next_call == (path and {"tool": "geomap_register_map", "arguments": {"path": path}, "ask_user": False}), next_call
            assert "geomap_register_map" in envelope["recovery_hints"][0]
            assert "geomap_register_map" in envelope["message"], "the message repeats the remedy"


async def test_reading_an_unknown_map_resource_is_an_error_with_the_envelope(server, era):
    from mcp.shared.exceptions import MCPError

    async with server.connect(era) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("geomap://maps/map_ffffffffffffffffffff")
    envelope = raised.value.error.data
    assert envelope["code"] == "artifact_not_found"
    assert envelope["details"]["reason"] == "unknown_map_id"

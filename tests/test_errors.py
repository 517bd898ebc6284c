"""Every error this server can produce for a map: code, details, hints, digest and log line."""

import os
from pathlib import Path

import pytest

from conftest import assert_envelope, png, png_header_only

pytestmark = pytest.mark.anyio


async def register(client, path):
    return await client.call_tool("geomap_register_map", {"path": path})


@pytest.fixture
def escape_corpus(server):
    """A map root with a sibling that shares its name as a prefix, and links out of it."""
    outside = server.base / "outside"
    png(outside / "secret.png", 4, 4)
    png(server.base / "maps_evil" / "evil.png", 4, 4)
    png(server.map_root / "inside.png", 4, 4)
    (server.map_root / "abs_link.png").symlink_to(outside / "secret.png")
    (server.map_root / "rel_link.png").symlink_to("../outside/secret.png")
    (server.map_root / "dangling_out.png").symlink_to(outside / "missing.png")
    (server.map_root / "dir_link").symlink_to(outside)
    non_utf8 = os.path.join(os.fsencode(server.map_root), b"caf\xe9.png")
    png(Path(os.fsdecode(non_utf8)), 4, 4)
    os.symlink(b"caf\xe9.png", os.path.join(os.fsencode(server.map_root), b"plain_name.png"))
    return server


ESCAPES = [
    # (path relative to the test's base folder or literal, expected reason)
    ("{base}/maps_evil/evil.png", "outside_roots"),  # 2025 filesystem-server escape: prefix sibling
    ("{base}/outside/secret.png", "outside_roots"),
    ("/etc/passwd", "outside_roots"),
    ("../outside/secret.png", "escapes_root"),
    ("{base}/maps/../outside/secret.png", "escapes_root"),
    ("abs_link.png", "escapes_root"),  # 2025 filesystem-server escape: symlink pointing out
    ("rel_link.png", "escapes_root"),
    ("dangling_out.png", "escapes_root"),
    ("dir_link/secret.png", "escapes_root"),
    ("inside.png\u0000.jpg", "nul_byte"),
    ("plain_name.png", "non_utf8_name"),
]


@pytest.mark.parametrize("template, reason", ESCAPES)
async def test_paths_that_leave_the_allowed_roots_are_refused(escape_corpus, template, reason):
    server = escape_corpus
    path = template.format(base=server.base)
    async with server.connect() as client:
        result = await register(client, path)
    envelope = assert_envelope(result, "path_not_allowed", server, tool="geomap_register_map")
    assert envelope["details"]["reason"] == reason
    serialized = str(envelope["details"])
    assert str(server.base) not in serialized, "details must not carry server paths"
    if reason == "non_utf8_name":
        assert "UTF-8" in envelope["recovery_hints"][0]
    else:
        assert any(str(server.map_root) in hint for hint in envelope["recovery_hints"]), "hints name the allowed roots"
    assert envelope["retryable"] is False


async def test_the_escape_corpus_is_refused_in_the_modern_era_too(escape_corpus):
    async with escape_corpus.connect("2026-07-28") as client:
        result = await register(client, "abs_link.png")
    assert_envelope(result, "path_not_allowed", escape_corpus)


async def test_a_missing_file_or_a_folder_is_an_argument_to_fix(server, era):
    (server.map_root / "folder").mkdir()
    async with server.connect(era) as client:
        missing = assert_envelope(await register(client, "nope.png"), "invalid_arguments", server)
        folder = assert_envelope(await register(client, "folder"), "invalid_arguments", server)
    assert missing["details"] == {"reason": "file_not_found", "requested": "nope.png", "field": "/path"}
    assert folder["details"]["reason"] == "not_a_file"


@pytest.mark.parametrize(
    "content, detected",
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF document"),
        (b"GIF89a\x01\x00\x01\x00", "a GIF image"),
        (b"just some text, not a map", "of an unknown type"),
    ],
)
async def test_unsupported_media_names_what_was_detected(server, era, content, detected):
    (server.map_root / "map.png").write_bytes(content)  # the extension lies
    async with server.connect(era) as client:
        envelope = assert_envelope(await register(client, "map.png"), "unsupported_media", server)
    assert envelope["details"] == {"detected": detected, "supported": ["image/png", "image/jpeg", "image/tiff", "application/vnd.geomap.map-bundle+json"]}
    assert any("geomap-map-bundle/v1" in hint for hint in envelope["recovery_hints"])
    assert any("gdal_translate" in hint for hint in envelope["recovery_hints"])


async def test_a_damaged_header_is_unsupported_media(server):
    (server.map_root / "cut.png").write_bytes(png_header_only(server.base / "h.png", 10, 10).read_bytes()[:20])
    async with server.connect() as client:
        envelope = assert_envelope(await register(client, "cut.png"), "unsupported_media", server)
    assert envelope["details"]["reason"] == "unreadable_header"


async def test_a_huge_header_is_refused_before_any_pixel_is_decoded(server, era):
    # 29 bytes on disk that claim 100000×100000 pixels: decoding is impossible, so
    # only a header-only check can answer this; the log line shows how fast it was.
    png_header_only(server.map_root / "huge.png", 100_000, 100_000)
    async with server.connect(era) as client:
        envelope = assert_envelope(await register(client, "huge.png"), "oversize_image", server)
    details = envelope["details"]
    assert (details["limit"], details["limit_value"], details["actual"]) == ("GEOMAP_MAX_IMAGE_PIXELS", 150_000_000, 10_000_000_000)
    assert (details["width"], details["height"]) == (100_000, 100_000)
    assert "gdal_translate -outsize 12% 12%" in envelope["recovery_hints"][0]
    assert "GEOMAP_MAX_IMAGE_PIXELS (now 150000000) to at least 10000000000" in envelope["recovery_hints"][1]
    assert int(server.tool_call_line(envelope["trace_id"])["duration_ms"]) < 1000


async def test_the_byte_limit_is_the_operators_setting(tmp_path):
    from conftest import Server

    server = Server(tmp_path, {"GEOMAP_MAX_IMAGE_BYTES": "1KiB"})
    png(server.map_root / "big.png", 64, 64, noise=True)
    big = (server.map_root / "big.png").stat().st_size
    async with server.connect() as client:
        envelope = assert_envelope(await register(client, "big.png"), "oversize_image", server)
    assert envelope["details"]["limit"] == "GEOMAP_MAX_IMAGE_BYTES"
    assert (envelope["details"]["limit_value"], envelope["details"]["actual"]) == (1024, big)
    assert "GEOMAP_MAX_IMAGE_BYTES (now 1024)" in envelope["recovery_hints"][1]


@pytest.mark.parametrize(
    "tool, arguments, field, problem",
    [
        ("geomap_register_map", {"path": 5}, "/path", "wrong_value"),
        ("geomap_register_map", {}, "/path", "missing"),
        ("geomap_register_map", {"path": "a.png", "pth": "b"}, "/pth", "unknown_field"),
        ("geomap_describe_map", {"map_id": ["x"]}, "/map_id", "wrong_value"),
        ("geomap_capabilities", {"verbose": True}, "/verbose", "unknown_field"),
    ],
)
async def test_invalid_arguments_name_the_field(server, era, tool, arguments, field, problem):
    async with server.connect(era) as client:
        result = await client.call_tool(tool, arguments)
    envelope = assert_envelope(result, "invalid_arguments", server, tool=tool)
    assert envelope["details"]["field"] == field
    assert envelope["details"]["problem"] == problem
    assert envelope["details"]["expected"]
    if problem == "wrong_value":
        assert envelope["details"]["expected"] in ("a string",)


def test_a_malformed_tools_call_still_ends_in_an_envelope(server):
    """The Python SDK refuses to send arguments that are not an object, so this
    one test speaks raw JSON-RPC: such a call fails inside rmcp's own request
    parsing, and must still come back as an envelope."""
    import json
    import subprocess

    from conftest import BINARY

    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "geomap_register_map", "arguments": "a.png"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}},
    ]
    run = subprocess.run(
        [BINARY], input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
        env={**server.env, "PATH": os.environ["PATH"]}, timeout=30,
    )
    responses = {message["id"]: message for message in map(json.loads, run.stdout.splitlines())}
    wrong_shape = responses[2]["result"]
    assert wrong_shape["isError"] is True
    envelope = wrong_shape["structuredContent"]
    assert (envelope["code"], envelope["details"]["field"]) == ("invalid_arguments", "/")
    assert wrong_shape["content"][0]["text"].splitlines()[-3] == f"trace_id: {envelope['trace_id']}"
    nameless = responses[3]["error"]
    assert nameless["code"] == -32602 and nameless["data"]["code"] == "unknown_tool"
    assert f"outcome=invalid_arguments duration_ms=" in run.stderr and "tool=- outcome=unknown_tool" in run.stderr

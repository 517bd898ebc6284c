"""`details.next_call` end to end: for every code whose first recovery hint names an exact tool call
(missing_extra: install the detectors' assets; missing_knowledge_asset: install the knowledge;
artifact_not_found: find the layout first, or register the changed file again), the envelope carries
that call (tool, arguments, ask_user) and an agent that follows next_call alone, asking the user
when it says so, reaches the state the hint promised."""

import hashlib
import json

import pytest

import unit_maps
from conftest import Server, assert_envelope, png
from ta1_schema import assert_ta1
from test_detect import OCR_WHEEL, WHEEL, ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)
from test_providers import CHART, compile_cache  # noqa: F401 (session fixture)

pytestmark = pytest.mark.anyio


async def follow(client, envelope: dict, *, user_agrees: bool):
    """Makes the call `next_call` names, exactly as named; a call that needs the user's agreement is
    made only when they agree."""
    call = envelope["details"]["next_call"]
    assert set(call) == {"tool", "arguments", "ask_user"}, call
    assert call["tool"] in envelope["recovery_hints"][0] and all(json.dumps(value) in envelope["recovery_hints"][0] for value in call["arguments"].values()), (
        "the call is the first hint's",
        call,
        envelope["recovery_hints"][0],
    )
    if call["ask_user"]:
        assert user_agrees, "the user must agree first"
    result = await client.call_tool(call["tool"], call["arguments"])
    assert result.is_error is False, result
    return result


async def test_missing_detectors_then_a_missing_layout_are_fixed_by_following_next_call(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    mirror.files[WHEEL], mirror.files[OCR_WHEEL] = runtime_wheel, ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
    (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    unit_maps.draw(server.map_root / "units.jpg")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "units.jpg"})).structured_content["map_id"]
        # Before any layout, an extraction names the layout call; before the models, that names their download.
        early = assert_envelope(await client.call_tool("geomap_extract_units", {"map_id": map_id}), "artifact_not_found", server)
        assert early["details"]["next_call"] == {"tool": "geomap_process_image", "arguments": {"map_id": map_id}, "ask_user": False}, early
        missing = assert_envelope(await client.call_tool(early["details"]["next_call"]["tool"], early["details"]["next_call"]["arguments"]), "missing_extra", server)
        assert missing["details"]["next_call"] == {
            "tool": "geomap_prepare_detectors",
            "arguments": {"assets": ["peace-yolov10-runtime", "ppocr-v4"]},
            "ask_user": True,
        }, missing["details"]
        await follow(client, missing, user_agrees=True)
        # The hint promised: then the layout call succeeds, and after it the extraction.
        layout = await follow(client, early, user_agrees=False)
        assert layout.structured_content["map_id"] == map_id
        extraction = await client.call_tool("geomap_extract_units", {"map_id": map_id})
    assert extraction.is_error is False, extraction
    # Without ../shared too: the package the extraction wrote passes the schema's own checks.
    assert_ta1(extraction.structured_content["geopackage_path"])


async def test_a_missing_knowledge_asset_is_installed_by_following_next_call(tmp_path, mirror, compile_cache):  # noqa: F811
    chart = CHART.encode()
    mirror.files["chart.ttl"] = chart
    config = tmp_path / "geomap.toml"
    config.write_text(f'[assets.ics-chart.sources."chart.ttl"]\nurl = "{mirror.url}/chart.ttl"\nsize = {len(chart)}\nsha256 = "{hashlib.sha256(chart).hexdigest()}"\n')
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(config)})
    (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
    (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    async with server.connect() as client:
        missing = assert_envelope(await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]}), "missing_knowledge_asset", server)
        assert missing["details"]["next_call"] == {"tool": "geomap_prepare_knowledge", "arguments": {"assets": ["ics-chart"]}, "ask_user": True}, missing
        await follow(client, missing, user_agrees=True)
        found = await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})
    assert found.is_error is False, found


async def test_a_changed_file_is_registered_again_by_following_next_call(tmp_path):
    server = Server(tmp_path)
    path = png(server.map_root / "changed.png", 8, 8)
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "changed.png"})).structured_content["map_id"]
        png(path, 8, 8, color=(1, 2, 3))
        gone = assert_envelope(await client.call_tool("geomap_describe_map", {"map_id": map_id}), "artifact_not_found", server)
        assert gone["details"]["reason"] == "file_changed" and gone["details"]["next_call"] == {
            "tool": "geomap_register_map",
            "arguments": {"path": "changed.png"},
            "ask_user": False,
        }, gone
        again = await follow(client, gone, user_agrees=False)
        described = await client.call_tool("geomap_describe_map", {"map_id": again.structured_content["map_id"]})
    assert described.is_error is False and again.structured_content["map_id"] != map_id, described

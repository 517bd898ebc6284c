"""geomap-map-bundle/v1 end to end: a scan over the pixel limit is refused with a hint that offers a
bundle; the bundle registers, its georeference becomes the map's revision, geomap_process_image
returns its layout with no detector installed, and knowledge queries use its area; malformed bundles
are unsupported_media naming the field, and register nothing."""

import json

import pytest

from conftest import assert_envelope, png
from test_providers import compile_cache, provider_site  # noqa: F401 (compile_cache is a fixture)

pytestmark = pytest.mark.anyio

BUNDLE_MIME = "application/vnd.geomap.map-bundle+json"
JAPAN = {"west": 128, "south": 30, "east": 146, "north": 46}


def bundle(**changes) -> dict:
    document = {
        "schema": "geomap-map-bundle/v1",
        "image": {"width": 1000, "height": 500, "name": "japan.png"},
        "components": [
            {"class": "main_map", "bbox": {"x0": 0, "y0": 0, "x1": 600, "y1": 500}, "score": 0.9},
            {"class": "legend", "bbox": {"x0": 700, "y0": 100, "x1": 950, "y1": 400}},
        ],
        "legend_entries": [
            {"legend": 1, "swatch": {"x0": 710, "y0": 120, "x1": 750, "y1": 150}, "text": {"x0": 760, "y0": 122, "x1": 940, "y1": 148}, "colour_hex": "#FFA500"},
            {"legend": 1, "swatch": {"x0": 710, "y0": 200, "x1": 750, "y1": 230}},
        ],
        "georeference": {"crs": "EPSG:4326", "bounds": JAPAN},
    }
    document.update(changes)
    return document


async def test_an_oversize_scan_is_worked_from_its_bundle(tmp_path, compile_cache, era):  # noqa: F811
    server = provider_site(tmp_path, compile_cache, env={"GEOMAP_MAX_IMAGE_PIXELS": "100000"})
    png(server.map_root / "japan.png", 1000, 500)
    (server.map_root / "japan.layout.json").write_text(json.dumps(bundle(), indent=2))
    async with server.connect(era) as client:
        refused = await client.call_tool("geomap_register_map", {"path": "japan.png"})
        registered = await client.call_tool("geomap_register_map", {"path": "japan.layout.json"})
        map_id = registered.structured_content["map_id"]
        again = await client.call_tool("geomap_register_map", {"path": "japan.layout.json"})
        processed = await client.call_tool("geomap_process_image", {"map_id": map_id})
        stored = await client.read_resource(processed.structured_content["resource_uri"])
        quakes = await client.call_tool("geomap_query_knowledge", {"map_id": map_id})
        warp = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": JAPAN})
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    oversize = assert_envelope(refused, "oversize_image", server)
    assert any("geomap-map-bundle/v1" in hint and str(server.map_root) in hint for hint in oversize["recovery_hints"])

    assert registered.is_error is False, registered
    report = registered.structured_content
    assert (report["media_type"], report["width"], report["height"]) == (BUNDLE_MIME, 1000, 500)
    [revision] = report["revisions"]
    assert revision["wgs84_bounds"] == {"west": 128.0, "south": 30.0, "east": 146.0, "north": 46.0}
    assert (revision["artifacts"], report["current_revision_id"]) == ([], revision["revision_id"])
    assert again.structured_content["already_registered"] is True
    assert [r["revision_id"] for r in again.structured_content["revisions"]] == [revision["revision_id"]], "registering again adds no revision"

    assert processed.is_error is False, processed
    layout = processed.structured_content
    assert (layout["source"], layout["map_id"], layout["models"]) == ("map_bundle", map_id, [])
    assert "preview_uri" not in layout and all("crop_uri" not in c for c in layout["components"])
    assert [(c["class"], c["score"]) for c in layout["components"]] == [("main_map", 0.9), ("legend", 1.0)]
    assert layout["components"][1]["bbox"] == {"x0": 700.0, "y0": 100.0, "x1": 950.0, "y1": 400.0}
    first, second = layout["legend_entries"]
    assert (first["legend"], first["colour_hex"], first["colour_name"]) == (1, "#ffa500", "Orange")
    assert (second["text"], second["colour_hex"], second["colour_name"]) == (None, None, None)
    assert json.loads(stored.contents[0].text) == layout
    assert [link.uri for link in processed.content if link.type == "resource_link"] == [layout["resource_uri"]]

    assert quakes.is_error is False, quakes
    assert (quakes.structured_content["revision_id"], quakes.structured_content["area"]["west"]) == (revision["revision_id"], 128.0)
    assert quakes.structured_content["results"][0]["items"][0]["data"]["count"] == 3, "tohoku, kobe and kumamoto are in the box"

    no_pixels = assert_envelope(warp, "unsupported_media", server, tool="geomap_georeference")
    assert no_pixels["details"] == {"detected": BUNDLE_MIME, "reason": "no_pixels", "action": "georeference"}
    assert BUNDLE_MIME in caps["media"]["supported"]
    assert caps["media"]["map_bundle_schema"]["properties"]["schema"]["type"] == "string"


@pytest.mark.parametrize(
    "content, field",
    [
        (b"{ this is not json", ""),
        (json.dumps({"schema": "geomap-map-bundle/v2"}).encode(), "/schema"),
        (json.dumps({"type": "FeatureCollection", "features": []}).encode(), "/schema"),
        (json.dumps(bundle(image={"width": 1000})).encode(), "/image/height"),
        (json.dumps(bundle(components=[{"class": "legend", "bbox": {"x0": 900, "y0": 0, "x1": 1200, "y1": 10}}], legend_entries=[])).encode(), "/components/0/bbox"),
        (json.dumps(bundle(components=[{"class": "map", "bbox": {"x0": 0, "y0": 0, "x1": 10, "y1": 10}}], legend_entries=[])).encode(), "/components/0/class"),
        (json.dumps(bundle(legend_entries=[{"legend": 0, "swatch": {"x0": 1, "y0": 1, "x1": 2, "y1": 2}}])).encode(), "/legend_entries/0/legend"),
        (json.dumps(bundle(georeference={"crs": "EPSG:999999", "bounds": JAPAN})).encode(), "/georeference"),
        (json.dumps(bundle(georeference={"crs": "EPSG:4326", "bounds": JAPAN, "datum": "WGS84"})).encode(), "/georeference/datum"),
        (json.dumps(bundle(georeference={"crs": "EPSG:4326"})).encode(), "/georeference/bounds"),
    ],
)
async def test_a_malformed_bundle_names_its_field_and_registers_nothing(server, content, field):
    (server.map_root / "layout.json").write_bytes(content)
    async with server.connect() as client:
        result = await client.call_tool("geomap_register_map", {"path": "layout.json"})
    envelope = assert_envelope(result, "unsupported_media", server, tool="geomap_register_map")
    details = envelope["details"]
    assert (details["reason"], details["field"], details["detected"]) == ("invalid_bundle", field, BUNDLE_MIME)
    assert details["problem"] in envelope["message"]
    assert server.registry()["maps"] == {}

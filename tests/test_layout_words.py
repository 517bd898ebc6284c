"""geomap_process_image without PEACE's weights: the layout read from a map's words and colours with the
real ONNX Runtime and PP-OCRv4 models (installed from the loopback mirror), on a map the test draws with
DejaVu Sans where every code, description, age, colour and polygon is known; the ages resolved through
ics-timescale on the real ICS chart, rock names through cgi-lithology; a provider that is not ready is a
warning; and the real USGS scan when it is present."""

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from conftest import Server, assert_envelope, shared_asset
from test_detect import OCR_WHEEL, WHEEL, ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)
from test_providers import compile_cache  # noqa: F401 (session fixture)

pytestmark = pytest.mark.anyio

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
PAPER = (252, 250, 244)
GROUP = "Supai Group (Permian and Pennsylvanian)"
# (code, description, swatch colour, the group heading it is listed under): ten units, the grouped
# ones indented under their heading, which has a row of its own and no swatch.
UNITS = [
    ("Qal", "Alluvium (Holocene)", (250, 235, 150), None),
    ("Tb", "Basalt flows (Pliocene to upper Miocene)", (230, 120, 110), None),
    ("Pc", "Coconino Sandstone (Lower Permian)", (120, 170, 230), None),
    ("Kd", "Dakota Sandstone (Upper Cretaceous)", (110, 200, 200), None),
    ("Tg", "Gravel of the Grand Wash (Miocene)", (240, 170, 60), None),
    ("Tv", "Basalt flows, dikes, and plugs (Miocene)", (200, 90, 200), None),
    ("Pe", "Esplanade Sandstone", (150, 210, 120), GROUP),
    ("Pw", "Wescogame Formation, undivided", (80, 130, 110), GROUP),
    ("Ms", "Surprise Canyon Formation (Mississippian)", (170, 150, 220), None),
    ("Xg", "Granite (Early Proterozoic)", (245, 160, 200), None),
]
SWATCH_X, SWATCH_W, SWATCH_H, FIRST_Y, STEP, INDENT = 1240, 90, 46, 240, 64, 16
DESCRIPTION_X = SWATCH_X + SWATCH_W + 30
HEADING = "EXPLANAT1ON"  # an OCR-damaged heading, as scans give them
TITLE = "GEOLOGIC MAP OF THE HURRICANE MESA QUADRANGLE, MOHAVE COUNTY, ARIZONA"  # capitals and commas: every space must come back


def unit_tops() -> list[int]:
    """The top of each unit's row: one row per unit, and one for a group's heading before its first unit."""
    tops, row, group = [], 0, None
    for _, _, _, heading in UNITS:
        if heading is not None and heading != group:
            row += 1
        group = heading
        tops.append(FIRST_Y + row * STEP)
        row += 1
    return tops
MAIN_MAP = (60, 60, 1100, 900)
WATER, WATER_COLOUR = (850, 700, 950, 780), (30, 60, 200)
BOUNDS = {"west": -113.0, "south": 35.0, "east": -112.0, "north": 36.0}  # over the whole 2100 × 1200 scan


# Points inside each drawn unit's polygon, and inside the lake.
POINTS = {"Tb": (200, 200), "Pc": (950, 200), "Qal": (1000, 850), "water": (900, 740)}


def draw_map(path: Path) -> Path:
    image = Image.new("RGB", (2100, 1200), PAPER)
    draw = ImageDraw.Draw(image)
    font, bold, big = ImageFont.truetype(str(FONT), 28), ImageFont.truetype(str(BOLD), 34), ImageFont.truetype(str(BOLD), 38)
    # The main map: three units' polygons with black contacts.
    x0, y0, x1, y1 = MAIN_MAP
    draw.rectangle(MAIN_MAP, fill=UNITS[0][2], outline=(0, 0, 0), width=3)
    draw.polygon([(x0, y0), (700, y0), (500, 500), (x0, 650)], fill=UNITS[1][2], outline=(0, 0, 0), width=3)
    draw.polygon([(700, y0), (x1, y0), (x1, 600), (500, 500)], fill=UNITS[2][2], outline=(0, 0, 0), width=3)
    draw.rectangle(WATER, fill=WATER_COLOUR)  # a lake: a colour no legend swatch has
    # The legend: heading, then each unit's swatch with its code inside and the description beside it
    # (a grouped unit's indented under its group's heading).
    draw.text((SWATCH_X, 150), HEADING, fill=(20, 20, 20), font=bold)
    for (code, description, colour, group), top in zip(UNITS, unit_tops()):
        if group is not None and top - STEP not in unit_tops():
            draw.text((DESCRIPTION_X, top - STEP + 8), group, fill=(20, 20, 20), font=font)
        draw.rectangle((SWATCH_X, top, SWATCH_X + SWATCH_W - 1, top + SWATCH_H - 1), fill=colour, outline=(0, 0, 0), width=2)
        width = draw.textlength(code, font=font)
        draw.text((SWATCH_X + (SWATCH_W - width) / 2, top + 8), code, fill=(20, 20, 20), font=font)
        draw.text((DESCRIPTION_X + (INDENT if group else 0), top + 8), description, fill=(20, 20, 20), font=font)
    draw.text((150, 1020), TITLE, fill=(20, 20, 20), font=big)
    draw.text((600, 1120), "By A. Author and B. Author", fill=(20, 20, 20), font=font)
    image.save(path)
    return path


def knowledge_config(tmp_path: Path, *, lithology: bool) -> Path:
    """The real ICS chart (and lithology vocabulary) as the operator's own copies."""
    lines = []
    for asset, name in [("ics-chart", "chart.ttl")] + ([("cgi-simple-lithology", "simplelithology.ttl")] if lithology else []):
        folder = tmp_path / "knowledge" / asset
        folder.mkdir(parents=True)
        shutil.copy(shared_asset(name) / name, folder / name)
        lines.append(f'[assets.{asset}]\npath = "{folder}"\n')
    config = tmp_path / "geomap.toml"
    config.write_text("\n".join(lines))
    return config


def reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache, *, lithology: bool = True) -> Server:  # noqa: F811
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    config = knowledge_config(tmp_path, lithology=lithology)
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_CONFIG": str(config)})
    (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
    (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    return server


async def prepared_layout(server: Server, name: str) -> dict:
    """Registers `name`, installs the runtime and the OCR models, and returns the layout processed."""
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": name})).structured_content["map_id"]
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
    assert result.is_error is False, result
    return result.structured_content


def close(box: dict, expected: tuple, slack: float) -> bool:
    return all(abs(box[key] - value) <= slack for key, value in zip(("x0", "y0", "x1", "y1"), expected))


async def test_a_drawn_map_is_read_from_its_words_and_colours(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache, era):  # noqa: F811
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    draw_map(server.map_root / "map.png")
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "map.png"})).structured_content["map_id"]
        no_layout = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 200, "row": 200})
        fresh = await client.call_tool("geomap_process_image", {"map_id": map_id})
        caps_before = (await client.call_tool("geomap_capabilities", {})).structured_content
        prepared = await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})
        caps_after = (await client.call_tool("geomap_capabilities", {})).structured_content
        result = await client.call_tool("geomap_process_image", {"map_id": map_id}, progress_callback=on_progress)
        at = {name: await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": col, "row": row}) for name, (col, row) in POINTS.items()}
        lon, lat = BOUNDS["west"] + 200 / 2100, BOUNDS["north"] - 200 / 1200
        unplaced = await client.call_tool("geomap_unit_at", {"map_id": map_id, "lon": lon, "lat": lat})
        half = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 200})
        outside = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 2100, "row": 10})
        assert (await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": BOUNDS})).is_error is False
        placed = await client.call_tool("geomap_unit_at", {"map_id": map_id, "lon": lon, "lat": lat})
        layout_id = result.structured_content["layout_id"]
        legend_text = await client.call_tool("geomap_read_text", {"map_id": map_id, "layout_id": layout_id, "component": 2})
        past_the_end = await client.call_tool("geomap_read_text", {"map_id": map_id, "layout_id": layout_id, "component": 3})
        # The scan was decoded once into the pixel store; a damaged tile is built again, never trusted.
        [decoded] = list((server.data_root / "cache" / "pixels").iterdir())
        (decoded / "0-0.rgb").write_bytes(b"damaged")
        again = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 200, "row": 200})
    assert again.is_error is False and again.structured_content["unit"]["code"] == "Tb", again
    assert (decoded / "0-0.rgb").stat().st_size == 512 * 512 * 3 and (decoded / "index.json").is_file()
    missing_layout = assert_envelope(no_layout, "artifact_not_found", server, tool="geomap_unit_at")
    assert missing_layout["details"]["reason"] == "no_layout" and "geomap_process_image" in missing_layout["recovery_hints"][0]
    for name, answer in at.items():
        assert answer.is_error is False, answer
        unit = answer.structured_content["unit"]
        if name == "water":
            assert unit is None and "matches no legend unit" in answer.structured_content["summary"], answer.structured_content
            assert answer.structured_content["nearest"][0]["delta_e"] > 15
            continue
        assert unit["code"] == name and unit["delta_e"] < 3, (name, answer.structured_content)
        runner_up = answer.structured_content["nearest"][1]
        assert runner_up["code"] != name and runner_up["delta_e"] > unit["delta_e"] + 10, runner_up
    assert at["Tb"].structured_content["unit"]["age_ma"] == {"begin_ma": 11.63, "end_ma": 2.58}
    assert at["Tb"].structured_content["unit"]["lithology_terms"][0]["term"] == "basalt"
    assert assert_envelope(unplaced, "georef_required", server)["details"]["map_id"] == map_id
    assert assert_envelope(half, "invalid_arguments", server)["details"]["field"] == "/col"
    assert assert_envelope(outside, "invalid_arguments", server)["details"]["field"] == "/col"
    assert placed.is_error is False, placed
    answer = placed.structured_content
    assert answer["unit"]["code"] == "Tb" and answer["revision_id"].startswith("rev_")
    assert abs(answer["col"] - 200) < 0.01 and abs(answer["row"] - 200) < 0.01
    # A fresh install: the runtime and the OCR models are what is missing, and the preparation tool installs them.
    envelope = assert_envelope(fresh, "missing_extra", server, tool="geomap_process_image")
    assert envelope["details"]["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v4"], "PEACE's weights alone do not fail the call"
    assert '"assets": ["peace-yolov10-runtime", "ppocr-v4"]' in envelope["recovery_hints"][0] and "MB" in envelope["recovery_hints"][0]
    ready = lambda caps: {tool["name"]: tool["ready"] for tool in caps["tools"]}["geomap_process_image"]  # noqa: E731
    assert (ready(caps_before), ready(caps_after)) == (False, True)
    report = prepared.structured_content
    assert report["detectors_ready"] is True and "reads the layout from the map's words" in report["summary"], report
    assert result.is_error is False, result
    layout = result.structured_content
    assert (layout["method"], layout["source"]) == ("text", "detectors")
    # geomap_read_text reads one component of the stored layout: the legend's words, in the scan's pixels.
    assert legend_text.is_error is False, legend_text
    reading = legend_text.structured_content
    assert reading["region"] == layout["components"][2]["bbox"]
    read = {line["text"] for line in reading["lines"]}
    assert len({code for code, _, _, _ in UNITS} & read) >= len(UNITS) - 1, read  # the raw reading: a two-letter code may come back a letter off
    assert all(reading["region"]["x0"] <= line["bbox"]["x0"] and line["bbox"]["y1"] <= reading["region"]["y1"] for line in reading["lines"])
    beyond = assert_envelope(past_the_end, "invalid_arguments", server)
    assert (beyond["details"]["field"], beyond["details"]["expected"]) == ("/component", "an index below 3 (the layout's components)")
    [warning] = layout["warnings"]
    assert warning["code"] == "missing_extra" and warning["about"] == "peace-component-weights"
    assert "words and colours" in warning["message"] and "peace-legend-weights" in warning["message"]
    assert layout["title"] == TITLE, "every space read back"
    classes = [component["class"] for component in layout["components"]]
    assert classes == ["title", "main_map", "legend"], classes
    main_map = layout["components"][1]["bbox"]
    assert close(main_map, MAIN_MAP, 12), main_map
    legend = layout["components"][2]
    assert legend["text"] == HEADING or legend["text"].replace("I", "1") == HEADING, legend
    assert legend["bbox"]["y0"] < 170 < FIRST_Y, "the heading (drawn at y 150) is part of the legend"
    entries = layout["legend_entries"]
    assert [entry["code"] for entry in entries] == [code for code, _, _, _ in UNITS], "every unit, the last one too"
    descriptions = [entry["description"] for entry in entries]
    # The text detector's box for the last line ends 3 pixels into its closing parenthesis, which is then not
    # read (with the title 60 pixels higher it was): the last description's words are checked without it.
    assert descriptions[:-1] == [description for _, description, _, _ in UNITS[:-1]], "every space read back"
    assert descriptions[-1].rstrip(")") == UNITS[-1][1].rstrip(")"), descriptions[-1]
    assert [entry.get("group") for entry in entries] == [group for _, _, _, group in UNITS]
    for entry, (_, _, colour, _), top in zip(entries, UNITS, unit_tops()):
        assert entry["legend"] == 2
        assert entry["colour_hex"] == "#{:02x}{:02x}{:02x}".format(*colour), entry
        assert close(entry["swatch"], (SWATCH_X, top, SWATCH_X + SWATCH_W, top + SWATCH_H), 3), entry["swatch"]
    terms = [[(t["term"], t["uncertain"]) for t in entry["age_terms"]] for entry in entries[:4]]
    assert terms == [[("Holocene", False)], [("Pliocene", False), ("upper Miocene", False)], [("Lower Permian", False)], [("Upper Cretaceous", False)]]
    grouped = [[t["term"] for t in entry["age_terms"]] for entry in entries if entry.get("group")]
    assert grouped == [["Permian", "Pennsylvanian"]] * 2, "a grouped unit that states no age takes its group's"
    holocene = entries[0]["age_terms"][0]["ics"]
    assert holocene["label"] == "Holocene" and holocene["end_ma"] == 0 and 0.0117 <= holocene["begin_ma"] <= 0.0118, holocene
    miocene = entries[1]["age_terms"][1]["ics"]
    assert miocene["label"] == "Tortonian–Messinian" and miocene["begin_ma"] == 11.63, "upper Miocene: the chart's late Miocene stages"
    assert entries[1]["age_ma"] == {"begin_ma": 11.63, "end_ma": 2.58}, entries[1]["age_ma"]
    cretaceous = entries[3]["age_terms"][0]["ics"]
    assert cretaceous["label"] == "Late Cretaceous" and cretaceous["begin_ma"] == 100.5 and cretaceous["end_ma"] == 66.0, cretaceous
    rocks = [[(t["term"], t.get("cgi", {}).get("label")) for t in entry["lithology_terms"]] for entry in entries[:4]]
    assert rocks == [[("alluvium", None)], [("basalt", "basalt")], [("sandstone", "sandstone")], [("sandstone", "sandstone")]], rocks
    assert set(layout["timings"]) == {"load_ms", "decode_ms", "components_ms", "legend_ms", "words_ms", "write_ms"}
    progress = [p for p, _, _ in updates]
    assert progress == sorted(progress) and progress[-1] == 100 and all(total == 100 for _, total, _ in updates), updates
    assert any("tile" in message for _, _, message in updates), updates


async def test_a_provider_that_is_not_ready_is_a_warning(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache, lithology=False)
    draw_map(server.map_root / "map.png")
    layout = await prepared_layout(server, "map.png")
    warnings = {warning["about"]: warning for warning in layout["warnings"]}
    assert set(warnings) == {"peace-component-weights", "cgi-lithology"}
    assert warnings["cgi-lithology"]["code"] == "missing_knowledge_asset" and "cgi-simple-lithology" in warnings["cgi-lithology"]["message"]
    assert all("cgi" not in term for entry in layout["legend_entries"] for term in entry["lithology_terms"])
    assert layout["legend_entries"][2]["age_terms"][0]["ics"]["label"] == "Permian" or "Cisuralian" in layout["legend_entries"][2]["age_terms"][0]["ics"]["label"]


SAMPLE_CODES = """Qs Qf Qd Qr Qay Qv Qt Ql Qao QTg Tg Qb Tsi Tsb T227i Tbmi Tbmb Tv Ti Tb Tc Tp Tgc Ts1 Ts2 TRm Pk Pt Pc Ph Pe Pep IPMs
Ms Mr Dtb Cm Cba Ct Yd Yg Xgr Xgd Xdg Xs Xv Xm Xo Xc Xu"""


async def test_the_usgs_scan_gives_its_title_and_legend(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    scan = shared_asset("sample_usgs.jpg") / "sample_usgs.jpg"
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    shutil.copy(scan, server.map_root / "usgs.jpg")
    layout = await prepared_layout(server, "usgs.jpg")
    assert "Peach Springs" in layout["title"], layout["title"]
    entries = layout["legend_entries"]
    codes = [entry.get("code") for entry in entries]
    # The LIST OF MAP UNITS has 50 units, every one read, every one with its colour. 49 with a code:
    # Ti's is dark magenta type six pixels high on magenta, which the recogniser reads as one letter.
    coded = [entry for entry in entries if entry.get("code") and entry.get("colour_hex")]
    assert len(entries) >= 50 and len([code for code in codes if code]) >= 49 and len(coded) >= 49, codes
    assert all(entry.get("colour_hex") for entry in entries), [entry["description"] for entry in entries if not entry.get("colour_hex")]
    [diabase] = [entry for entry in entries if entry["description"] == "Diabase intrusive rocks"]
    assert diabase["code"] == "Yd" and all(int(diabase["colour_hex"][i : i + 2], 16) >= 235 for i in (1, 3, 5)), "white, in its frame"
    [sand] = [entry for entry in coded if entry["description"].startswith("Sand sheet")]
    assert sand["code"] == "Qd" and sand["description"] == "Sand sheet and sand dune deposits (Holocene)", "read in its stippled swatch"
    [dikes] = [entry for entry in entries if entry["description"].startswith("Dikes, plugs")]
    assert dikes["colour_hex"] and dikes["group"].startswith("Volcanic rocks of the Hualapai Plateau"), dikes
    assert "M207" not in codes, "a river mile in the symbols list below the units is no unit"
    # The 50 codes as printed (the Triassic's and Pennsylvanian's ligatures written TR and IP), in the list's order.
    right = [code for code, printed in zip(codes, SAMPLE_CODES.split()) if code == printed]
    assert len(right) >= 46, [(code, printed) for code, printed in zip(codes, SAMPLE_CODES.split()) if code != printed]
    assert {"TRm", "IPMs"} <= set(right), "the ligatures restored from the units' youngest ages"
    by_code = {entry["code"]: entry for entry in coded}
    assert by_code["Pe"]["description"] == "Esplanade Sandstone (Lower Permian)", "an indented unit's code is read"
    assert by_code["Xm"]["description"] == "Mafic metavoleanic rocks", "the recogniser's misspelling, with its space back"
    assert by_code["Xo"]["description"] == "Orthoamphibole schist", "a code the text detector missed, read in its swatch"
    [andesite] = [entry for entry in coded if entry["description"] == "Andesite flows and basalt flows, undivided"]
    assert andesite["code"] == "Tv", "read in its orange swatch as 'TV', a capital V after the first letter read small"
    [landslide] = [entry for entry in coded if entry["description"].startswith("Landslide deposits")]
    assert landslide["code"] == "Ql", "read as 'QI', a capital I after the first letter read small"
    assert andesite["group"].startswith("Volcanic rocks of the Hualapai Plateau") and andesite["age_terms"], andesite
    assert by_code["Tsi"]["group"] == "Shivwits basalt (upper Miocene)"
    assert [t["term"] for t in by_code["Tsi"]["age_terms"]] == ["upper Miocene"], "the group's age: the unit states none"
    assert by_code["Pe"]["group"].startswith("Supai Group") and by_code["Pe"]["age_terms"][0]["term"] == "Lower Permian", "its own age"
    kaibab = [entry for entry in coded if entry["description"].startswith("Kaibab Formation")]
    assert kaibab and kaibab[0]["age_terms"][0]["term"] == "Lower Permian", kaibab
    assert kaibab[0]["description"] == "Kaibab Formation, undivided (Lower Permian)"
    assert layout["components"][[c["class"] for c in layout["components"]].index("legend")]["text"] == "LIST OF MAP UNITS"
    # The explanation of map symbols below the units: each entry with its words and its sample.
    symbols = {entry["symbol"]: entry for entry in layout["symbol_entries"]}
    lines = {name for name, entry in symbols.items() if entry["kind"] == "line"}
    points = {name for name, entry in symbols.items() if entry["kind"] == "point"}
    assert {"contact", "fault", "thrust fault", "anticline", "syncline", "monocline"} <= lines, symbols.keys()
    assert {"dome", "inclined bedding", "strike of vertical", "collapse structure", "breccia pipe", "sinkhole", "volcanic vent"} <= points, symbols.keys()
    # Listed under its heading "Strike and dip of beds": "Inclined" and "Approximate" are the entries.
    inclined = [entry["text"] for entry in layout["symbol_entries"] if entry["symbol"] == "inclined bedding"]
    assert len(inclined) == 2 and inclined[0].startswith("Inclined") and inclined[1].startswith("Approximate"), inclined
    assert symbols["fault"]["text"].startswith("Fault") and symbols["fault"]["line"]["width_px"] >= 1, symbols["fault"]
    assert symbols["sinkhole"]["text"].startswith("Sinkhole") and symbols["sinkhole"]["sample"]["x1"] <= symbols["sinkhole"]["text_box"]["x0"]
    classes = [component["class"] for component in layout["components"]]
    assert {"scale", "stratigraphic_column", "index_map"} <= set(classes) and classes.count("legend") == 2, classes
    assert classes.count("cross_section") == 3, "three sections without captions, found by their elevation axes"


async def test_the_agents_scene_reaches_units_with_their_ages_in_seven_calls_asking_twice(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache, era):  # noqa: F811
    """register → layout (missing_extra) → prepare detectors (asked) → layout → prepare knowledge
    (asked) → georeference → units: the knowledge installed after the layout resolves its ages
    and rock names when the extraction first needs them, with no second layout call."""
    import sqlite3

    from mcp import types

    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    for name in ["chart.ttl", "simplelithology.ttl"]:
        mirror.files[name] = (shared_asset(name) / name).read_bytes()
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
    (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    draw_map(server.map_root / "map.png")
    asked = []

    async def consent(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    calls = 0
    async with server.connect(era, elicitation_callback=consent) as client:

        async def call(tool, arguments):
            nonlocal calls
            calls += 1
            return await client.call_tool(tool, arguments)

        map_id = (await call("geomap_register_map", {"path": "map.png"})).structured_content["map_id"]
        missing = await call("geomap_process_image", {"map_id": map_id})
        assert missing.is_error and missing.structured_content["code"] == "missing_extra", missing
        assert (await call("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
        layout = (await call("geomap_process_image", {"map_id": map_id})).structured_content
        assert (await call("geomap_prepare_knowledge", {"assets": ["ics-chart", "cgi-simple-lithology"]})).is_error is False
        assert (await call("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": BOUNDS})).is_error is False
        units = await call("geomap_extract_units", {"map_id": map_id})
        stored = await client.read_resource(layout["resource_uri"])
    assert calls == 7 and len(asked) == 2, (calls, asked)
    assert layout["terms_resolved_by"] == [] and {w["about"] for w in layout["warnings"]} >= {"ics-timescale", "cgi-lithology"}, layout["warnings"]
    assert layout["legend_entries"][1]["age_terms"][0].get("ics") is None, "not resolved at layout time"
    assert units.is_error is False, units
    [gpkg] = list(server.data_root.rglob("units.gpkg"))
    ages = sqlite3.connect(gpkg).execute("SELECT description, b_age, t_age FROM geologic_unit").fetchall()
    assert ("Basalt flows (Pliocene to upper Miocene)", 11.63, 2.58) in ages, ages  # Tb: the late Miocene begins 11.63 Ma
    document = json.loads(stored.contents[0].text)
    assert sorted(document["terms_resolved_by"]) == ["cgi-lithology", "ics-timescale"], document["terms_resolved_by"]
    tb = document["legend_entries"][1]
    assert tb["age_ma"] == {"begin_ma": 11.63, "end_ma": 2.58} and tb["lithology_terms"][0]["cgi"]["label"] == "basalt", tb

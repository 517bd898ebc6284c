"""geomap_extract_units end to end on a map the test draws with known units (a close colour pair, black
contacts, a fault, brown contours over every unit, printed codes, symbols, a slight skew, blur and
JPEG): the layout read with the real OCR models, then every unit's pixel F1 from the unit raster, the
GeoPackage opened with GDAL's ogrinfo (the TA1 tables, the pixel layer, the georeferenced layer in the
revision's CRS, a vertex checked against the known transform, thin-plate spline included), unit_at
answering from the extraction, no_layout before a layout, cancellation leaving nothing; and the USGS
scan when it is present."""

import hashlib
import json
import re
import shutil
import sqlite3
import statistics
import subprocess
from pathlib import Path

import anyio
import prov.model
import pytest
from PIL import Image

import unit_maps
from conftest import assert_envelope, interrupt, shared_asset
from ta1_schema import assert_ta1
from test_detect import ocr_wheel, runtime_wheel  # noqa: F401 (session fixtures)
from test_layout_words import prepared_layout, reading_server
from test_providers import compile_cache  # noqa: F401 (session fixture)

pytestmark = pytest.mark.anyio

WEST, NORTH, EAST, SOUTH = -113.0, 36.0, -112.0, 35.4  # over the whole 1700 × 1000 scan


def lonlat(col: float, row: float) -> tuple[float, float]:
    width, height = unit_maps.SCAN
    return WEST + col * (EAST - WEST) / width, NORTH - row * (NORTH - SOUTH) / height


def ogr_json(path, layer: str) -> dict:
    out = subprocess.run(["ogr2ogr", "-f", "GeoJSON", "/vsistdout/", str(path), layer], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


GEOJSON_LAYERS = ("polygon_feature", "line_feature", "point_feature", "cross_section", "ground_control_point")


def lon_lats(geometry: dict):
    """Every position of a GeoJSON geometry."""
    def walk(coordinates):
        if coordinates and isinstance(coordinates[0], (int, float)):
            yield coordinates
        else:
            for part in coordinates:
                yield from walk(part)
    yield from walk(geometry["coordinates"])


def assert_geojson_layers(units: dict, bounds: tuple) -> dict:
    """Each GeoJSON layer of a georeferenced extraction opens in GDAL, holds as many features as the
    GeoPackage's `_georeferenced` twin, and lies within `bounds` (west, south, east, north: WGS 84,
    longitude first); the features per layer."""
    folder = Path(units["geopackage_path"]).parent
    assert [uri.rsplit("/", 1)[1] for uri in units["geojson_uris"]] == [f"{layer}.geojson" for layer in GEOJSON_LAYERS], units["geojson_uris"]
    west, south, east, north = bounds
    counts = {}
    with sqlite3.connect(units["geopackage_path"]) as package:
        for layer in GEOJSON_LAYERS:
            path = folder / f"{layer}.geojson"
            info = subprocess.run(["ogrinfo", "-ro", "-so", "-al", str(path)], capture_output=True, text=True, check=True).stdout
            count = int(re.search(r"Feature Count: (\d+)", info).group(1))
            assert count == package.execute(f"SELECT count(*) FROM {layer}_georeferenced").fetchone()[0], (layer, info)
            collection = json.loads(path.read_text())
            assert collection["type"] == "FeatureCollection" and len(collection["features"]) == count
            for feature in collection["features"]:
                for lon, lat in lon_lats(feature["geometry"]):
                    assert west - 1e-6 <= lon <= east + 1e-6 and south - 1e-6 <= lat <= north + 1e-6, (layer, feature["id"], lon, lat)
            counts[layer] = count
    return counts


def unit_raster(path, tmp_path) -> Image.Image:
    png = tmp_path / "units.png"
    subprocess.run(["gdal_translate", "-q", "-of", "PNG", str(path), str(png)], check=True)
    return Image.open(png)


def qgis_view(package: str, layer: str, extent: tuple, size: tuple, out) -> dict:
    """The GeoPackage as QGIS opens it (tests/qgis_render.py under Debian's python3 with python3-qgis,
    which ./dev test installs): each layer's style, and `layer` rendered over `extent` to `out`."""
    script = Path(__file__).parent / "qgis_render.py"
    done = subprocess.run(["/usr/bin/python3", str(script), package, layer, *map(str, extent), *map(str, size), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"QGIS (Debian's python3-qgis) could not open the GeoPackage: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def inside_points(truth: "Image.Image", margin: int, per_unit: int) -> list:
    """Up to `per_unit` points of each drawn unit with nothing else within `margin` pixels, spread over the unit."""
    pixels, (width, height) = truth.load(), truth.size
    found: dict[int, list] = {}
    for row in range(margin, height - margin, 9):
        for col in range(margin, width - margin, 9):
            unit = pixels[col, row]
            if unit and all(pixels[col + dx, row + dy] == unit for dx in (-margin, 0, margin) for dy in (-margin, 0, margin)):
                found.setdefault(unit, []).append((col, row))
    return [(unit, points[k * len(points) // per_unit]) for unit, points in found.items() for k in range(min(per_unit, len(points)))]


def drawn_code(colour_hex: str) -> str:
    """The drawn unit whose colour is nearest a swatch's (the reader may read a code's case wrong: "PC")."""
    rgb = tuple(int(colour_hex[i : i + 2], 16) for i in (1, 3, 5))
    return min(unit_maps.UNITS, key=lambda unit: sum((a - b) ** 2 for a, b in zip(unit[2], rgb)))[0]


async def extracted(server, name: str, transform: str | None = None) -> tuple[str, dict, dict]:
    layout = await prepared_layout(server, name)
    map_id = layout["map_id"]
    async with server.connect() as client:
        if transform == "affine":
            placed = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": {"west": WEST, "south": SOUTH, "east": EAST, "north": NORTH}})
            assert placed.is_error is False, placed
        elif transform:
            cells = [(100, 80), (1600, 90), (850, 500), (120, 930), (1580, 920), (500, 300), (1200, 700)]
            points = [{"col": c, "row": r, "x": lonlat(c, r)[0], "y": lonlat(c, r)[1]} for c, r in cells]
            placed = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "control_points": points, "transform": transform})
            assert placed.is_error is False, placed
        result = await client.call_tool("geomap_extract_units", {"map_id": map_id})
    assert result.is_error is False, result
    print("TA1 schema check, rows per table:", assert_ta1(result.structured_content["geopackage_path"]))
    return map_id, layout, result.structured_content


async def test_a_drawn_map_gives_each_unit_its_polygons_in_a_ta1_geopackage(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    truth = unit_maps.draw(server.map_root / "units.jpg")
    map_id, layout, units = await extracted(server, "units.jpg", "affine")
    codes = {entry["code"].casefold() for entry in layout["legend_entries"] if entry.get("colour_hex")}
    assert {code.casefold() for code, _, _ in unit_maps.UNITS} <= codes, layout["legend_entries"]

    region = units["region"]
    box = tuple(round(region[key]) for key in ("x0", "y0", "x1", "y1"))
    classes = {unit["class"]: drawn_code(unit["colour_hex"]) for unit in units["units"]}
    f1 = unit_maps.f1_per_unit(truth, unit_raster(units["raster_path"], tmp_path), classes, box)
    print("per-unit F1:", {code: round(value, 3) for code, value in f1.items()})
    assert statistics.median(f1.values()) >= 0.9, f1
    assert min(f1.values()) >= 0.75, f1
    by_code = {drawn_code(unit["colour_hex"]): unit for unit in units["units"]}
    assert all(by_code[code]["polygons"] >= 1 and by_code[code]["area_km2"] > 0 for code, _, _ in unit_maps.UNITS), units["units"]
    assert not [warning for warning in units["warnings"] if "told apart" in warning], "ΔE 7 is told apart (the F1 above shows it)"
    assert units["crs"] == "EPSG:4326" and units["revision_id"]

    info = subprocess.run(["ogrinfo", "-ro", "-so", units["geopackage_path"]], capture_output=True, text=True, check=True).stdout
    for table in ("map", "geologic_unit", "polygon_type", "polygon_feature", "polygon_feature_georeferenced"):
        assert f": {table} (" in info or f": {table}" in info, info
    placed_info = subprocess.run(["ogrinfo", "-ro", "-so", units["geopackage_path"], "polygon_feature_georeferenced"], capture_output=True, text=True, check=True).stdout
    assert "Geometry: Multi Polygon" in placed_info and 'ID["EPSG",4326]' in placed_info, placed_info
    pixel, placed = ogr_json(units["geopackage_path"], "polygon_feature"), ogr_json(units["geopackage_path"], "polygon_feature_georeferenced")
    assert len(pixel["features"]) == len(placed["features"]) == sum(unit["polygons"] for unit in units["units"])
    feature = pixel["features"][0]
    assert feature["geometry"]["type"] == "MultiPolygon" and feature["properties"]["provenance"] == "modelled"
    assert 0 < feature["properties"]["confidence"] <= 1
    twin = next(f for f in placed["features"] if f["properties"]["id"] == feature["properties"]["id"])
    col, row = feature["geometry"]["coordinates"][0][0][0]
    lon, lat = twin["geometry"]["coordinates"][0][0][0]
    assert box[0] <= col <= box[2] and box[1] <= row <= box[3], "pixel coordinates: x = column, y = row from the top"
    want = lonlat(col, row)
    assert abs(lon - want[0]) < 1e-6 and abs(lat - want[1]) < 1e-6, (lon, lat, want)
    # The same features as GeoJSON, one layer a file in WGS 84, served as such.
    counts = assert_geojson_layers(units, (WEST, SOUTH, EAST, NORTH))
    assert counts["polygon_feature"] == len(pixel["features"]), counts
    async with server.connect() as client:
        served = await client.read_resource(units["geojson_uris"][0])
    assert served.contents[0].mime_type == "application/geo+json", served.contents[0]
    rows = subprocess.run(["ogrinfo", "-ro", "-q", "-sql", "SELECT abbreviation, name, map_unit FROM polygon_type", units["geopackage_path"]], capture_output=True, text=True, check=True).stdout
    assert f"abbreviation (String) = {by_code['Pc']['code']}" in rows and "geologic unit" in rows, rows
    ages = subprocess.run(["ogrinfo", "-ro", "-q", "-sql", "SELECT description, b_age, t_interval, lithology FROM geologic_unit", units["geopackage_path"]], capture_output=True, text=True, check=True).stdout
    assert "b_age (Real) = 0.0117\n  t_interval (String) = Holocene\n  lithology (String) = alluvium" in ages, ages  # Qal, Alluvium (Holocene)

    # QGIS opens the file coloured as the printed map: each layer takes its default style from the
    # file, the units their legend colours with their codes as labels; the rendered fills at points
    # well inside each drawn unit are that unit's legend colour.
    view = qgis_view(units["geopackage_path"], "polygon_feature_georeferenced", (WEST, SOUTH, EAST, NORTH), unit_maps.SCAN, tmp_path / "qgis.png")
    styled = view["layers"]["polygon_feature"]
    legend = {unit["class"]: (unit["code"], unit["colour_hex"]) for unit in units["units"]}
    assert styled["renderer"] == "categorizedSymbol" and styled["labelled"], styled
    assert sorted((label, colour) for _, label, colour in styled["categories"]) == sorted(legend.values()), styled["categories"]
    assert view["layers"]["polygon_feature_georeferenced"]["categories"] == styled["categories"]
    rendered = Image.open(tmp_path / "qgis.png").convert("RGB")
    (x0, y0, x1, y1), (width, height) = view["extent"], rendered.size
    samples = inside_points(truth, 12, 15)
    hits = []
    for unit, (col, row) in samples:
        lon, lat = lonlat(col + 0.5, row + 0.5)
        pixel = rendered.getpixel((int((lon - x0) / (x1 - x0) * width), int((y1 - lat) / (y1 - y0) * height)))
        hits.append("#%02x%02x%02x" % pixel == by_code[unit_maps.UNITS[unit - 1][0]]["colour_hex"])
    print("QGIS render:", sum(hits), "of", len(hits), "points in their unit's legend colour")
    assert len(samples) >= 15 * len(unit_maps.UNITS) * 0.8 and sum(hits) >= 0.9 * len(hits), (sum(hits), len(hits))

    async with server.connect() as client:
        inside = [(unit, outline) for unit, outline in unit_maps.polygons() if unit == 2][0][1]
        col = sum(x for x, _ in inside) / len(inside) + 60
        row = sum(y for _, y in inside) / len(inside) + 60
        answer = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": col, "row": row})
        preview = await client.read_resource(units["preview_uri"])
        package = await client.read_resource(units["geopackage_uri"])
    assert answer.structured_content["units_id"] == units["units_id"], answer.structured_content
    assert drawn_code(answer.structured_content["unit"]["colour_hex"]) == "Pc", answer.structured_content
    assert preview.contents[0].mime_type == "image/png"
    assert package.contents[0].mime_type == "application/geopackage+sqlite3"


async def test_every_derived_file_says_how_it_was_made_in_prov_json(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    unit_maps.draw(server.map_root / "units.jpg")
    scan_sha256 = hashlib.sha256((server.map_root / "units.jpg").read_bytes()).hexdigest()
    map_id, layout, units = await extracted(server, "units.jpg", "affine")
    async with server.connect() as client:
        reading = (await client.call_tool("geomap_read_text", {"map_id": map_id, "region": {"x0": 1100, "y0": 40, "x1": 1700, "y1": 400}})).structured_content
        described = (await client.call_tool("geomap_describe_map", {"map_id": map_id})).structured_content
        revision = described["revisions"][-1]
        uris = {
            "layout": layout["resource_uri"].replace("layout.json", "provenance.json"),
            "reading": reading["resource_uri"].replace("text.json", "provenance.json"),
            "extraction": units["resource_uri"].replace("units.json", "provenance.json"),
            "revision": next(a["resource_uri"] for a in revision["artifacts"] if a["name"] == "provenance.json"),
        }
        documents = {kind: json.loads((await client.read_resource(uri)).contents[0].text) for kind, uri in uris.items()}
    assert "provenance.json" in layout["files"] and "provenance.json" in reading["files"] and "provenance.json" in units["files"]
    ocr_models = {m["asset"]: m["sha256"] for m in layout["models"]}
    assert ocr_models and all(len(sha) == 64 for sha in ocr_models.values()), layout["models"]
    for kind, document in documents.items():
        parsed = prov.model.ProvDocument.deserialize(content=json.dumps(document), format="json")  # PROV-JSON's reference reader
        assert parsed.get_records(prov.model.ProvActivity) and parsed.get_records(prov.model.ProvAgent), kind
        assert document["entity"][f"geomap:maps/{map_id}"]["sa:sha256"] == scan_sha256, (kind, document["entity"])
        (activity,) = document["activity"].values()
        assert activity["prov:startTime"] <= activity["prov:endTime"] and json.loads(activity["sa:parameters"])["map_id"] == map_id, activity
    models_used = lambda document: {name.removeprefix("sa:asset/"): e["sa:sha256"] for name, e in document["entity"].items() if e["prov:type"] == "sa:model"}  # noqa: E731
    assert models_used(documents["layout"]) == ocr_models and models_used(documents["reading"]) == ocr_models
    used = {e["prov:entity"] for e in documents["extraction"]["used"].values()}
    layout_entity = "geomap:" + layout["resource_uri"].removeprefix("geomap://")
    assert layout_entity in used and f"geomap:maps/{map_id}/revisions/{units['revision_id']}" in used, used
    generated = {e["prov:entity"] for e in documents["extraction"]["wasGeneratedBy"].values()}
    assert "geomap:" + units["resource_uri"].removeprefix("geomap://") in generated and any(g.endswith("/units.gpkg") for g in generated), generated
    assert revision["revision_id"] == units["revision_id"] and json.loads(documents["revision"]["activity"][f"sa:run/{revision['revision_id']}"]["sa:parameters"])["crs"] == "EPSG:4326"


async def test_a_thin_plate_spline_revision_places_the_vertices_and_cancelling_keeps_nothing(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache, era):  # noqa: F811
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    unit_maps.draw(server.map_root / "units.jpg")
    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "units.jpg"})).structured_content["map_id"]
        early = await client.call_tool("geomap_extract_units", {"map_id": map_id})
    assert assert_envelope(early, "artifact_not_found", server)["details"]["reason"] == "no_layout"
    map_id, _, units = await extracted(server, "units.jpg", "thin_plate_spline")
    # What the package records beside the features: the agent's control points (raw data) in pixels
    # and at their coordinates, the revision's CRS and extent, the runs, a confidence per polygon.
    with sqlite3.connect(units["geopackage_path"]) as package:
        points = package.execute("SELECT x, y, provenance FROM ground_control_point ORDER BY id").fetchall()
        placed_points = package.execute("SELECT id FROM ground_control_point_georeferenced").fetchall()
        meta = package.execute("SELECT projection, provenance FROM georeference_meta").fetchall()
        runs = {name for (name,) in package.execute("SELECT model_name FROM model_run")}
        measured = package.execute("SELECT count(*) FROM confidence_measurement m JOIN extraction_pointer p ON m.pointer = p.id WHERE p.table_name = 'polygon_feature'").fetchone()[0]
        polygons = package.execute("SELECT count(*) FROM polygon_feature").fetchone()[0]
        swatches = package.execute("SELECT count(*) FROM page_extraction e JOIN extraction_pointer p ON e.pointer = p.id WHERE p.table_name = 'polygon_type'").fetchone()[0]
    assert len(points) == len(placed_points) == 7 and {p[2] for p in points} == {"raw data"}, points
    assert meta == [("EPSG:4326", "raw data")], meta
    assert {"geomap_process_image", "geomap_georeference", "geomap_extract_units"} <= runs, runs
    assert measured == polygons > 0 and swatches >= len(unit_maps.UNITS), (measured, polygons, swatches)
    assert assert_geojson_layers(units, (WEST, SOUTH, EAST, NORTH))["ground_control_point"] == 7, "the agent's control points, at their coordinates"
    pixel, placed = ogr_json(units["geopackage_path"], "polygon_feature"), ogr_json(units["geopackage_path"], "polygon_feature_georeferenced")
    twins = {f["properties"]["id"]: f for f in placed["features"]}
    for feature in pixel["features"][:5]:
        col, row = feature["geometry"]["coordinates"][0][0][0]
        lon, lat = twins[feature["properties"]["id"]]["geometry"]["coordinates"][0][0][0]
        want = lonlat(col, row)
        assert abs(lon - want[0]) < 1e-6 and abs(lat - want[1]) < 1e-6, "a spline through affine points is that affine"
    folder = server.data_root / "artifacts" / map_id / "layouts"
    before = set(folder.iterdir())
    async with server.connect(era) as client:
        await interrupt(client, "geomap_extract_units", {"map_id": map_id}, lambda message, _: message.startswith("filling linework"))
        with anyio.fail_after(30):  # the cancelled call ends, and logs, while the client is still there
            while len([line for line in server.tool_call_lines() if line["tool"] == "geomap_extract_units"]) < 3:
                await anyio.sleep(0.05)
    last = [line for line in server.tool_call_lines() if line["tool"] == "geomap_extract_units"][-1]
    assert last["outcome"] == "cancelled", server.log()
    assert set(folder.iterdir()) == before, "nothing of the cancelled extraction is kept"


async def test_the_usgs_scan_gives_polygons_for_most_of_its_legend(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache):  # noqa: F811
    scan = shared_asset("sample_usgs.jpg") / "sample_usgs.jpg"
    server = reading_server(tmp_path, mirror, runtime_wheel, ocr_wheel, compile_cache)
    shutil.copy(scan, server.map_root / "usgs.jpg")
    _, _, units = await extracted(server, "usgs.jpg")
    with_polygons = [unit["code"] for unit in units["units"] if unit["polygons"] > 0]
    print("units with polygons:", len(with_polygons), "of", len(units["units"]), "unclassified", units["unclassified_share"])
    print("shares:", sorted(((unit.get("code"), round(unit["share"], 4)) for unit in units["units"]), key=lambda pair: -pair[1]))
    assert len(with_polygons) >= 30, units["units"]
    info = subprocess.run(["ogrinfo", "-ro", "-so", units["geopackage_path"], "polygon_feature"], capture_output=True, text=True, check=True).stdout
    assert "Geometry: Multi Polygon" in info, info
    blocks = subprocess.run(["ogrinfo", "-ro", "-q", "-sql", "SELECT abbreviation, category FROM polygon_type WHERE category LIKE 'Supai Group%'", units["geopackage_path"]], capture_output=True, text=True, check=True).stdout
    assert "abbreviation (String) = Pe" in blocks, "a grouped unit keeps its legend block as TA1's category"

"""geomap_georeference end to end: known transforms recovered, outputs GDAL reopens,
WGS84 bounds checked against gdaltransform, every invalid case, revisions."""

import base64
import json
import math
import subprocess

import anyio
import pytest

from conftest import Server, assert_envelope, child_servers, interrupt, pillow_image, png, run_binary
from tiff_layout import cog_problems

pytestmark = pytest.mark.anyio

WIDTH, HEIGHT = 1000, 800
# A rotated, sheared affine in UTM 33N metres: x = gt0 + col*gt1 + row*gt2, y = gt3 + col*gt4 + row*gt5.
UTM_GT = [500_000.0, 2.0, 0.35, 4_200_000.0, 0.25, -2.0]
SPREAD = [(0, 0), (1000, 0), (0, 800), (1000, 800), (500, 400), (250, 600), (800, 150), (120, 300), (640, 710), (900, 500)]


def apply(gt, col, row):
    return gt[0] + col * gt[1] + row * gt[2], gt[3] + col * gt[4] + row * gt[5]


def points_from(mapping, cells):
    return [{"col": c, "row": r, "x": mapping(c, r)[0], "y": mapping(c, r)[1]} for c, r in cells]


def gdalinfo(path) -> dict:
    return json.loads(subprocess.run(["gdalinfo", "-json", str(path)], capture_output=True, text=True, check=True).stdout)


def gdaltransform(points, source: str) -> list[tuple[float, float]]:
    text = "".join(f"{x!r} {y!r}\n" for x, y in points)
    out = subprocess.run(["gdaltransform", "-s_srs", source, "-t_srs", "EPSG:4326", "-output_xy"], input=text, capture_output=True, text=True, check=True).stdout
    return [tuple(map(float, line.split())) for line in out.splitlines()]


def outline(col0, row0, width, height, per_edge=101):
    """The same densified outline the server walks: 101 points per edge."""
    c1, r1 = col0 + width, row0 + height
    out = []
    for i in range(per_edge):
        t = i / (per_edge - 1)
        out += [(col0 + t * (c1 - col0), row0), (c1, row0 + t * (r1 - row0)), (c1 - t * (c1 - col0), r1), (col0, r1 - t * (r1 - row0))]
    return out


def box(lonlats):
    lons, lats = [p[0] for p in lonlats], [p[1] for p in lonlats]
    return {"west": min(lons), "south": min(lats), "east": max(lons), "north": max(lats)}


@pytest.fixture
def scan(server):
    pillow_image(server.map_root / "scan.png", WIDTH, HEIGHT, "PNG")
    return server


async def registered(client) -> str:
    result = await client.call_tool("geomap_register_map", {"path": "scan.png"})
    return result.structured_content["map_id"]


async def georeference(client, **arguments):
    return await client.call_tool("geomap_georeference", arguments)


def raster(path) -> "numpy.ndarray":
    """The image's pixels as bands × rows × columns, read through GDAL."""
    import numpy

    import tempfile

    info = gdalinfo(path)
    (width, height), bands = info["size"], len(info["bands"])
    with tempfile.TemporaryDirectory() as folder:  # a binary PPM (P6, or P5 for one band): a short header, then the pixels
        subprocess.run(["gdal_translate", "-q", "-of", "PNM", str(path), f"{folder}/pixels.pnm"], check=True)
        raw = open(f"{folder}/pixels.pnm", "rb").read()
    pixels = numpy.frombuffer(raw[len(raw) - width * height * bands :], dtype=numpy.uint8)
    return pixels.reshape(height, width, bands).transpose(2, 0, 1)


def assert_cog(info: dict, path, compression: str) -> None:
    """A Cloud Optimized GeoTIFF: GDAL reports its layout and overviews, and its bytes are laid out as one."""
    structure = info["metadata"]["IMAGE_STRUCTURE"]
    assert structure["LAYOUT"] == "COG" and compression in structure["COMPRESSION"], structure
    assert info["bands"][0]["block"] == [512, 512] and info["bands"][0]["overviews"], info["bands"][0]
    assert [band["colorInterpretation"] for band in info["bands"]] == ["Red", "Green", "Blue"]
    assert cog_problems(path) == []


def revision_files(server, map_id, revision) -> set[str]:
    return {path.name for path in (server.data_root / "artifacts" / map_id / revision["revision_id"]).iterdir()}


async def test_an_affine_is_recovered_and_written_as_a_cloud_optimized_geotiff(scan, era):
    async with scan.connect(era) as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(lambda c, r: apply(UTM_GT, c, r), SPREAD[:6]))
    assert result.is_error is False, result
    revision = result.structured_content
    assert revision["transform"] == "affine" and revision["crs_name"] == "WGS 84 / UTM zone 33N"
    for found, expected in zip(revision["geotransform"], UTM_GT):
        assert abs(found - expected) <= 1e-9 * max(abs(expected), 1.0), (revision["geotransform"], UTM_GT)
    assert all(r["pixels"] < 1e-6 and r["crs_units"] < 1e-6 for r in revision["residuals"])
    assert revision["rmse"]["pixels"] < 1e-6
    tif, provenance = revision["artifacts"]
    assert tif["name"] == "georeferenced.tif" and tif["media_type"] == "image/tiff"
    assert (provenance["name"], provenance["media_type"]) == ("provenance.json", "application/json"), "how the revision was made, beside it"
    assert [str(link.uri) for link in result.content if link.type == "resource_link"] == [tif["resource_uri"], provenance["resource_uri"]]
    assert revision["compression"] == "deflate"
    info = gdalinfo(tif["path"])
    for found, expected in zip(info["geoTransform"], UTM_GT):
        assert abs(found - expected) <= 1e-9 * max(abs(expected), 1.0)
    assert 'ID["EPSG",32633]' in info["coordinateSystem"]["wkt"]
    assert_cog(info, tif["path"], "DEFLATE")
    assert info["metadata"]["IMAGE_STRUCTURE"]["PREDICTOR"] == "2"
    assert (info["size"]) == [WIDTH, HEIGHT]
    assert (raster(tif["path"]) == raster(scan.map_root / "scan.png")).all(), "lossless: every pixel is the scan's"
    assert revision_files(scan, map_id, revision) == {"georeferenced.tif", "provenance.json"}, "no staging or overview file outlives the call"


def quadratic(c, r):
    return 300_000 + 1.5 * c + 0.2 * r + 2e-4 * c * c + 1e-4 * c * r, 5_000_000 - 0.1 * c - 1.5 * r + 3e-4 * r * r - 5e-5 * c * r


async def test_a_second_order_polynomial_is_recovered_and_warped(scan):
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(quadratic, SPREAD), transform="polynomial2")
    revision = result.structured_content
    assert result.is_error is False, result
    assert revision["transform"] == "polynomial2" and "geotransform" not in revision
    assert max(r["crs_units"] for r in revision["residuals"]) < 1e-6
    assert max(r["pixels"] for r in revision["residuals"]) < 1e-6
    names = {a["name"]: a for a in revision["artifacts"]}
    assert set(names) == {"gcps.vrt", "warped.tif", "provenance.json"}
    vrt = gdalinfo(names["gcps.vrt"]["path"])
    assert len(vrt["gcps"]["gcpList"]) == 10
    assert 'ID["EPSG",32633]' in vrt["gcps"]["coordinateSystem"]["wkt"]
    assert [band["colorInterpretation"] for band in vrt["bands"]] == ["Red", "Green", "Blue"]
    assert str(scan.map_root / "scan.png") in open(names["gcps.vrt"]["path"]).read(), "the VRT points at the scan itself"
    warped = gdalinfo(names["warped.tif"]["path"])
    assert 'ID["EPSG",32633]' in warped["coordinateSystem"]["wkt"] and len(warped["geoTransform"]) == 6
    assert_cog(warped, names["warped.tif"]["path"], "DEFLATE")
    assert revision_files(scan, map_id, revision) == {"gcps.vrt", "warped.tif", "provenance.json"}, "no staging or overview file outlives the call"
    # The same pixels as gdalwarp with default options and the same resampling, from the same GCP VRT.
    reference = scan.base / "reference.tif"
    subprocess.run(["gdalwarp", "-q", "-r", "bilinear", "-order", "2", names["gcps.vrt"]["path"], str(reference)], check=True)
    assert gdalinfo(reference)["size"] == warped["size"]
    assert all(abs(a - b) <= 1e-9 * max(abs(a), 1.0) for a, b in zip(gdalinfo(reference)["geoTransform"], warped["geoTransform"]))
    difference = abs(raster(names["warped.tif"]["path"]).astype(int) - raster(reference).astype(int))
    assert difference.max() <= 1, f"pixels differ from gdalwarp's by up to {difference.max()}"
    # The warped image covers the fitted footprint of the scan.
    corners = [quadratic(c, r) for c, r in [(0, 0), (WIDTH, 0), (0, HEIGHT), (WIDTH, HEIGHT)]]
    gt = warped["geoTransform"]
    assert abs(gt[0] - min(x for x, _ in corners)) < 3 * abs(gt[1]) and abs(gt[3] - max(y for _, y in corners)) < 3 * abs(gt[5])


@pytest.mark.parametrize("compression, gdal_name", [("jpeg", "JPEG"), ("webp", "WEBP")])
async def test_lossy_compression_settings_write_smaller_cogs_on_one_thread_too(tmp_path, compression, gdal_name):
    server = Server(tmp_path, {"GEOMAP_GEOREF_COMPRESSION": compression, "GEOMAP_WORKER_THREADS": "1"})
    pillow_image(server.map_root / "scan.png", WIDTH, HEIGHT, "PNG")
    async with server.connect() as client:
        capabilities = (await client.call_tool("geomap_capabilities", {})).structured_content["georeference"]
        map_id = await registered(client)
        placed = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(lambda c, r: apply(UTM_GT, c, r), SPREAD[:6]))
        warped = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(quadratic, SPREAD), transform="polynomial2")
    assert (capabilities["format"], capabilities["compression"], capabilities["worker_threads"]) == ("COG", compression, 1), capabilities
    for result, name in [(placed, "georeferenced.tif"), (warped, "warped.tif")]:
        assert result.is_error is False, result
        assert result.structured_content["compression"] == compression
        [image] = [a for a in result.structured_content["artifacts"] if a["name"] == name]
        assert_cog(gdalinfo(image["path"]), image["path"], gdal_name)
    image = placed.structured_content["artifacts"][0]
    difference = abs(raster(image["path"]).astype(int) - raster(server.map_root / "scan.png").astype(int))
    assert difference.mean() < 8, f"quality 90 keeps the scan recognisable (mean difference {difference.mean():.1f})"


def test_a_bad_compression_or_thread_count_stops_the_server_at_start_naming_the_setting(tmp_path):
    server = Server(tmp_path)
    for variable, value in [("GEOMAP_GEOREF_COMPRESSION", "lzw"), ("GEOMAP_WORKER_THREADS", "none"), ("GEOMAP_GEOREF_MEMORY", "0")]:
        refused = run_binary(server, env={variable: value})
        assert refused.returncode == 2 and variable in refused.stderr, refused
    checked = run_binary(server, "check", env={"GEOMAP_GEOREF_COMPRESSION": "webp", "GEOMAP_WORKER_THREADS": "3"})
    assert "Cloud Optimized GeoTIFF, webp compression" in checked.stdout and "3 worker threads" in checked.stdout, checked.stdout


@pytest.mark.parametrize("transform, count", [("polynomial3", 10), ("thin_plate_spline", 6)])
async def test_higher_order_and_spline_transforms_fit_with_warnings_when_exact(scan, transform, count):
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(quadratic, SPREAD[:count]), transform=transform)
    revision = result.structured_content
    assert result.is_error is False, result
    assert max(r["crs_units"] for r in revision["residuals"]) < 1e-6
    assert any("residuals are zero" in w or "zero by construction" in w for w in revision["warnings"]), revision["warnings"]


async def test_noisy_points_give_the_expected_rmse_and_flag_an_outlier(scan):
    # A 3×3 grid with noise (c-1)(r-1)·k: orthogonal to every affine, so the
    # least-squares fit is the true one and the residuals are exactly the noise.
    k = 3.0
    cells = [(c, r) for c in range(3) for r in range(3)]
    points = [{"col": 100 + 400 * c, "row": 100 + 300 * r, "x": apply(UTM_GT, 100 + 400 * c, 100 + 300 * r)[0] + (c - 1) * (r - 1) * k, "y": apply(UTM_GT, 100 + 400 * c, 100 + 300 * r)[1]} for c, r in cells]
    expected_rmse = math.sqrt(sum(((c - 1) * (r - 1) * k) ** 2 for c, r in cells) / len(cells))
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points)
        revision = result.structured_content
        assert abs(revision["rmse"]["crs_units"] - expected_rmse) < 1e-6, (revision["rmse"], expected_rmse)
        for found, expected in zip(revision["geotransform"], UTM_GT):
            assert abs(found - expected) <= 1e-9 * max(abs(expected), 1.0)
        assert revision["warnings"] == []
        points[4]["x"] += 150.0  # the centre point, 150 m (~75 px) off
        flagged = (await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points)).structured_content
    assert any("control_points[4]" in w for w in flagged["warnings"]), flagged["warnings"]


async def test_wgs84_bounds_of_a_utm_map_match_gdaltransform(scan):
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(lambda c, r: apply(UTM_GT, c, r), SPREAD[:6]))
    found = result.structured_content["wgs84_bounds"]
    expected = box(gdaltransform([apply(UTM_GT, c, r) for c, r in outline(0, 0, WIDTH, HEIGHT)], "EPSG:32633"))
    for side in expected:
        assert abs(found[side] - expected[side]) < 1e-6, (side, found, expected)


async def test_wgs84_bounds_of_a_nad27_map_match_gdaltransform(scan, era):
    bounds = {"west": -120.25, "south": 35.5, "east": -119.75, "north": 35.875}
    region = {"col": 40, "row": 30, "width": 900, "height": 700}
    async with scan.connect(era) as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=bounds, pixel_region=region)
    revision = result.structured_content
    assert result.is_error is False, result
    assert revision["pixel_region"] == region and "residuals" not in revision
    dx, dy = (bounds["east"] - bounds["west"]) / region["width"], (bounds["north"] - bounds["south"]) / region["height"]
    assert revision["geotransform"] == pytest.approx([bounds["west"] - 40 * dx, dx, 0.0, bounds["north"] + 30 * dy, 0.0, -dy], rel=1e-12)
    nad27 = [(bounds["west"] + (c - 40) * dx, bounds["north"] - (r - 30) * dy) for c, r in outline(40, 30, 900, 700)]
    expected = box(gdaltransform(nad27, "EPSG:4267"))
    for side in expected:
        assert abs(revision["wgs84_bounds"][side] - expected[side]) < 1e-6, (side, revision["wgs84_bounds"], expected)
    assert "NAD27" in gdalinfo(revision["artifacts"][0]["path"])["coordinateSystem"]["wkt"]


GOOD_BOUNDS = {"west": -120.0, "south": 35.0, "east": -119.0, "north": 36.0}
AFFINE_POINTS = points_from(lambda c, r: apply(UTM_GT, c, r), SPREAD[:4])
INVALID = [
    ({"crs": "EPSG:4267", "bounds": {**GOOD_BOUNDS, "west": -118.0}}, "west (-118) must be less than bounds.east"),
    ({"crs": "EPSG:4267", "bounds": {**GOOD_BOUNDS, "south": 36.0}}, "south (36) must be less than bounds.north"),
    ({"crs": "EPSG:4326", "bounds": {**GOOD_BOUNDS, "north": 91.0}}, "latitude 91 is outside -90..90"),
    ({"crs": "EPSG:4326", "bounds": {**GOOD_BOUNDS, "west": -181.0}}, "longitude -181 is outside -180..180"),
    ({"crs": "EPSG:4326", "bounds": {**GOOD_BOUNDS, "east": float("inf")}}, "bounds.east is not a finite number"),
    ({"crs": "EPSG:4326", "bounds": {**GOOD_BOUNDS, "south": float("nan")}}, "bounds.south is not a finite number"),
    ({"crs": "EPSG:999999", "bounds": GOOD_BOUNDS}, "PROJ cannot resolve the CRS"),
    ({"crs": "not a crs at all", "bounds": GOOD_BOUNDS}, "PROJ cannot resolve the CRS"),
    ({"crs": "", "bounds": GOOD_BOUNDS}, "crs is empty"),
    ({"crs": "EPSG:4267", "bounds": GOOD_BOUNDS, "pixel_region": {"col": 900, "row": 0, "width": 200, "height": 10}}, "reaches outside the 1000×800 image"),
    ({"crs": "EPSG:32633", "control_points": AFFINE_POINTS[:2]}, "2 control points given; transform affine needs at least 3"),
    ({"crs": "EPSG:32633", "control_points": points_from(quadratic, SPREAD[:5]), "transform": "polynomial2"}, "needs at least 6"),
    ({"crs": "EPSG:32633", "control_points": points_from(quadratic, SPREAD[:9]), "transform": "polynomial3"}, "needs at least 10"),
    ({"crs": "EPSG:32633", "control_points": AFFINE_POINTS[:2], "transform": "thin_plate_spline"}, "needs at least 3"),
    ({"crs": "EPSG:32633", "control_points": points_from(lambda c, r: apply(UTM_GT, c, r), [(0, 0), (100, 100), (200, 200), (300, 300)])}, "lie on one line"),
    ({"crs": "EPSG:32633", "control_points": [*AFFINE_POINTS, AFFINE_POINTS[0]]}, "are duplicates"),
    ({"crs": "EPSG:32633", "control_points": [*AFFINE_POINTS[:3], {"col": 1200, "row": 5, "x": 1.0, "y": 2.0}]}, "is outside the 1000×800 image"),
    ({"crs": "EPSG:32633", "control_points": [*AFFINE_POINTS[:3], {"col": 10, "row": None, "x": 1.0, "y": 2.0}]}, "control_points[3].row is not a finite number"),
]


@pytest.mark.parametrize("arguments, phrase", INVALID)
async def test_invalid_bounds_crs_and_points_are_invalid_bounds_without_hints(scan, arguments, phrase):
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, **arguments)
    envelope = assert_envelope(result, "invalid_bounds", scan, tool="geomap_georeference", hints=False)
    assert "recovery_hints" not in envelope, "invalid_bounds carries no hints: the message says it all"
    assert phrase in envelope["message"], envelope["message"]
    assert scan.registry()["maps"][map_id]["revisions"] == [], "a refused georeference writes no revision"


@pytest.mark.parametrize(
    "arguments, field, problem",
    [
        ({"crs": "EPSG:4267", "bounds": GOOD_BOUNDS, "control_points": AFFINE_POINTS}, "/control_points", "conflict"),
        ({"crs": "EPSG:4267"}, "/bounds", "missing"),
        ({"crs": "EPSG:4267", "bounds": {**GOOD_BOUNDS, "west": "far west"}}, "/bounds/west", "wrong_value"),
        ({"crs": "EPSG:32633", "control_points": AFFINE_POINTS, "transform": "cubic"}, "/transform", "wrong_value"),
        ({"crs": "EPSG:32633", "control_points": AFFINE_POINTS, "pixel_region": {"col": 0, "row": 0, "width": 5, "height": 5}}, "/pixel_region", "conflict"),
        ({"crs": "EPSG:4267", "bounds": GOOD_BOUNDS, "transform": "polynomial2"}, "/transform", "conflict"),
        ({"crs": "EPSG:4267", "bounds": {"west": 1, "south": 2, "east": 3}}, "/bounds/north", "missing"),
    ],
)
async def test_malformed_shapes_are_invalid_arguments(scan, era, arguments, field, problem):
    async with scan.connect(era) as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, **arguments)
    envelope = assert_envelope(result, "invalid_arguments", scan, tool="geomap_georeference")
    assert (envelope["details"]["field"], envelope["details"]["problem"]) == (field, problem)


async def test_every_call_is_a_new_revision_and_the_newest_is_current(scan, era):
    async with scan.connect(era) as client:
        map_id = await registered(client)
        first = (await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)).structured_content
        second = (await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)).structured_content
        described = (await client.call_tool("geomap_describe_map", {"map_id": map_id})).structured_content
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        blob = await client.read_resource(second["artifacts"][0]["resource_uri"])
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert first["revision_id"] != second["revision_id"]
    assert [r["revision_id"] for r in described["revisions"]] == [first["revision_id"], second["revision_id"]]
    assert described["current_revision_id"] == second["revision_id"]
    assert first["artifacts"][0]["resource_uri"] in listed and second["artifacts"][0]["resource_uri"] in listed
    assert base64.b64decode(blob.contents[0].blob) == open(second["artifacts"][0]["path"], "rb").read()
    assert blob.contents[0].mime_type == "image/tiff"
    annotations = tools["geomap_georeference"].annotations
    assert (annotations.idempotent_hint, annotations.read_only_hint, annotations.destructive_hint) == (False, False, False)


async def test_concurrent_georeferences_from_two_servers_lose_none(scan):
    async with scan.connect() as client:
        map_id = await registered(client)

    async def georeference_five():
        async with scan.connect() as client:
            for _ in range(5):
                result = await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)
                assert result.is_error is False, result

    async with anyio.create_task_group() as group:
        group.start_soon(georeference_five)
        group.start_soon(georeference_five)
    assert len(scan.registry()["maps"][map_id]["revisions"]) == 10


async def test_a_missing_proj_database_is_for_the_operator(tmp_path):
    empty = tmp_path / "no-proj"
    empty.mkdir()
    server = Server(tmp_path, {"PROJ_DATA": str(empty), "PROJ_LIB": str(empty)})
    pillow_image(server.map_root / "scan.png", 50, 40, "PNG")
    async with server.connect() as client:
        capabilities = (await client.call_tool("geomap_capabilities", {})).structured_content
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)
    assert capabilities["georeference"]["proj_database"] is False
    ready = {tool["name"]: tool for tool in capabilities["tools"]}["geomap_georeference"]
    assert (ready["ready"], ready["unavailable_code"]) == (False, "missing_system_dependency")
    envelope = assert_envelope(result, "missing_system_dependency", server, tool="geomap_georeference")
    assert envelope["details"]["missing"] == "PROJ database (proj.db)"
    assert "proj-data" in envelope["recovery_hints"][0]
    assert not any(line.startswith("ERROR 1:") for line in server.log()), "GDAL's messages never reach stderr raw"


async def test_a_missing_gdal_driver_is_for_the_operator(tmp_path):
    server = Server(tmp_path, {"GDAL_SKIP": "GTiff"})  # GDAL registers every driver but this one
    pillow_image(server.map_root / "scan.png", 50, 40, "PNG")
    async with server.connect() as client:
        capabilities = (await client.call_tool("geomap_capabilities", {})).structured_content
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)
    assert capabilities["georeference"]["missing"] == ["GDAL driver GTiff"]
    envelope = assert_envelope(result, "missing_system_dependency", server, tool="geomap_georeference")
    assert envelope["details"]["missing"] == "GDAL driver GTiff"
    assert not (server.data_root / "artifacts").exists() or not any((server.data_root / "artifacts").rglob("*.tif"))


async def test_georeferencing_an_unknown_map_is_artifact_not_found(scan):
    async with scan.connect() as client:
        result = await georeference(client, map_id="map_0123456789abcdef0123", crs="EPSG:4267", bounds=GOOD_BOUNDS)
    assert assert_envelope(result, "artifact_not_found", scan)["details"]["reason"] == "unknown_map_id"


@pytest.mark.parametrize("arguments", [{"bounds": GOOD_BOUNDS, "crs": "EPSG:4267"}, {"control_points": points_from(quadratic, SPREAD), "transform": "polynomial2", "crs": "EPSG:32633"}])
async def test_georeferencing_reports_progress_to_a_client_that_asks(scan, era, arguments):
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    async with scan.connect(era) as client:
        map_id = await registered(client)
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, **arguments}, progress_callback=on_progress)
    assert result.is_error is False, result
    values = [progress for progress, _, _ in updates]
    assert all(a < b for a, b in zip(values, values[1:])), f"progress must increase with each notification: {updates}"
    assert values[0] == 0 and values[-1] == 100, updates
    assert all(total == 100 for _, total, _ in updates)
    assert {"writing the Cloud Optimized GeoTIFF", "warping the scan"} & {message for _, _, message in updates}, updates


@pytest.mark.parametrize("transform", ["affine", "polynomial2"])
async def test_a_geotiff_scan_is_placed_by_the_new_points_not_its_old_georeference(server, transform):
    png_path = pillow_image(server.base / "plain.png", WIDTH, HEIGHT, "PNG")
    subprocess.run(["gdal_translate", "-q", "-a_srs", "EPSG:4326", "-a_ullr", "10", "50", "11", "49", str(png_path), str(server.map_root / "old.tif")], check=True)
    mapping = quadratic if transform == "polynomial2" else (lambda c, r: apply(UTM_GT, c, r))
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "old.tif"})).structured_content["map_id"]
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(mapping, SPREAD), transform=transform)
    revision = result.structured_content
    assert result.is_error is False, result
    output = next(a for a in revision["artifacts"] if a["name"].endswith(".tif"))
    info = gdalinfo(output["path"])
    assert 'ID["EPSG",32633]' in info["coordinateSystem"]["wkt"]
    corners = [mapping(c, r) for c, r in [(0, 0), (WIDTH, 0), (0, HEIGHT), (WIDTH, HEIGHT)]]
    gt = info["geoTransform"]
    assert abs(gt[0] - min(x for x, _ in corners)) < 3 * abs(gt[1]) + abs(gt[2]) * HEIGHT, (gt, corners)
    assert gt[0] > 1000, "the old lon/lat georeference must not leak into the output"


@pytest.mark.parametrize(
    "crs, name",
    [
        ("+proj=utm +zone=33 +datum=WGS84 +units=m +no_defs", "unknown"),
        (subprocess.run(["gdalsrsinfo", "-o", "wkt", "EPSG:32633"], capture_output=True, text=True).stdout.strip(), "WGS 84 / UTM zone 33N"),
    ],
)
async def test_proj_strings_and_wkt_are_accepted_on_a_jpeg_scan(server, crs, name):
    pillow_image(server.map_root / "scan.jpg", WIDTH, HEIGHT, "JPEG")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "scan.jpg"})).structured_content["map_id"]
        result = await georeference(client, map_id=map_id, crs=crs, control_points=points_from(lambda c, r: apply(UTM_GT, c, r), SPREAD[:5]))
    revision = result.structured_content
    assert result.is_error is False, result
    assert revision["crs_name"] == name
    assert revision["geotransform"] == pytest.approx(UTM_GT, rel=1e-9)
    expected = box(gdaltransform([apply(UTM_GT, c, r) for c, r in outline(0, 0, WIDTH, HEIGHT)], "EPSG:32633"))
    assert all(abs(revision["wgs84_bounds"][side] - expected[side]) < 1e-6 for side in expected)


async def test_nearly_collinear_points_fit_with_a_warning(scan):
    cells = [(0, 400), (500, 401), (1000, 402), (250, 400.5), (750, 401.2)]
    async with scan.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(lambda c, r: apply(UTM_GT, c, r), cells))
    revision = result.structured_content
    assert result.is_error is False, result
    assert any("nearly collinear" in w for w in revision["warnings"]), revision["warnings"]


async def test_a_paletted_scan_is_warped_as_rgb(server):
    from PIL import Image

    Image.new("RGB", (WIDTH, HEIGHT), (200, 30, 30)).convert("P", palette=Image.Palette.ADAPTIVE, colors=16).save(server.map_root / "paletted.png")
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "paletted.png"})).structured_content["map_id"]
        result = await georeference(client, map_id=map_id, crs="EPSG:32633", control_points=points_from(quadratic, SPREAD), transform="polynomial2")
    assert result.is_error is False, result
    warped = next(a for a in result.structured_content["artifacts"] if a["name"] == "warped.tif")
    assert [band["colorInterpretation"] for band in gdalinfo(warped["path"])["bands"]] == ["Red", "Green", "Blue"]


async def test_an_artifact_too_large_for_a_resource_points_at_its_file(server):
    from mcp.shared.exceptions import MCPError
    from conftest import png

    png(server.map_root / "noise.png", 3600, 3600, noise=True)  # ~37 MiB of incompressible pixels
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "noise.png"})).structured_content["map_id"]
        revision = (await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)).structured_content
        tif = revision["artifacts"][0]
        assert tif["bytes"] > 32 * 2**20
        with pytest.raises(MCPError) as raised:
            await client.read_resource(tif["resource_uri"])
    assert raised.value.error.code == -32602
    envelope = raised.value.error.data
    assert envelope["code"] == "oversize_image" and envelope["details"]["limit"] == "resource_blob_bytes"
    assert tif["path"] in envelope["recovery_hints"][0]


async def test_an_artifact_the_disk_cannot_read_is_the_operators_and_a_deleted_one_is_not_found(server):
    import os
    import shutil

    from mcp.shared.exceptions import MCPError

    pillow_image(server.map_root / "scan.png", 50, 40, "PNG")
    async with server.connect() as client:
        map_id = await registered(client)
        revision = (await georeference(client, map_id=map_id, crs="EPSG:4267", bounds=GOOD_BOUNDS)).structured_content
        tif = revision["artifacts"][0]
        os.remove(tif["path"])
        os.mkdir(tif["path"])  # still there, but reading it fails (EISDIR): not the agent's to fix
        with pytest.raises(MCPError) as unreadable:
            await client.read_resource(tif["resource_uri"])
        shutil.rmtree(tif["path"])
        with pytest.raises(MCPError) as deleted:
            await client.read_resource(tif["resource_uri"])
    assert unreadable.value.error.code == -32603
    envelope = unreadable.value.error.data
    assert (envelope["code"], envelope["cause"], envelope["details"]) == ("internal_error", "io", {"stage": "reading"}), envelope
    assert any(f"trace_id={envelope['trace_id']} the data root failed while reading" in line for line in server.log()), server.log()
    assert deleted.value.error.data["code"] == "artifact_not_found"
    assert deleted.value.error.data["details"]["reason"] == "unknown_artifact"


async def test_gdal_messages_are_logged_under_the_calls_trace_id(tmp_path):
    server = Server(tmp_path, {"GEOMAP_LOG": "info,gdal=debug"})
    pillow_image(server.map_root / "scan.png", 50, 40, "PNG")
    async with server.connect() as client:
        map_id = await registered(client)
        result = await georeference(client, map_id=map_id, crs="EPSG:999999", bounds=GOOD_BOUNDS)
    envelope = assert_envelope(result, "invalid_bounds", server, hints=False)
    assert any(f"trace_id={envelope['trace_id']} GDAL" in line and "crs not found" in line for line in server.log()), server.log()


async def test_a_cancelled_georeference_stops_mid_write_keeps_nothing_and_frees_its_slot(tmp_path, era):
    server = Server(tmp_path, {"GEOMAP_MAX_HEAVY_CALLS": "1"})
    png(server.map_root / "big.png", 6000, 5000, noise=True)
    png(server.map_root / "scan.png", 300, 200)
    async with server.connect(era) as client:
        big = (await client.call_tool("geomap_register_map", {"path": "big.png"})).structured_content["map_id"]
        small = await registered(client)
        arguments = {"map_id": big, "crs": "EPSG:4267", "bounds": GOOD_BOUNDS}
        await interrupt(client, "geomap_georeference", arguments, lambda message, progress: message == "writing the Cloud Optimized GeoTIFF" and progress < 90)
        with anyio.fail_after(20):
            while not [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"]:
                await anyio.sleep(0.05)
        with anyio.fail_after(30):  # the only slot is free again: the next heavy call runs at once
            after = await georeference(client, map_id=small, crs="EPSG:4267", bounds=GOOD_BOUNDS)
        assert after.is_error is False, after
        described = (await client.call_tool("geomap_describe_map", {"map_id": big})).structured_content
    [cancelled, done] = [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"]
    assert (cancelled["outcome"], done["outcome"]) == ("cancelled", "ok"), server.log()
    assert not [line for line in server.log() if " ERROR " in line], "a cancellation is not an operator's failure"
    assert described.get("revisions", []) == [] and server.registry()["maps"][big]["revisions"] == [], described
    assert not (server.data_root / "artifacts" / big).exists() or not any((server.data_root / "artifacts" / big).iterdir()), "no half-written revision folder"


async def test_a_server_killed_mid_write_leaves_nothing_the_next_start_cannot_sweep(tmp_path):
    import os
    import signal

    server = Server(tmp_path)
    png(server.map_root / "big.png", 6000, 5000, noise=True)

    def kill() -> None:
        [pid] = child_servers()
        os.kill(pid, signal.SIGKILL)

    with pytest.raises(Exception):  # the connection dies with the server
        async with server.connect() as client:
            big = (await client.call_tool("geomap_register_map", {"path": "big.png"})).structured_content["map_id"]
            arguments = {"map_id": big, "crs": "EPSG:4267", "bounds": GOOD_BOUNDS}
            await interrupt(client, "geomap_georeference", arguments, lambda message, _: message == "writing the Cloud Optimized GeoTIFF", kill, cancel=False)
    folders = list((server.data_root / "artifacts" / big).iterdir())
    leftovers = [path for path in folders if path.name.startswith(".partial-rev_")]
    assert len(leftovers) == 1 and len(folders) == 1, "killed while writing its revision: under its temporary name, nothing at a final one"
    async with server.connect() as client:
        described = (await client.call_tool("geomap_describe_map", {"map_id": big})).structured_content
        again = await georeference(client, map_id=big, crs="EPSG:4267", bounds=GOOD_BOUNDS)
    assert again.is_error is False, again
    assert not leftovers[0].exists(), "the next start swept the unrecorded revision"
    assert described["map_id"] == big and described.get("revisions", []) == [], described
    assert server.registry()["maps"][big]["revisions"] == [again.structured_content["revision_id"]]
    swept = [line for line in server.log() if "event=sweep" in line]
    assert len(swept) == 1 and "removed=1" in swept[0] and leftovers[0].name in swept[0], server.log()
    kept = [path.name for path in (server.data_root / "artifacts" / big).iterdir()]
    assert kept == [again.structured_content["revision_id"]], "the recorded revision at its final name, nothing else"

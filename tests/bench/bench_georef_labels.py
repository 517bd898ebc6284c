"""geomap_georeference {from: "labels"}: how far the georeference the server reads from a sheet's own
labels lies from the truth, and how long it takes. A benchmark, not a test. Run with ./dev bench
(the OCR wheels come from tests/.cache, which the tests fill).

On the drawn sheets (tests/sheets.py: quadrangle style at skews 0, +0.6° and -1°, JPEG; UTM ticks),
the error the CriticalMAAS TA1 way: the root mean square, over random pixels of the map area, of the
geodesic distance between where the fitted transform and the truth put them, in metres and in
pixels' worth (goal: at most 1.5 pixels). On the USGS sample (../shared/assets/sample_usgs.jpg,
skipped when absent), the distance at each neatline corner between the fitted transform and the
corner's printed coordinates (goal: under 100 m), and the time (goal: at most 15 s, most of it
reading the ring)."""

import asyncio
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sheets  # noqa: E402
from conftest import SHARED_ASSETS, Mirror, Server  # noqa: E402
from test_detect import CACHE, OCR_WHEEL, WHEEL  # noqa: E402

EARTH = 6_371_008.8
GEOGRAPHIC = {"EPSG:4267", "EPSG:4269", "EPSG:4326"}  # the CRSs a label georeference in degrees is written in
SAMPLE_CORNERS = {"top left": (-114.0, 36.0), "top right": (-113.0, 36.0), "bottom right": (-113.0, 35.5), "bottom left": (-114.0, 35.5)}


def geodesic_m(a: tuple, b: tuple) -> float:
    """Great-circle distance between (lon, lat) points, in metres."""
    (lon1, lat1), (lon2, lat2) = [(math.radians(x), math.radians(y)) for x, y in (a, b)]
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH * math.asin(math.sqrt(h))


def drawn_error(sheet: sheets.Sheet, geotransform: list, unit: float) -> tuple[float, float]:
    """(RMS metres over random pixels of the map area, RMS pixels' worth as the tests measure it)."""
    pairs = sheets.fitted_and_true(sheet, geotransform, unit, samples=500, seed=11)
    if unit == 1.0:
        metres = [geodesic_m(truth, fitted) for fitted, truth in pairs]
    else:
        metres = [math.hypot(truth[0] - fitted[0], truth[1] - fitted[1]) * 1000.0 for fitted, truth in pairs]
    rms_m = math.sqrt(sum(m * m for m in metres) / len(metres))
    return rms_m, sheets.error_px(sheet, geotransform, unit)


async def labels_of(client, path: str) -> tuple:
    """Registers `path` and reads its labels (a dry run): the result and the seconds it took."""
    map_id = (await client.call_tool("geomap_register_map", {"path": path})).structured_content["map_id"]
    started = time.perf_counter()
    result = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels", "dry_run": True})
    return result, time.perf_counter() - started


async def main() -> None:
    mirror = Mirror()
    mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
    mirror.files[OCR_WHEEL] = (CACHE / OCR_WHEEL).read_bytes()
    base = Path(tempfile.mkdtemp(prefix="bench-labels-"))
    try:
        server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url})
        cases = [("quadrangle, no skew", sheets.Sheet(), "dms", 1.0), ("quadrangle, +0.6°", sheets.Sheet(skew=0.6), "dms", 1.0), ("quadrangle, -1°", sheets.Sheet(skew=-1.0), "dms", 1.0), ("UTM ticks, -0.4°", sheets.utm_sheet(-0.4), "utm", 1000.0)]
        async with server.connect() as client:
            assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
            print("drawn sheets (2600×2000 JPEG, frame 2000×1480 px):")
            for index, (name, sheet, labels, unit) in enumerate(cases):
                path = sheets.draw(sheet, server.map_root / f"sheet{index}.jpg", labels=labels)
                result, seconds = await labels_of(client, path.name)
                if result.is_error:
                    print(f"  {name:22s} failed: {result.structured_content.get('message')}")
                    continue
                revision = result.structured_content
                rms_m, rms_px = drawn_error(sheet, revision["geotransform"], unit)
                used = sum(1 for label in revision["labels"]["labels"] if label["used"])
                print(f"  {name:22s} error {rms_m:7.1f} m = {rms_px:4.2f} px (goal <= 1.5 px)   {used} labels used   {seconds:5.1f} s   {revision['crs']}")
            sample = SHARED_ASSETS / "sample_usgs.jpg"
            if not sample.is_file():
                print(f"USGS sample: SKIPPED ({sample} is absent)")
                return
            shutil.copy(sample, server.map_root / "sample_usgs.jpg")
            result, seconds = await labels_of(client, "sample_usgs.jpg")
            if result.is_error:
                print(f"USGS sample: failed in {seconds:.1f} s: {result.structured_content.get('message')}")
                return
            revision = result.structured_content
            labels = revision["labels"]
            print(f"USGS sample (3869×2393): {seconds:.1f} s (goal <= 15 s; stages {labels['timings']}), {revision['crs']} ({labels['crs_decision']['because'] if labels.get('crs_decision') else 'given'}), {labels['transform_choice']}")
            print(f"  neatline skew {labels['neatline']['skew_degrees']:.3f}°, corners {[[round(v, 1) for v in c] for c in labels['neatline']['corners']]}")
            residuals = {(round(p['col'], 1), round(p['row'], 1)): r for p, r in zip(revision["control_points"], revision["residuals"])}
            for point in labels["control_points"]:
                if point["anchor"] != "corner":
                    continue
                residual = residuals.get((round(point["col"], 1), round(point["row"], 1)))
                lon, lat = point["x"], point["y"]
                name = next((n for n, (x, y) in SAMPLE_CORNERS.items() if abs(x - lon) < 1e-6 and abs(y - lat) < 1e-6), f"({lon:.4f}, {lat:.4f})")
                if residual is None:
                    continue
                if revision["crs"] in GEOGRAPHIC:
                    error = geodesic_m((lon, lat), (lon + residual["dx"], lat + residual["dy"]))
                else:
                    error = residual["crs_units"]  # metres: the fit is in a projected CRS (UTM)
                print(f"  corner {name:13s} fitted {error:6.1f} m from its printed coordinates (goal < 100 m)")
            print(f"  labels used {sum(1 for label in labels['labels'] if label['used'])} of {len(labels['labels'])} lines read; rmse {labels['accuracy']['rmse_m']}")
    finally:
        mirror.close()
        shutil.rmtree(base, ignore_errors=True)


asyncio.run(main())

"""geomap_extract_units against a Python pipeline doing the same steps (tests/bench/units_pipeline.py:
numpy nearest swatch in CIELAB, a 7 × 7 mode filter, GDAL's sieve and polygonize), in one run: per-unit
pixel F1 (the TA1 feature metric) of both on the drawn map of tests/unit_maps.py at its test size and
at 8× (a 13600 × 8000 scan whose main map is 8000 × 7200), the time of each on the large one, and peak
resident memory against the decoded main map (3 bytes a pixel). The layout comes from
geomap_process_image with the runtime and OCR models the tests cache; the extraction runs in a fresh
server process so its peak memory is its own. Goals: median F1 >= 0.90; >= 2× faster than the Python
pipeline with F1 within 0.01 of it; peak memory <= 1.5× the decoded main map. Run with ./dev bench."""

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

Image.MAX_IMAGE_PIXELS = None
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import unit_maps  # noqa: E402
from conftest import Mirror, Server  # noqa: E402
from test_detect import CACHE, OCR_WHEEL, WHEEL  # noqa: E402

PIPELINE = Path(__file__).with_name("units_pipeline.py")


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def classes_of(path: Path, out: Path) -> Image.Image:
    subprocess.run(["gdal_translate", "-q", "-of", "PNG", str(path), str(out)], check=True)
    return Image.open(out)


def nearest_code(colour_hex: str) -> str:
    rgb = tuple(int(colour_hex[i : i + 2], 16) for i in (1, 3, 5))
    return min(unit_maps.UNITS, key=lambda unit: sum((a - b) ** 2 for a, b in zip(unit[2], rgb)))[0]


async def one(base: Path, mirror: Mirror, scale: float) -> dict:
    server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_MAX_IMAGE_PIXELS": "200000000"})
    truth = unit_maps.draw(server.map_root / "map.jpg", scale=scale)
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "map.jpg"})).structured_content["map_id"]
        await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})
        layout = await client.call_tool("geomap_process_image", {"map_id": map_id})
        assert layout.is_error is False, layout
        # The scan's first window read decodes it whole into the pixel store, once for every tool that reads it so; done here, so the peak below is the extraction's own.
        warm = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 100, "row": 100})
        assert warm.is_error is False, warm
    async with server.connect() as client:  # a fresh process: its peak memory is the extraction's
        started = time.perf_counter()
        result = await client.call_tool("geomap_extract_units", {"map_id": map_id})
        seconds = time.perf_counter() - started
        newest = subprocess.run(["pgrep", "-n", "-f", "release/stratigraphic-amenity"], capture_output=True, text=True).stdout.split()
        peak = peak_mib(int(newest[0]))
    assert result.is_error is False, result
    units = result.structured_content
    region = units["region"]
    box = tuple(round(region[key]) for key in ("x0", "y0", "x1", "y1"))
    classes = {unit["class"]: nearest_code(unit["colour_hex"]) for unit in units["units"]}
    ours = unit_maps.f1_per_unit(truth, classes_of(Path(units["raster_path"]), base / "ours.png"), classes, box)
    swatches = [unit["colour_hex"][1:] for unit in units["units"]]
    started = time.perf_counter()
    python = subprocess.run(
        ["/usr/bin/python3", str(PIPELINE), str(server.map_root / "map.jpg"), *map(str, box), str(units["min_area_px"]), str(base), *swatches],
        capture_output=True,
        text=True,
        check=True,
    )
    python_seconds = time.perf_counter() - started
    theirs = unit_maps.f1_per_unit(truth, classes_of(base / "python.tif", base / "python.png"), classes, box)
    main_map_mib = (box[2] - box[0]) * (box[3] - box[1]) * 3 / 2**20
    return {
        "scale": scale,
        "main_map": f"{box[2] - box[0]}x{box[3] - box[1]}",
        "ours_f1": ours,
        "python_f1": theirs,
        "ours_s": seconds,
        "ours_timings_ms": units["timings"],
        "python_s": python_seconds,
        "python_stages": json.loads(python.stdout.strip().splitlines()[-1]),
        "ours_peak_mib": peak,
        "main_map_mib": main_map_mib,
    }


async def main() -> None:
    mirror = Mirror()
    mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
    mirror.files[OCR_WHEEL] = (CACHE / OCR_WHEEL).read_bytes()
    try:
        for scale in (1.0, 8.0):
            with tempfile.TemporaryDirectory() as base:
                row = await one(Path(base), mirror, scale)
            ours, theirs = row["ours_f1"], row["python_f1"]
            print(f"map at {scale}x, main map {row['main_map']} ({row['main_map_mib']:.0f} MiB decoded)")
            print("  per-unit F1, ours:  ", {code: round(value, 3) for code, value in ours.items()}, "median", round(statistics.median(ours.values()), 3))
            print("  per-unit F1, python:", {code: round(value, 3) for code, value in theirs.items()}, "median", round(statistics.median(theirs.values()), 3))
            print(f"  time: ours {row['ours_s']:.2f} s {row['ours_timings_ms']}, python {row['python_s']:.2f} s {row['python_stages']}")
            print(f"  speed-up {row['python_s'] / row['ours_s']:.2f}x; peak memory: ours {row['ours_peak_mib']:.0f} MiB = {row['ours_peak_mib'] / row['main_map_mib']:.2f}x the decoded main map, python {row['python_stages']['peak_rss_mib']:.0f} MiB")
    finally:
        mirror.close()


asyncio.run(main())

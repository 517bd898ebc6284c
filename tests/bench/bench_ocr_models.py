"""PP-OCRv4 (asset ppocr-v4, the default) against PP-OCRv5 (asset ppocr-v5, GEOMAP_OCR_MODELS) on the
real USGS scan (../shared/assets/sample_usgs.jpg, Peach Springs 30'×60'), one server per generation,
side by side in one run, through the official client.

Prints one table: reading the whole scan (geomap_read_text: time, lines), the layout by the text
method (geomap_process_image: time, the 50 legend codes exactly right in order, the title, metadata
fields found), and the label georeference (geomap_georeference from labels: labels used, and how far
the sheet's corners land from the quadrangle's, 35.5–36° N, 113–114° W). The default generation is
the one this table favours. A benchmark, not a test: run with ./dev bench.
"""

import difflib
import math
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import SHARED_ASSETS, Mirror, Server  # noqa: E402
from test_detect import CACHE, OCR_V5_WHEEL, OCR_WHEEL, WHEEL  # noqa: E402
from test_layout_words import SAMPLE_CODES  # noqa: E402

from harness import run  # noqa: E402

SCAN = SHARED_ASSETS / "sample_usgs.jpg"
GENERATIONS = ["ppocr-v4", "ppocr-v5"]
QUADRANGLE = {"west": -114.0, "south": 35.5, "east": -113.0, "north": 36.0}
TITLE = "Geologic Map of the Peach Springs 30' x 60' Quadrangle, Mohave and Coconino Counties, Northwestern Arizona"


def codes_right(codes: list) -> int:
    """Codes equal to the printed list's, in its order (an entry missed or added shifts nothing else)."""
    printed = SAMPLE_CODES.split()
    matcher = difflib.SequenceMatcher(a=printed, b=codes, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


def corner_error_km(bounds: dict) -> float:
    """The largest distance, in km, between a side of `bounds` and the quadrangle's."""
    north_km = max(abs(bounds[side] - QUADRANGLE[side]) for side in ("south", "north")) * 111.2
    east_km = max(abs(bounds[side] - QUADRANGLE[side]) for side in ("west", "east")) * 111.2 * math.cos(math.radians(35.75))
    return max(north_km, east_km)


async def one_generation(base: Path, mirror: Mirror, generation: str) -> dict:
    server = Server(base / generation, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_OCR_MODELS": generation})
    shutil.copy(SCAN, server.map_root / "usgs.jpg")
    row = {}
    async with server.connect() as client:
        prepared = await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", generation]})
        assert prepared.is_error is False, prepared
        map_id = (await client.call_tool("geomap_register_map", {"path": "usgs.jpg"})).structured_content["map_id"]
        started = time.perf_counter()
        reading = await client.call_tool("geomap_read_text", {"map_id": map_id})
        row["read_s"] = time.perf_counter() - started
        assert reading.is_error is False, reading
        row["lines"] = len(reading.structured_content["lines"])
        started = time.perf_counter()
        layout = await client.call_tool("geomap_process_image", {"map_id": map_id})
        row["layout_s"] = time.perf_counter() - started
        assert layout.is_error is False, layout
        document = layout.structured_content
        codes = [entry.get("code") for entry in document["legend_entries"]]
        row["entries"], row["codes"] = len(codes), codes_right(codes)
        row["title"] = document.get("title") == TITLE
        metadata = document.get("metadata") or {}
        row["metadata"] = sorted(field for field in metadata if field != "warnings")
        started = time.perf_counter()
        georeference = await client.call_tool("geomap_georeference", {"map_id": map_id, "from": "labels"})
        row["georef_s"] = time.perf_counter() - started
        if georeference.is_error:
            row["georef"] = f"failed: {georeference.structured_content['code']}"
        else:
            revision = georeference.structured_content
            used = sum(1 for label in revision["labels"]["labels"] if label["used"])
            row["georef"] = f"{used} labels used, sides within {corner_error_km(revision['wgs84_bounds']):.2f} km"
    return row


async def measure(base: Path) -> None:
    mirror = Mirror()
    try:
        for wheel in (WHEEL, OCR_WHEEL, OCR_V5_WHEEL):
            mirror.files[wheel] = (CACHE / wheel).read_bytes()
        rows = {generation: await one_generation(base, mirror, generation) for generation in GENERATIONS}
    finally:
        mirror.close()
    fields = sorted({field for row in rows.values() for field in row["metadata"]})
    table = [
        ("read the whole scan (geomap_read_text)", lambda r: f"{r['read_s']:.2f} s, {r['lines']} lines"),
        ("layout by the text method (geomap_process_image)", lambda r: f"{r['layout_s']:.2f} s"),
        ("legend codes exactly right, of 50", lambda r: f"{r['codes']} ({r['entries']} entries)"),
        ("title read exactly", lambda r: "yes" if r["title"] else "no"),
        (f"metadata fields found (of {len(fields)} either found)", lambda r: f"{len(r['metadata'])}: {', '.join(r['metadata'])}"),
        ("label georeference", lambda r: f"{r['georef']} ({r['georef_s']:.1f} s)"),
    ]
    print("| | " + " | ".join(GENERATIONS) + " |")
    print("|---|" + "---|" * len(GENERATIONS))
    for name, cell in table:
        print(f"| {name} | " + " | ".join(cell(rows[generation]) for generation in GENERATIONS) + " |")


if __name__ == "__main__":
    wheels = [CACHE / WHEEL, CACHE / OCR_WHEEL, CACHE / OCR_V5_WHEEL]
    run(measure, "bench-ocr-models-", [SCAN, *wheels], "the wheels: ./dev bench fetches them; the scan: ../shared/assets")

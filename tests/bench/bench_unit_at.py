"""geomap_unit_at on a 10000×8000 scan through the official client: the first call (which decodes the
scan once into the pixel store) beside 200 calls at random points after it (goal: p50 <= 5 ms, p99 <=
20 ms, resident memory flat across the 200), and a ping through the same client in the same run as the
transport's floor; then geomap_read_text on a 500x500 region of a second copy of the scan: its first
call (which decodes that copy whole into the pixel store) beside 20 calls after it, with the time each
spent getting its pixels. The layout comes from geomap_process_image on the scan (the drawn map of
tests/test_layout_words.py pasted into a 10000×8000 sheet), with the runtime and OCR models the tests
cache. A benchmark, not a test: run with ./dev bench.
"""

import random
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import Mirror, Server, child_servers  # noqa: E402
from test_detect import CACHE, OCR_WHEEL, WHEEL  # noqa: E402
from test_layout_words import PAPER, draw_map  # noqa: E402

from harness import run, status_mib  # noqa: E402

BIG = (10_000, 8_000)
CALLS = 200
TEXT_CALLS = 20


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(base: Path) -> None:
    mirror = Mirror()
    try:
        mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
        mirror.files[OCR_WHEEL] = (CACHE / OCR_WHEEL).read_bytes()
        server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url})
        small = draw_map(base / "drawn.png")
        sheet = Image.new("RGB", BIG, PAPER)
        sheet.paste(Image.open(small), (0, 0))
        sheet.save(server.map_root / "big.png")
        async with server.connect() as client:
            assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})).is_error is False
            map_id = (await client.call_tool("geomap_register_map", {"path": "big.png"})).structured_content["map_id"]
            started = time.perf_counter()
            layout = await client.call_tool("geomap_process_image", {"map_id": map_id})
            assert layout.is_error is False, layout
            print(f"geomap_process_image on the {BIG[0]}x{BIG[1]} sheet: {time.perf_counter() - started:.1f} s (once, for the layout)")
            started = time.perf_counter()
            first = await client.call_tool("geomap_unit_at", {"map_id": map_id, "col": 200, "row": 200})
            first_ms = (time.perf_counter() - started) * 1e3
            assert first.is_error is False and first.structured_content["unit"]["code"] == "Tb", first
            [pid] = child_servers()
            before = status_mib(pid, "VmRSS")
            points = random.Random(7)
            unit_at, pings = [], []
            for _ in range(CALLS):
                arguments = {"map_id": map_id, "col": points.uniform(0, BIG[0] - 1), "row": points.uniform(0, BIG[1] - 1)}
                started = time.perf_counter()
                answer = await client.call_tool("geomap_unit_at", arguments)
                unit_at.append((time.perf_counter() - started) * 1e3)
                assert answer.is_error is False, answer
                started = time.perf_counter()
                await client.send_ping()
                pings.append((time.perf_counter() - started) * 1e3)
            after = status_mib(pid, "VmRSS")
            region = {"x0": 0, "y0": 0, "x1": 500, "y1": 500}
            sheet.putpixel((BIG[0] - 1, BIG[1] - 1), (0, 0, 0))  # other bytes, so another scan to the pixel store
            sheet.save(server.map_root / "copy.png")
            copy_id = (await client.call_tool("geomap_register_map", {"path": "copy.png"})).structured_content["map_id"]
            started = time.perf_counter()
            first_text = await client.call_tool("geomap_read_text", {"map_id": copy_id, "region": region})
            first_text_ms = (time.perf_counter() - started) * 1e3
            assert first_text.is_error is False, first_text
            texts, window_ms = [], []
            for _ in range(TEXT_CALLS):
                started = time.perf_counter()
                answer = await client.call_tool("geomap_read_text", {"map_id": copy_id, "region": region})
                texts.append((time.perf_counter() - started) * 1e3)
                assert answer.is_error is False, answer
                window_ms.append(answer.structured_content["timings"]["decode_ms"])
        p50, p99 = statistics.median(unit_at), percentile(unit_at, 0.99)
        print(
            f"geomap_unit_at: first call {first_ms:.0f} ms (decodes the scan into the pixel store); "
            f"then {CALLS} calls at random points p50 {p50:.2f} ms (goal <= 5), p99 {p99:.2f} ms (goal <= 20); "
            f"ping p50 {statistics.median(pings):.2f} ms; unit_at/ping {p50 / statistics.median(pings):.1f}x"
        )
        print(f"server RSS before the {CALLS} calls {before:.0f} MiB, after {after:.0f} MiB (goal: flat)")
        first_decode = first_text.structured_content["timings"]["decode_ms"]
        print(
            f"geomap_read_text on a 500x500 region: first call {first_text_ms:.0f} ms, of which {first_decode:.0f} ms decode the "
            f"whole scan into the pixel store; then {TEXT_CALLS} calls p50 {statistics.median(texts):.0f} ms, of which "
            f"{statistics.median(window_ms):.1f} ms read the region's pixels ({first_decode / statistics.median(window_ms):.0f}x less than the whole-scan decode)"
        )
    finally:
        mirror.close()


if __name__ == "__main__":
    run(measure, "bench-unit-at-", [CACHE / WHEEL, CACHE / OCR_WHEEL], "run tests/test_read_text.py once: it caches the wheels")

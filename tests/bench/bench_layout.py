"""geomap_process_image by the text method (PP-OCRv4, no PEACE weights) on the real USGS scan
(../shared/assets/sample_usgs.jpg, 3869×2393) and on the same sheet enlarged to 10000×6185 (Lanczos),
as a 10000-pixel scan of it would be, through the official client, side by side in one run.

Prints per scan: the call's time (goal: at most 10 s on the 10000-pixel scan on this 2-core machine),
the layout's own timings (decoding, reading the words, writing), the server's peak memory growth, and
how many of the list of map units' 50 codes are exactly right (goal: at least 48 on the scan), so a
faster reading is never bought with worse codes. A benchmark, not a test: run with ./dev bench.
"""

import shutil
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import SHARED_ASSETS, Mirror, Server, child_servers  # noqa: E402
from test_detect import CACHE, OCR_WHEEL, WHEEL  # noqa: E402
from test_layout_words import SAMPLE_CODES  # noqa: E402

from harness import run, status_mib  # noqa: E402

SCAN = SHARED_ASSETS / "sample_usgs.jpg"
ENLARGED = (10_000, 6185)
ROUNDS = 3


async def measure(base: Path) -> None:
    mirror = Mirror()
    try:
        mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
        mirror.files[OCR_WHEEL] = (CACHE / OCR_WHEEL).read_bytes()
        server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url})
        shutil.copy(SCAN, server.map_root / "usgs.jpg")
        Image.open(SCAN).resize(ENLARGED, Image.LANCZOS).save(server.map_root / "enlarged.png", compress_level=1)
        printed = SAMPLE_CODES.split()
        async with server.connect() as client:
            prepared = await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})
            assert prepared.is_error is False, prepared
            for name in ("usgs.jpg", "enlarged.png"):
                map_id = (await client.call_tool("geomap_register_map", {"path": name})).structured_content["map_id"]
                seconds, timings, codes = [], [], []
                [pid] = child_servers()
                before = status_mib(pid, "VmHWM")
                for _ in range(ROUNDS):
                    started = time.perf_counter()
                    result = await client.call_tool("geomap_process_image", {"map_id": map_id})
                    seconds.append(time.perf_counter() - started)
                    assert result.is_error is False, result
                    timings.append(result.structured_content["timings"])
                    codes = [entry.get("code") for entry in result.structured_content["legend_entries"]]
                right = sum(code == code_printed for code, code_printed in zip(codes, printed)) if len(codes) == len(printed) else None
                median = statistics.median(seconds)
                middle = timings[seconds.index(median)]
                print(
                    f"{name}: geomap_process_image median {median:.1f} s of {ROUNDS} (decode {middle['decode_ms'] / 1e3:.1f}, words {middle['words_ms'] / 1e3:.1f}, "
                    f"write {middle['write_ms'] / 1e3:.1f}); peak memory {status_mib(pid, 'VmHWM'):.0f} MiB (before its first call {before:.0f} MiB); "
                    f"{len(codes)} legend entries, codes exactly right: {right if right is not None else 'not comparable (entries missing)'} of {len(printed)}"
                )
    finally:
        mirror.close()


if __name__ == "__main__":
    run(measure, "bench-layout-", [SCAN, CACHE / WHEEL, CACHE / OCR_WHEEL], "the wheels: run tests/test_read_text.py once; the scan: ../shared/assets")

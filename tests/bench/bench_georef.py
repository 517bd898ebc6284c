"""Georeference a 10000×8000 scan with 6 control points (polynomial2), against
`gdal_translate -gcp` + `gdalwarp` with the same options, side by side in one run
(a benchmark, not a test). Prints the median times, their ratio (goal <= 1.1)
and the peak resident memory of both. Run with ./dev bench.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import Server  # noqa: E402

WIDTH, HEIGHT = 10_000, 8_000
CELLS = [(0, 0), (10_000, 0), (0, 8_000), (10_000, 8_000), (5_000, 4_000), (2_500, 6_000)]
# Options the server passes to gdalwarp for polynomial2 on an RGB byte scan (georef::warp_arguments).
WARP = ["-of", "GTiff", "-r", "bilinear", "-order", "2", "-co", "TILED=YES", "-co", "COMPRESS=DEFLATE", "-co", "BIGTIFF=IF_SAFER", "-co", "PHOTOMETRIC=RGB"]


def ground(col, row):
    return 500_000 + 1.2 * col + 0.1 * row + 2e-6 * col * col, 4_200_000 - 0.1 * col - 1.2 * row + 3e-6 * row * row


def make_scan(path: Path) -> None:
    """A smooth, scan-like JPEG: a small noisy image enlarged (compresses like a real scan)."""
    from PIL import Image

    small = Image.frombytes("RGB", (250, 200), os.urandom(250 * 200 * 3))
    small.resize((WIDTH, HEIGHT), Image.Resampling.BICUBIC).save(path, quality=90)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def run_measured(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise RuntimeError(f"{command[0]} failed: {child.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def gdal_cli(scan: Path, out: Path) -> tuple[float, float]:
    gcps = [arg for c, r in CELLS for arg in ("-gcp", str(c), str(r), *map(repr, ground(c, r)))]
    vrt, tif = out / "gcps.vrt", out / "warped.tif"
    t1, m1 = run_measured(["gdal_translate", "-q", "-of", "VRT", "-a_srs", "EPSG:32633", *gcps, str(scan), str(vrt)])
    t2, m2 = run_measured(["gdalwarp", "-q", "-overwrite", *WARP, str(vrt), str(tif)])
    return t1 + t2, max(m1, m2)


def server_pids() -> list[int]:
    binary = os.path.basename(os.environ.get("GEOMAP_TEST_BINARY", "stratigraphic-amenity"))
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.path.basename(os.readlink(entry / "exe")) == binary and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


async def ours(server: Server) -> tuple[float, float]:
    points = [{"col": c, "row": r, "x": ground(c, r)[0], "y": ground(c, r)[1]} for c, r in CELLS]
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "scan.jpg"})).structured_content["map_id"]
        started = time.perf_counter()
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:32633", "control_points": points, "transform": "polynomial2"})
        elapsed = time.perf_counter() - started
        assert result.is_error is False, result
        [pid] = server_pids()
        return elapsed, peak_rss_mib(pid)


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as base:
        server = Server(Path(base))
        scan = server.map_root / "scan.jpg"
        make_scan(scan)
        print(f"scan: {WIDTH}x{HEIGHT} JPEG, {scan.stat().st_size / 2**20:.1f} MiB; 6 GCPs, polynomial2, bilinear, tiled DEFLATE GeoTIFF")
        ours_runs, cli_runs = [], []
        for n in range(rounds):
            out = Path(base) / f"cli{n}"
            out.mkdir()
            cli_runs.append(gdal_cli(scan, out))
            ours_runs.append(await ours(server))
        t_ours = statistics.median(t for t, _ in ours_runs)
        t_cli = statistics.median(t for t, _ in cli_runs)
        print(f"{'':<34} {'median s':>9} {'peak RSS MiB':>13}")
        print(f"{'geomap_georeference (server)':<34} {t_ours:>9.2f} {max(m for _, m in ours_runs):>13.0f}")
        print(f"{'gdal_translate -gcp + gdalwarp':<34} {t_cli:>9.2f} {max(m for _, m in cli_runs):>13.0f}")
        print(f"time ratio server/CLI: {t_ours / t_cli:.3f} (goal <= 1.1), {rounds} alternating rounds")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))

"""Georeference a 10000×8000 scan with 6 control points (polynomial2, bilinear) into a Cloud Optimized
GeoTIFF, side by side in one run with what a GIS expert runs by hand (a benchmark, not a test):
`gdal_translate -gcp` to a VRT, a tuned `gdalwarp` (all cores, 1 GiB of warp memory and block cache)
to an uncompressed tiled GeoTIFF, then `gdal_translate -of COG` on all cores. Per compression (DEFLATE
with predictor, JPEG and WEBP at quality 90): median times, their ratio (goal <= 1.0) and peak resident
memory (goal: the server at most 1.2x the expert's larger process). Also today's former path, default
`gdalwarp` to a tiled DEFLATE GeoTIFF (goal: the server with JPEG at least 2.5x faster).
Rounds alternate the contenders. Run with ./dev bench.
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
# The former server path: default gdalwarp options to a tiled DEFLATE GeoTIFF.
FORMER = ["-of", "GTiff", "-r", "bilinear", "-order", "2", "-co", "TILED=YES", "-co", "COMPRESS=DEFLATE", "-co", "BIGTIFF=IF_SAFER", "-co", "PHOTOMETRIC=RGB"]
# The expert's tuned warp to an uncompressed tiled file, then the COG copy per compression.
EXPERT_WARP = ["-of", "GTiff", "-r", "bilinear", "-order", "2", "-multi", "-wo", "NUM_THREADS=ALL_CPUS", "-wm", "1024", "--config", "GDAL_CACHEMAX", "1024",
               "-co", "TILED=YES", "-co", "BIGTIFF=IF_SAFER", "-co", "PHOTOMETRIC=RGB"]
COMPRESSIONS = {
    "deflate": ["-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=YES"],
    "jpeg": ["-co", "COMPRESS=JPEG", "-co", "QUALITY=90"],
    "webp": ["-co", "COMPRESS=WEBP", "-co", "QUALITY=90"],
}


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


def gcp_vrt(scan: Path, out: Path) -> tuple[Path, float, float]:
    gcps = [arg for c, r in CELLS for arg in ("-gcp", str(c), str(r), *map(repr, ground(c, r)))]
    vrt = out / "gcps.vrt"
    seconds, peak = run_measured(["gdal_translate", "-q", "-of", "VRT", "-a_srs", "EPSG:32633", *gcps, str(scan), str(vrt)])
    return vrt, seconds, peak


def former(scan: Path, out: Path) -> tuple[float, float]:
    vrt, t1, m1 = gcp_vrt(scan, out)
    t2, m2 = run_measured(["gdalwarp", "-q", "-overwrite", *FORMER, str(vrt), str(out / "warped.tif")])
    return t1 + t2, max(m1, m2)


def expert(scan: Path, out: Path, compression: str) -> tuple[float, float]:
    vrt, t1, m1 = gcp_vrt(scan, out)
    staging = out / "staging.tif"
    t2, m2 = run_measured(["gdalwarp", "-q", "-overwrite", *EXPERT_WARP, str(vrt), str(staging)])
    t3, m3 = run_measured(["gdal_translate", "-q", "-of", "COG", "-co", "NUM_THREADS=ALL_CPUS", *COMPRESSIONS[compression], str(staging), str(out / "cog.tif")])
    staging.unlink()
    return t1 + t2 + t3, max(m1, m2, m3)


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


async def ours(base: Path, scan: Path, compression: str) -> tuple[float, float]:
    """One georeference by a fresh server set to `compression`: seconds for the call, and the server's peak RSS."""
    server = Server(base, {"GEOMAP_MAP_ROOTS": str(scan.parent), "GEOMAP_GEOREF_COMPRESSION": compression})
    points = [{"col": c, "row": r, "x": ground(c, r)[0], "y": ground(c, r)[1]} for c, r in CELLS]
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": scan.name})).structured_content["map_id"]
        started = time.perf_counter()
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:32633", "control_points": points, "transform": "polynomial2"})
        elapsed = time.perf_counter() - started
        assert result.is_error is False, result
        assert result.structured_content["compression"] == compression
        [pid] = server_pids()
        return elapsed, peak_rss_mib(pid)


def main(rounds: int, compressions: list[str]) -> None:
    with tempfile.TemporaryDirectory() as base:
        base = Path(base)
        (base / "maps").mkdir()
        scan = base / "maps" / "scan.jpg"
        make_scan(scan)
        print(f"scan: {WIDTH}x{HEIGHT} JPEG, {scan.stat().st_size / 2**20:.1f} MiB; 6 GCPs, polynomial2, bilinear; {os.cpu_count()} cores")
        runs: dict[str, list[tuple[float, float]]] = {"former": []}
        for compression in compressions:
            runs[f"server {compression}"], runs[f"expert {compression}"] = [], []
        for n in range(rounds):
            out = base / f"former{n}"
            out.mkdir()
            runs["former"].append(former(scan, out))
            for compression in compressions:
                contenders = [("server", lambda: asyncio.run(ours(base / f"server-{compression}-{n}", scan, compression))), ("expert", lambda: expert(scan, out, compression))]
                for who, run in contenders if n % 2 == 0 else contenders[::-1]:
                    runs[f"{who} {compression}"].append(run())
                (out / "cog.tif").unlink(missing_ok=True)
        seconds = {name: statistics.median(t for t, _ in samples) for name, samples in runs.items()}
        peak = {name: max(m for _, m in samples) for name, samples in runs.items()}
        print(f"{'':<46} {'median s':>9} {'peak RSS MiB':>13}")
        print(f"{'former path: default gdalwarp, DEFLATE GeoTIFF':<46} {seconds['former']:>9.2f} {peak['former']:>13.0f}")
        for compression in compressions:
            print(f"{'server, COG ' + compression:<46} {seconds['server ' + compression]:>9.2f} {peak['server ' + compression]:>13.0f}")
            print(f"{'expert: tuned gdalwarp + COG ' + compression:<46} {seconds['expert ' + compression]:>9.2f} {peak['expert ' + compression]:>13.0f}")
        for compression in compressions:
            ratio = seconds[f"server {compression}"] / seconds[f"expert {compression}"]
            memory = peak[f"server {compression}"] / peak[f"expert {compression}"]
            print(f"{compression}: time server/expert {ratio:.3f} (goal <= 1.0); peak memory server/expert {memory:.2f} (goal <= 1.2)")
        if "jpeg" in compressions:
            print(f"jpeg: former path / server {seconds['former'] / seconds['server jpeg']:.2f}x faster (goal >= 2.5)")
        print(f"{rounds} alternating rounds")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compressions", nargs="+", choices=list(COMPRESSIONS), default=list(COMPRESSIONS))
    options = parser.parse_args()
    main(options.rounds, options.compressions)

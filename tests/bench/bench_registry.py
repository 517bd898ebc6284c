"""Registry cost at archive scale (a benchmark, not a test).

Builds three data roots holding 0, 10,000 and 100,000 maps of three revisions
each. The large ones are made through the library, not through tool calls: a
registry document is written here (every revision a copy of a real one the
server produced) and restored with `stratigraphic-amenity registry import`.
Then, in interleaved rounds so that all sizes share the machine's noise, it
measures over stdio with the reference client: start to first tools/list,
registering new files, re-registering an unchanged file, describe, a
georeference (bounds on a small scan: its registry write is what grows),
resources/list's first page and capabilities. Prints p50/p99 per size and the
ratio of each p50 to the empty registry's (goals: within 2x at 100,000 maps;
start-up under 100 ms; first page under 5 ms). Each session makes one untimed
call of each tool first, so p99 is the steady state. Run with ./dev bench.
"""

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import BINARY, Server, png  # noqa: E402

REVISIONS_PER_MAP = 3
BOUNDS = {"crs": "EPSG:4326", "bounds": {"west": -120.0, "south": 35.0, "east": -119.9, "north": 35.1}}


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed(samples: list[float], call) -> None:
    started = time.perf_counter()
    result = await call()
    samples.append((time.perf_counter() - started) * 1000)
    if getattr(result, "is_error", False):
        raise AssertionError(result)


def run_binary(server: Server, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HOME": str(server.base), **server.env}
    return subprocess.run([BINARY, *args], env=env, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)


async def template_revision(base: Path) -> dict:
    """One real revision record: georeference a small scan and export the registry."""
    server = Server(base / "template")
    png(server.map_root / "scan.png", 64, 48)
    async with server.connect() as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "scan.png"})).structured_content["map_id"]
        result = await client.call_tool("geomap_georeference", {"map_id": map_id, **BOUNDS})
        assert result.is_error is False, result
    export = json.loads(run_binary(server, "registry", "export").stdout)
    return export["maps"][map_id]["revisions"][0]


def write_document(path: Path, maps: int, root: Path, revision: dict) -> None:
    """A registry document with `maps` synthetic maps (their files do not exist) of three revisions each."""
    with open(path, "w") as out:
        out.write('{"schema_version": 2, "maps": {')
        for n in range(maps):
            map_id = f"map_{secrets.token_hex(10)}"
            revisions = [{**revision, "revision_id": f"rev_{secrets.token_hex(10)}"} for _ in range(REVISIONS_PER_MAP)]
            record = {
                "map_id": map_id,
                "root": str(root),
                "relative_path": f"archive/sheet_{n:06}.tif",
                "media_type": "image/tiff",
                "width": 10_000,
                "height": 8_000,
                "bytes": 80_000_000 + n,
                "sha256": secrets.token_hex(32),
                "modified_ns": 1_700_000_000_000_000_000 + n,
                "registered_at": "2026-01-01T00:00:00Z",
                "revisions": revisions,
            }
            out.write(("\n" if n == 0 else ",\n") + json.dumps(map_id) + ": " + json.dumps(record))
        out.write("\n}}\n")


class Archive:
    """One data root of a given size, with the real files the measurements use."""

    def __init__(self, base: Path, maps: int):
        self.maps = maps
        self.server = Server(base / f"archive_{maps}")
        self.fresh = 0
        self.first_page = 0
        png(self.server.map_root / "real.png", 640, 480, noise=True)
        png(self.server.map_root / "small.png", 32, 32)
        self.samples: dict[str, list[float]] = {}

    def add(self, name: str) -> list[float]:
        return self.samples.setdefault(name, [])

    def new_file(self) -> str:
        self.fresh += 1
        name = f"new/{self.fresh:05}.png"
        png(self.server.map_root / name, 8, 8, color=(self.fresh % 256, self.fresh // 256 % 256, 7))
        return name


async def measure(archive: Archive, calls: int, starts: int) -> None:
    server = archive.server
    for _ in range(starts):
        started = time.perf_counter()
        async with server.connect() as client:
            await client.list_tools()
            archive.add("start to first tools/list").append((time.perf_counter() - started) * 1000)
    async with server.connect() as client:
        real = (await client.call_tool("geomap_register_map", {"path": "real.png"})).structured_content["map_id"]
        small = (await client.call_tool("geomap_register_map", {"path": "small.png"})).structured_content["map_id"]
        new_files = [archive.new_file() for _ in range(calls)]
        # One untimed call of each: the client compiles each tool's output schema on
        # first use (~30 ms) and the server loads GDAL's drivers lazily (~25 ms).
        await client.call_tool("geomap_describe_map", {"map_id": real})
        await client.call_tool("geomap_georeference", {"map_id": small, **BOUNDS})
        await client.call_tool("geomap_capabilities", {})
        for name in new_files:
            await timed(archive.add("register a new file"), lambda: client.call_tool("geomap_register_map", {"path": name}))
        for _ in range(calls):
            await timed(archive.add("register an unchanged file"), lambda: client.call_tool("geomap_register_map", {"path": "real.png"}))
        for _ in range(calls):
            await timed(archive.add("describe"), lambda: client.call_tool("geomap_describe_map", {"map_id": real}))
        for _ in range(max(calls // 4, 1)):
            await timed(archive.add("georeference (small scan)"), lambda: client.call_tool("geomap_georeference", {"map_id": small, **BOUNDS}))
        for _ in range(calls):
            await timed(archive.add("resources/list first page"), lambda: client.list_resources(cache_mode="bypass"))
        archive.first_page = len((await client.list_resources(cache_mode="bypass")).resources)
        for _ in range(calls):
            await timed(archive.add("capabilities"), lambda: client.call_tool("geomap_capabilities", {}))


async def main(sizes: list[int], rounds: int, calls: int, starts: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        revision = await template_revision(base)
        archives = []
        for maps in sizes:
            archive = Archive(base, maps)
            if maps:
                document = base / f"archive_{maps}.json"
                started = time.perf_counter()
                write_document(document, maps, archive.server.map_root.resolve(), revision)
                written = time.perf_counter() - started
                started = time.perf_counter()
                run_binary(archive.server, "registry", "import", str(document))
                imported = time.perf_counter() - started
                database = archive.server.database.stat().st_size / 2**20
                print(f"{maps:>7} maps: document {document.stat().st_size / 2**20:.0f} MiB written in {written:.1f} s, imported in {imported:.1f} s, registry.sqlite {database:.0f} MiB")
                document.unlink()
            archives.append(archive)
        for archive in archives:  # the full integrity check is check's, never start-up's
            started = time.perf_counter()
            run_binary(archive.server, "check")
            print(f"{archive.maps:>7} maps: `stratigraphic-amenity check` (full integrity check) {time.perf_counter() - started:.2f} s")
        for _ in range(rounds):
            for archive in archives:
                await measure(archive, calls, starts)
        print(f"\n{rounds} rounds; per round {calls} calls per measure ({max(calls // 4, 1)} georeferences), {starts} starts\n")
        print(f"{'measure':<30} {'maps':>7} {'p50 ms':>8} {'p99 ms':>8} {'p50 / empty':>12}")
        for name in archives[0].samples:
            empty = statistics.median(archives[0].samples[name])
            for archive in archives:
                samples = archive.samples[name]
                median = statistics.median(samples)
                print(f"{name:<30} {archive.maps:>7} {median:>8.3f} {percentile(samples, 0.99):>8.3f} {median / empty:>12.2f}")
        print("\nresources/list first page entries: " + ", ".join(f"{archive.first_page} at {archive.maps} maps" for archive in archives))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--starts", type=int, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.sizes, options.rounds, options.calls, options.starts))

"""Many agents on one HTTP server, bounded in count and time, on 127.0.0.1 only: 50 clients for
GEOMAP_TEST_LOAD_SECONDS (default 60) mixing capabilities, describe, lookup, query_knowledge and
georeference on small scans, then SIGKILL under load and a restart. Runs once, in the stdio pass of
./dev test (it starts its own HTTP server either way)."""

import asyncio
import os
import random
import signal
import statistics
import time

import pytest
from conftest import TRANSPORT, child_servers, png
from test_http import client_at
from test_providers import compile_cache, provider_site  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(TRANSPORT == "http", reason="runs once, in the stdio pass (it serves HTTP itself)")

CLIENTS = 50
SECONDS = float(os.environ.get("GEOMAP_TEST_LOAD_SECONDS", "60"))
BOUNDS = {"west": 128.0, "south": 30.0, "east": 146.0, "north": 46.0}


def rss_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def agent(url: str, token: str, map_ids: list[str], until: float, calls: list, writes: dict, seed: int) -> None:
    """One client calling a mix of tools until `until`; every call's tool, seconds and outcome go to `calls`."""
    chooser = random.Random(seed)
    async with client_at(url, token) as client:
        await client.list_tools()
        while time.monotonic() < until:
            map_id = chooser.choice(map_ids)
            tool, arguments = chooser.choice(
                [
                    ("geomap_capabilities", {}),
                    ("geomap_describe_map", {"map_id": map_id}),
                    ("geomap_lookup", {"term": chooser.choice(["Sandstone", "Lower Cretaceous", "granite"])}),
                    ("geomap_query_knowledge", {"map_id": map_id}),
                    ("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": BOUNDS}),
                ]
            )
            started = time.monotonic()
            result = await client.call_tool(tool, arguments)
            calls.append((tool, time.monotonic() - started, result.is_error, result.structured_content))
            if not result.is_error and tool == "geomap_georeference":
                writes["revisions"].add(result.structured_content["revision_id"])
                writes["folders"].add((map_id, result.structured_content["revision_id"]))
            if not result.is_error and tool == "geomap_query_knowledge":
                writes["bundles"].add(result.structured_content["bundle_id"])


async def prepared_maps(url: str, token: str, count: int) -> list[str]:
    async with client_at(url, token) as client:
        map_ids = []
        for index in range(count):
            map_id = (await client.call_tool("geomap_register_map", {"path": f"scan{index}.png"})).structured_content["map_id"]
            placed = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": BOUNDS})
            assert placed.is_error is False, placed
            map_ids.append(map_id)
        return map_ids


def recorded(server) -> tuple[set, set]:
    import sqlite3

    connection = sqlite3.connect(f"file:{server.database}?mode=ro", uri=True)
    try:
        revisions = {row[0] for row in connection.execute("SELECT revision_id FROM revisions")}
        bundles = {row[0] for row in connection.execute("SELECT bundle_id FROM bundles")}
        return revisions, bundles
    finally:
        connection.close()


def load_site(tmp_path, compile_cache):
    """An HTTP server with the providers and four small scans; the list of calls and the writes acknowledged to fill."""
    server = provider_site(tmp_path, compile_cache)
    server.transport = "http"
    for index in range(4):
        png(server.map_root / f"scan{index}.png", 240, 180)
    return server, [], {"revisions": set(), "bundles": set(), "folders": set()}


def test_fifty_agents_for_a_minute_lose_nothing_and_memory_stays_flat(tmp_path, compile_cache, capsys):  # noqa: F811
    server, calls, writes = load_site(tmp_path, compile_cache)
    samples: list[tuple[float, float]] = []
    with server.http_process() as url:
        [pid] = child_servers()

        async def load():
            map_ids = await prepared_maps(url, server.token, 4)
            started = time.monotonic()
            until = started + SECONDS

            async def sample():
                while time.monotonic() < until:
                    samples.append((time.monotonic() - started, rss_mib(pid)))
                    await asyncio.sleep(0.5)

            await asyncio.gather(sample(), *(agent(url, server.token, map_ids, until, calls, writes, seed) for seed in range(CLIENTS)))

        asyncio.run(load())
        revisions, bundles = recorded(server)
    failed = [(tool, content) for tool, _, error, content in calls if error]
    assert failed == [], failed[:5]
    assert writes["revisions"] <= revisions and writes["bundles"] <= bundles, "every acknowledged revision and bundle is in the registry"
    assert all((server.data_root / "artifacts" / map_id / revision_id).is_dir() for map_id, revision_id in writes["folders"]), "and its files"
    # The baseline is taken after warm-up (10-20 s): by then every tool has run and the providers hold
    # their warm instances, which are kept on purpose and bounded; growth after that is the leak this catches.
    first = statistics.median(rss for at, rss in samples if 10 <= at <= 20)
    last = statistics.median(rss for at, rss in samples if at >= SECONDS - 10)
    by_tool: dict[str, list[float]] = {}
    for tool, seconds, _, _ in calls:
        by_tool.setdefault(tool, []).append(seconds * 1000)
    report = [f"load: {CLIENTS} clients, {SECONDS:.0f} s, {len(calls)} calls ({len(calls) / SECONDS:.0f}/s), 0 failed; RSS 10-20 s {first:.0f} MiB, last 10 s {last:.0f} MiB"]
    for tool, millis in sorted(by_tool.items()):
        millis.sort()
        report.append(f"  {tool}: {len(millis)} calls, p50 {millis[len(millis) // 2]:.0f} ms, p99 {millis[min(len(millis) - 1, int(len(millis) * 0.99))]:.0f} ms")
    with capsys.disabled():
        print("\n" + "\n".join(report))
    assert len(by_tool) == 5 and all(len(millis) >= 10 for millis in by_tool.values()), report
    assert last <= first * 1.2 + 20, f"resident memory grew under steady load: {report[0]}"


def test_sigkill_under_load_keeps_every_acknowledged_write_and_the_restart_sweeps(tmp_path, compile_cache):  # noqa: F811
    server, calls, writes = load_site(tmp_path, compile_cache)
    with server.http_process() as url:
        [pid] = child_servers()

        async def load_then_kill():
            map_ids = await prepared_maps(url, server.token, 4)
            until = time.monotonic() + 60
            agents = [asyncio.create_task(agent(url, server.token, map_ids, until, calls, writes, seed)) for seed in range(20)]
            while len(writes["revisions"]) < 20:
                await asyncio.sleep(0.05)
            os.kill(pid, signal.SIGKILL)
            await asyncio.gather(*agents, return_exceptions=True)  # their connections die with the server

        asyncio.run(load_then_kill())
    acknowledged = (set(writes["revisions"]), set(writes["bundles"]))
    with server.http_process() as url:

        async def check():
            async with client_at(url, server.token) as client:
                return await client.call_tool("geomap_capabilities", {})

        assert asyncio.run(check()).is_error is False
        revisions, bundles = recorded(server)
    assert acknowledged[0] <= revisions and acknowledged[1] <= bundles, "every acknowledged write survived the kill"
    folders = {path.name for map_dir in (server.data_root / "artifacts").iterdir() for path in map_dir.iterdir() if path.name.startswith("rev_")}
    assert folders <= revisions, f"unrecorded revision folders were left: {sorted(folders - revisions)}"

"""Replicas behind nginx, and the registry on PostgreSQL against SQLite (a benchmark, not a test). Run
with ./dev bench (which starts the PostgreSQL server and needs Debian's nginx).

1. Throughput: calls per second for `geomap_capabilities` and `geomap_lookup` at 50 clients through
   nginx in front of 1, 2 and 3 replicas (README's configuration: one PostgreSQL registry, one artifact
   root, GEOMAP_REPLICA_ID r1–r3), in alternating rounds of one run, with each replica's CPU (seconds
   of CPU per second, from /proc). The load comes from host/server/examples/bench_mcp_clients.
   On this 2-core machine linear scaling is not expected; the goal is no throughput lost by adding
   a replica.
2. Registration: p50 and p99 of `geomap_register_map` (a new small scan each time) over stdio with the
   reference client, on SQLite and on PostgreSQL, with 0 and 20,000 maps already registered (made
   with `registry import`), interleaved. Goal: PostgreSQL's p50 within 3x SQLite's, flat in the
   number of maps.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import BINARY, POSTGRES_ADMIN_URL, Server, png, psql, run_binary  # noqa: E402
from test_http import client_at  # noqa: E402
from test_providers import provider_site  # noqa: E402
from test_registry import synthetic_maps  # noqa: E402
from test_replicas import NGINX, Replica, free_port, nginx_config  # noqa: E402

GENERATOR = Path(BINARY).with_name("examples") / "bench_mcp_clients"
TOOLS = {"geomap_capabilities": {}, "geomap_lookup": {"term": "Lower Cretaceous"}}
CLIENTS = 50


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def new_database() -> str:
    name = "bench_" + os.urandom(6).hex()
    psql(POSTGRES_ADMIN_URL, f"CREATE DATABASE {name}")
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}?sslmode=disable"


class Cluster:
    """`count` replicas and nginx in front of them."""

    def __init__(self, base: Path, env: dict, count: int):
        self.replicas = [Replica(f"r{index}", base, env) for index in range(1, count + 1)]
        self.prefix = base / f"nginx-{count}"
        self.prefix.mkdir()
        self.port = free_port()
        (self.prefix / "nginx.conf").write_text(nginx_config(self.replicas, self.port, self.prefix))
        self.nginx: subprocess.Popen | None = None

    def __enter__(self) -> str:
        for replica in self.replicas:
            replica.start()
        self.nginx = subprocess.Popen([NGINX, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf"), "-g", "daemon off;"])
        time.sleep(0.5)
        return f"http://127.0.0.1:{self.port}/mcp"

    def __exit__(self, *_) -> None:
        self.nginx.terminate()
        self.nginx.wait()
        for replica in self.replicas:
            replica.stop()


def load(url: str, tool: str, seconds: float) -> dict:
    command = [str(GENERATOR), "--http", url, "--tool", tool, "--arguments", json.dumps(TOOLS[tool]), "--clients", str(CLIENTS), "--seconds", str(seconds)]
    report = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    if report["client_errors"] or report["failed"]:
        sys.exit(f"{tool}: {report['failed']} failed calls, client errors {report['client_errors'][:3]}")
    return report


async def warm(url: str) -> None:
    """Every replica compiles its providers before it is measured: a few sessions per replica."""
    for _ in range(12):
        async with client_at(url, "unused") as client:
            for tool, arguments in TOOLS.items():
                result = await client.call_tool(tool, arguments)
                assert result.is_error is False, result


def throughput(base: Path, rounds: int, seconds: float) -> None:
    site = provider_site(base / "site", None)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(base),
        **{key: value for key, value in site.env.items() if key != "GEOMAP_DATA_ROOT"},
        "GEOMAP_REGISTRY_URL": new_database(),
        "GEOMAP_ARTIFACT_ROOT": str(base / "shared"),
    }
    results: dict[tuple[str, int], list[tuple[float, list[float]]]] = {}
    for round_ in range(rounds):
        for count in [(1, 2, 3), (2, 3, 1), (3, 1, 2)][round_ % 3]:
            cluster_base = base / f"round{round_}-{count}"
            cluster_base.mkdir()
            cluster = Cluster(cluster_base, env, count)
            with cluster as url:
                asyncio.run(warm(url))
                for tool in TOOLS:
                    before = [cpu_seconds(replica.process.pid) for replica in cluster.replicas]
                    started = time.monotonic()
                    report = load(url, tool, seconds)
                    elapsed = time.monotonic() - started
                    after = [cpu_seconds(replica.process.pid) for replica in cluster.replicas]
                    results.setdefault((tool, count), []).append((report["calls_per_second"], [(b - a) / elapsed for a, b in zip(before, after)]))
    print(f"throughput through nginx, {CLIENTS} clients, {rounds} alternating rounds of {seconds:.0f} s; medians")
    print(f"{'tool':<20} {'replicas':>8} {'calls/s':>8} {'vs 1':>6}  CPU per replica (s/s)")
    for tool in TOOLS:
        one = statistics.median(rate for rate, _ in results[(tool, 1)])
        for count in (1, 2, 3):
            rates = [rate for rate, _ in results[(tool, count)]]
            cpus = [statistics.median(cpu[index] for _, cpu in results[(tool, count)]) for index in range(count)]
            print(f"{tool:<20} {count:>8} {statistics.median(rates):>8.0f} {statistics.median(rates) / one:>6.2f}  {' '.join(f'{c:.2f}' for c in cpus)}")


async def register_times(server: Server, first: int, count: int) -> list[float]:
    times = []
    async with server.connect() as client:
        for index in range(first, first + count):
            started = time.perf_counter()
            result = await client.call_tool("geomap_register_map", {"path": f"new{index}.png"})
            times.append((time.perf_counter() - started) * 1000)
            assert result.is_error is False, result
    return times


def registration(base: Path, rounds: int, per_round: int) -> None:
    servers = {}
    for size in (0, 20_000):
        for backend in ("sqlite", "postgres"):
            env = {"GEOMAP_REGISTRY_URL": new_database()} if backend == "postgres" else {}
            server = Server(base / f"{backend}-{size}", env)
            if size:
                document = base / f"maps-{size}.json"
                if not document.exists():
                    document.write_text(json.dumps({"schema_version": 3, "maps": synthetic_maps(size, base / "elsewhere")}))
                imported = run_binary(server, "registry", "import", str(document), timeout=600)
                assert imported.returncode == 0, imported.stderr
            for index in range(rounds * per_round + 1):
                png(server.map_root / f"new{index}.png", 64, 48, color=(index % 256, 40, 90))
            servers[(backend, size)] = server
    times: dict[tuple[str, int], list[float]] = {key: [] for key in servers}
    for round_ in range(rounds):
        for key in list(servers)[round_ % 4 :] + list(servers)[: round_ % 4]:
            times[key] += asyncio.run(register_times(servers[key], 1 + round_ * per_round, per_round))[1:]  # the session's first call warms it
    print(f"\nregistration over stdio, {rounds} interleaved rounds of {per_round} new scans")
    print(f"{'backend':<10} {'maps':>7} {'p50 ms':>8} {'p99 ms':>8}")
    p50 = {}
    for (backend, size), values in times.items():
        values.sort()
        p50[(backend, size)] = statistics.median(values)
        print(f"{backend:<10} {size:>7} {p50[(backend, size)]:>8.2f} {values[int(0.99 * (len(values) - 1))]:>8.2f}")
    for size in (0, 20_000):
        print(f"PostgreSQL / SQLite p50 at {size} maps: {p50[('postgres', size)] / p50[('sqlite', size)]:.2f}")
    print(f"PostgreSQL p50, 20,000 / 0 maps: {p50[('postgres', 20_000)] / p50[('postgres', 0)]:.2f}")
    print("goals: PostgreSQL p50 within 3x SQLite's, and flat (about 1) in the number of maps")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--registrations", type=int, default=60)
    options = parser.parse_args()
    if POSTGRES_ADMIN_URL is None or NGINX is None:
        sys.exit("bench_replicas needs GEOMAP_TEST_POSTGRES_URL (./dev bench starts a server) and nginx")
    base = Path(tempfile.mkdtemp(prefix="bench-replicas-"))
    print(f"binary: {BINARY}; PostgreSQL: {POSTGRES_ADMIN_URL}; {os.cpu_count()} cores")
    throughput(base, options.rounds, options.seconds)
    registration(base, options.rounds, options.registrations)


if __name__ == "__main__":
    main()

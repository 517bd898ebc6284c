"""Throughput over streamable HTTP on loopback (a benchmark, not a test). Run with ./dev bench.

Calls per second for `geomap_capabilities` and `geomap_lookup` at 1, 8 and 50 concurrent clients,
each client calling back to back, against three targets in alternating rounds of one run:
- this build over HTTP (`serve --http`, one session per client, with a bearer token);
- this build over stdio (one server process per client, as MCP hosts run it);
- a Python peer serving the same two tools with the official Python SDK's streamable HTTP server
  (tests/bench/peer_mcp_http.py), answering with this server's own results (goal: this build at
  least 5x its throughput at 50 clients).

The load comes from host/server/examples/bench_mcp_clients (blocking Rust clients, one thread each), so the
generator takes little of the two cores the server and the peer need; all share one machine.
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import BINARY  # noqa: E402
from test_http import client_at  # noqa: E402
from test_providers import provider_site  # noqa: E402

GENERATOR = Path(BINARY).with_name("examples") / "bench_mcp_clients"
PEER = Path(__file__).with_name("peer_mcp_http.py")
TOOLS = {"geomap_capabilities": {}, "geomap_lookup": {"term": "Lower Cretaceous"}}
TARGETS = ["http", "stdio", "python peer"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the Python peer exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("the Python peer did not listen within 30 s")


async def results_of(url: str, token: str) -> dict:
    """The server's answer to each benchmark call (through the reference client), for the peer to give."""
    answers = {}
    async with client_at(url, token) as client:
        for tool, arguments in TOOLS.items():
            result = await client.call_tool(tool, arguments)
            assert result.is_error is False, result
            answers[tool] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return answers


async def peer_agrees(url: str, answers: dict) -> None:
    async with client_at(url, "unused-by-the-peer-0000") as client:
        for tool, arguments in TOOLS.items():
            result = await client.call_tool(tool, arguments)
            assert result.model_dump(mode="json", by_alias=True, exclude_none=True) == answers[tool], f"the peer's {tool} differs"


def load(target: list[str], tool: str, clients: int, seconds: float, env: dict) -> dict:
    command = [str(GENERATOR), *target, "--tool", tool, "--arguments", json.dumps(TOOLS[tool]), "--clients", str(clients), "--seconds", str(seconds)]
    finished = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    report = json.loads(finished.stdout)
    if report["client_errors"] or report["failed"]:
        sys.exit(f"{' '.join(target[:1])} {tool} x{clients}: {report['failed']} failed calls, client errors {report['client_errors'][:3]}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    options = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-http-"))
    server = provider_site(base, None)
    env = {"PATH": os.environ["PATH"], "HOME": str(base), **server.env}
    port = free_port()
    with server.http_process() as url:
        answers = asyncio.run(results_of(url, server.token))  # also fills the providers' compile cache
        (base / "results.json").write_text(json.dumps(answers))
        peer = subprocess.Popen([sys.executable, str(PEER), str(base / "results.json"), str(port)], stderr=subprocess.DEVNULL)
        try:
            wait_for_port(port, peer)
            peer_url = f"http://127.0.0.1:{port}/mcp"
            asyncio.run(peer_agrees(peer_url, answers))
            targets = {
                "http": ["--http", url, "--token", server.token],
                "stdio": ["--stdio", BINARY],
                "python peer": ["--http", peer_url],
            }
            print(f"binary: {BINARY}; {options.rounds} alternating rounds of {options.seconds:.0f} s per cell (after 1 s of warm-up); medians")
            print(f"{'tool':<20} {'clients':>7} {'http/s':>8} {'stdio/s':>8} {'peer/s':>8} {'http p50':>9} {'http p99':>9} {'http/stdio':>10} {'http/peer':>9}")
            for tool in TOOLS:
                for clients in (1, 8, 50):
                    rounds: dict[str, list[dict]] = {name: [] for name in TARGETS}
                    for round_ in range(options.rounds):
                        for name in TARGETS[round_ % 3 :] + TARGETS[: round_ % 3]:
                            rounds[name].append(load(targets[name], tool, clients, options.seconds, env))
                    rate = {name: statistics.median(report["calls_per_second"] for report in reports) for name, reports in rounds.items()}
                    p50 = statistics.median(report["p50_ms"] for report in rounds["http"])
                    p99 = statistics.median(report["p99_ms"] for report in rounds["http"])
                    print(
                        f"{tool:<20} {clients:>7} {rate['http']:>8.0f} {rate['stdio']:>8.0f} {rate['python peer']:>8.0f} {p50:>7.2f}ms {p99:>7.2f}ms"
                        f" {rate['http'] / rate['stdio']:>10.2f} {rate['http'] / rate['python peer']:>9.2f}",
                        flush=True,
                    )
        finally:
            peer.terminate()
            peer.wait()
    errors = [line for line in server.log() if " ERROR " in line]
    print(f"server log: {len(server.tool_call_lines())} tool_call lines, {len(errors)} ERROR lines")
    print("goal: http/peer at least 5 at 50 clients")


if __name__ == "__main__":
    main()

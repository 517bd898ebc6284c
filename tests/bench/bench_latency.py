"""Round-trip latency over stdio with the reference Python client (a benchmark, not a test).

Prints p50/p99 of 1,000 geomap_capabilities and 1,000 geomap_describe_map calls through the
official Python client, in both protocol eras, with the p50 of 1,000 pings (2025-11-25 only:
the 2026-07-28 era has no ping) and each tool's p50 as a ratio to it; then the same three
through `bench_mcp_clients`, the blocking Rust client, whose own cost is small enough to show
the server's (the goal: each tool within 1.5x of ping), beside tools/list, whose per-byte cost
gives each tool a floor that also pays for its answer's size, and a tools/call of a tool that does
not exist, answered from memory with no I/O and no thread hand-off: what any tools/call costs
before a tool does anything; and the time from spawning the server to the first tools/list answer
(median of several starts). Run with ./dev bench.
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
from conftest import Server, png  # noqa: E402


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed_calls(client, tool: str, arguments: dict, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        result = await client.call_tool(tool, arguments)
        samples.append((time.perf_counter() - started) * 1000)
        assert result.is_error is False, result
    return samples


async def timed_pings(client, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await client.send_ping()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def start_to_first_list(server: Server, era: str, starts: int) -> list[float]:
    samples = []
    for _ in range(starts):
        started = time.perf_counter()
        async with server.connect(era) as client:
            await client.list_tools()
            samples.append((time.perf_counter() - started) * 1000)
    return samples


async def main(calls: int, starts: int) -> None:
    with tempfile.TemporaryDirectory() as base:
        server = Server(Path(base))
        png(server.map_root / "scan.png", 2000, 1500, noise=True)
        print(f"binary: {os.environ.get('GEOMAP_TEST_BINARY', 'target/release/stratigraphic-amenity')}")
        print(f"{'era':<11} {'measure':<34} {'p50 ms':>8} {'p99 ms':>8}")
        for era in ("legacy", "2026-07-28"):
            async with server.connect(era) as client:
                registered = await client.call_tool("geomap_register_map", {"path": "scan.png"})
                map_id = registered.structured_content["map_id"]
                await timed_calls(client, "geomap_capabilities", {}, 20)  # warm-up
                if era == "legacy":
                    await timed_pings(client, 20)
                    pings = await timed_pings(client, calls)
                capabilities = await timed_calls(client, "geomap_capabilities", {}, calls)
                describe = await timed_calls(client, "geomap_describe_map", {"map_id": map_id}, calls)
            startup = await start_to_first_list(server, era, starts)
            for name, samples in [
                *([(f"{calls} x ping", pings)] if era == "legacy" else []),
                (f"{calls} x geomap_capabilities", capabilities),
                (f"{calls} x geomap_describe_map", describe),
                (f"start to first tools/list ({starts}x)", startup),
            ]:
                print(f"{era:<11} {name:<34} {statistics.median(samples):>8.3f} {percentile(samples, 0.99):>8.3f}")
            floor = statistics.median(pings)
            for name, samples in [("geomap_capabilities", capabilities), ("geomap_describe_map", describe)]:
                print(f"{era:<11} {name + ' p50 / ping p50':<34} {statistics.median(samples) / floor:>8.2f}")
            if era != "legacy":
                print(f"{'':<11} (this era has no ping: its ratios divide by the 2025-11-25 ping above)")
        rust_driver(server, map_id)


NO_SUCH_TOOL = "geomap_no_such_tool"


def rust_driver(server: Server, map_id: str) -> None:
    """p50/p99 of ping, tools/list and the two tools through bench_mcp_clients (2025-06-18 over stdio),
    and the ratios: to ping, and to a floor that also pays for the answer's size (ping plus the
    per-byte cost of tools/list, a 130 kB answer the server keeps ready)."""
    binary = os.environ.get("GEOMAP_TEST_BINARY", "target/release/stratigraphic-amenity")
    generator = Path(binary).with_name("examples") / "bench_mcp_clients"
    if not generator.exists():
        print(f"(no {generator}: build it with cargo build --release --example bench_mcp_clients)")
        return
    env = {**os.environ, **server.env}
    measured = {}
    calls = [("ping", {}), ("tools/list", {}), (NO_SUCH_TOOL, {}), ("geomap_capabilities", {}), ("geomap_describe_map", {"map_id": map_id})]
    for tool, arguments in calls:
        command = [str(generator), "--stdio", binary, "--tool", tool, "--arguments", json.dumps(arguments), "--seconds", "5", "--warmup", "1"]
        measured[tool] = json.loads(subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout)
        expected_failures = measured[tool]["calls"] if tool == NO_SUCH_TOOL else 0  # an unknown tool is a protocol error, every time
        assert measured[tool]["failed"] == expected_failures, measured[tool]
    for tool, report in measured.items():
        label = f"{report['calls']} x {tool} ({report['answer_bytes'] / 1000:.1f} kB)"
        print(f"{'rust':<11} {label:<34} {report['p50_ms']:>8.3f} {report['p99_ms']:>8.3f}")
    ping, listing = measured["ping"], measured["tools/list"]
    per_byte = (listing["p50_ms"] - ping["p50_ms"]) / (listing["answer_bytes"] - ping["answer_bytes"])
    for tool in ("geomap_capabilities", "geomap_describe_map"):
        report = measured[tool]
        floor = ping["p50_ms"] + per_byte * (report["answer_bytes"] - ping["answer_bytes"])
        print(f"{'rust':<11} {tool + ' p50 / ping p50':<34} {report['p50_ms'] / ping['p50_ms']:>8.2f}")
        print(f"{'rust':<11} {tool + ' p50 / size floor':<34} {report['p50_ms'] / floor:>8.2f}")
        print(f"{'rust':<11} {tool + ' p50 / unknown tool':<34} {report['p50_ms'] / measured[NO_SUCH_TOOL]['p50_ms']:>8.2f}")
    print(f"{'rust':<11} {'unknown tool p50 / ping p50':<34} {measured[NO_SUCH_TOOL]['p50_ms'] / ping['p50_ms']:>8.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--starts", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.starts))

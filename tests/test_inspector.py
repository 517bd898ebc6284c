"""The MCP Inspector CLI validates structured content against outputSchema, even
on error results: both outcomes must pass it without schema complaints."""

import json
import os
import subprocess

import pytest

from conftest import BINARY, png

INSPECTOR = os.environ.get("GEOMAP_TEST_INSPECTOR")


def inspect(server, *arguments):
    env_flags = [flag for key, value in server.env.items() for flag in ("-e", f"{key}={value}")]
    command = [INSPECTOR, "--cli", BINARY, *env_flags, "--method", "tools/call", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=server.base)


pytestmark = pytest.mark.skipif(not INSPECTOR, reason="GEOMAP_TEST_INSPECTOR is not set (./dev test sets it)")


@pytest.mark.parametrize("tool, arguments", [("geomap_capabilities", []), ("geomap_register_map", ["--tool-arg", "path=a.png"])])
def test_success_results_pass_the_inspector(server, tool, arguments):
    png(server.map_root / "a.png", 5, 5)
    run = inspect(server, "--tool-name", tool, *arguments)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["isError"] is False
    assert "schema" not in run.stderr.lower().replace("geomap-error", ""), run.stderr
    assert "unknown format" not in run.stderr


def test_error_results_pass_the_inspector(server):
    run = inspect(server, "--tool-name", "geomap_register_map", "--tool-arg", "path=/etc/passwd")
    result = json.loads(run.stdout)
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "path_not_allowed"
    # The Inspector exits 5 for a tool error; an output-schema mismatch would be a protocol error instead.
    assert run.returncode == 5, run.stdout + run.stderr
    assert '"tool_is_error"' in run.stderr
    assert "Invalid" not in run.stderr and "does not match" not in run.stderr and "unknown format" not in run.stderr


def test_a_georeference_result_passes_the_inspector(server):
    png(server.map_root / "a.png", 40, 30)
    registered = json.loads(inspect(server, "--tool-name", "geomap_register_map", "--tool-arg", "path=a.png").stdout)
    arguments = {
        "map_id": registered["structuredContent"]["map_id"],
        "crs": "EPSG:32633",
        "control_points": [{"col": c, "row": r, "x": 500000 + 2 * c + 0.001 * c * r, "y": 4000000 - 2 * r} for c, r in [(0, 0), (40, 0), (0, 30), (40, 30), (20, 15), (10, 25), (30, 5)]],
        "transform": "polynomial2",
    }
    run = inspect(server, "--tool-name", "geomap_georeference", "--tool-args-json", json.dumps(arguments))
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["isError"] is False and result["structuredContent"]["transform"] == "polynomial2"
    assert "unknown format" not in run.stderr and "Invalid" not in run.stderr

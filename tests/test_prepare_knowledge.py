"""geomap_prepare_knowledge through the reference client: consent, progress, failures, the operator's toggle."""

import hashlib
import os
import subprocess
import time

import anyio
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from conftest import ASSETS_BINARY, SHARED_ASSETS, Server, assert_envelope, png

pytestmark = pytest.mark.anyio

KNOWLEDGE = ["ics-chart", "cgi-simple-lithology", "usgs-earthquakes-m45", "k2-rock-knowledge"]
FILES = {"ics-chart": "chart.ttl", "cgi-simple-lithology": "simplelithology.ttl"}


def knowledge_site(tmp_path, mirror, env: dict | None = None) -> tuple[Server, dict]:
    """A server whose config points two knowledge assets at generated files on the loopback mirror."""
    data = {asset: os.urandom(150_000 + 1000 * n) for n, asset in enumerate(FILES)}
    config = tmp_path / "geomap.toml"
    lines = []
    for asset, name in FILES.items():
        mirror.files[name] = data[asset]
        lines.append(
            f'[assets.{asset}.sources."{name}"]\nurl = "{mirror.url}/{name}"\nsize = {len(data[asset])}\nsha256 = "{hashlib.sha256(data[asset]).hexdigest()}"\n'
        )
    config.write_text("\n".join(lines))
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(config), "GEOMAP_ASSET_TIMEOUT": "2s", **(env or {})})
    return server, data


def answering(action: str, confirm: bool | None = None, asked: list | None = None):
    async def callback(context, params):
        if asked is not None:
            asked.append(params.message)
        content = None if confirm is None else {"confirm": confirm}
        return types.ElicitResult(action=action, content=content)

    return callback


async def test_the_real_knowledge_assets_install_through_the_tool(tmp_path, mirror, era):
    if not SHARED_ASSETS.is_dir():
        pytest.skip(f"SKIPPED LOUDLY: {SHARED_ASSETS} is absent, so the real catalog cannot be installed here")
    for path in SHARED_ASSETS.iterdir():
        mirror.files[path.name] = path.read_bytes()
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url})
    async with server.connect(era) as client:
        result = await client.call_tool("geomap_prepare_knowledge", {})
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    assert result.is_error is False, result
    report = result.structured_content
    assert report["consent"] == "not_asked", "this client declared no elicitation"
    assert [asset["asset"] for asset in report["installed"]] == KNOWLEDGE and report["failed"] == []
    assert report["download_bytes"] == sum(p.stat().st_size for p in SHARED_ASSETS.iterdir() if p.suffix in (".ttl", ".csv") or p.name.startswith("k2_rock_"))
    assert (server.data_root / "assets/usgs-earthquakes-m45/earthquake_1970_4.5mag.csv").read_bytes() == (SHARED_ASSETS / "earthquake_1970_4.5mag.csv").read_bytes()
    states = {asset["id"]: asset["state"] for asset in caps["assets"] if asset["kind"] == "knowledge"}
    assert states == {asset: "installed" for asset in KNOWLEDGE}
    assert all(asset["licence"] and asset["attribution"] for asset in caps["assets"])


async def test_the_user_confirms_through_elicitation(tmp_path, mirror, era):
    server, data = knowledge_site(tmp_path, mirror)
    asked: list[str] = []
    async with server.connect(era, elicitation_callback=answering("accept", True, asked)) as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart", "cgi-simple-lithology"]})
    assert result.is_error is False, result
    report = result.structured_content
    assert report["consent"] == "confirmed"
    assert [asset["asset"] for asset in report["installed"]] == ["ics-chart", "cgi-simple-lithology"]
    assert len(asked) == 1 and "MB" in asked[0] and "CC BY 4.0" in asked[0], asked
    assert (server.data_root / "assets/ics-chart/chart.ttl").read_bytes() == data["ics-chart"]
    log = [line for line in server.log() if "tool=geomap_prepare_knowledge" in line]
    expected = ["input_required", "ok"] if era == "2026-07-28" else ["ok"]
    assert [line.split("outcome=")[1].split()[0] for line in log] == expected, log


@pytest.mark.parametrize("action, confirm", [("decline", None), ("accept", False), ("cancel", None)])
async def test_a_refusal_installs_nothing_and_says_so(tmp_path, mirror, era, action, confirm):
    server, _ = knowledge_site(tmp_path, mirror)
    async with server.connect(era, elicitation_callback=answering(action, confirm)) as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart"]})
    assert result.is_error is False, result
    report = result.structured_content
    assert report["consent"] == "declined" and report["installed"] == [] and "declined" in report["summary"]
    assert not (server.data_root / "assets" / "ics-chart").exists()
    assert mirror.requests == [], "nothing was downloaded"


async def test_progress_counts_bytes_up_to_the_total(tmp_path, mirror, era):
    server, data = knowledge_site(tmp_path, mirror)
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress, total, message):
        updates.append((progress, total))

    async with server.connect(era) as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart", "cgi-simple-lithology"]}, progress_callback=on_progress)
    assert result.is_error is False, result
    total = sum(len(blob) for blob in data.values())
    assert updates and all(update_total == total for _, update_total in updates)
    done = [progress for progress, _ in updates]
    assert done == sorted(set(done)) and done[-1] == total, done


async def test_when_nothing_installs_the_call_fails_with_the_reason(tmp_path, mirror):
    server, _ = knowledge_site(tmp_path, mirror)
    mirror.behaviour["chart.ttl"] = "tamper"
    async with server.connect() as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart"]})
    envelope = assert_envelope(result, "install_failed", server, tool="geomap_prepare_knowledge")
    assert envelope["details"]["reason"] == "checksum_mismatch" and envelope["details"]["asset"] == "ics-chart"
    assert "stratigraphic-amenity-assets ics-chart" in envelope["recovery_hints"][1]
    assert not (server.data_root / "assets" / "ics-chart").exists()


async def test_a_partial_success_lists_each_failure_with_its_code(tmp_path, mirror):
    server, _ = knowledge_site(tmp_path, mirror)
    del mirror.files["simplelithology.ttl"]
    async with server.connect() as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart", "cgi-simple-lithology"]})
    report = result.structured_content
    assert result.is_error is False and [asset["asset"] for asset in report["installed"]] == ["ics-chart"]
    assert [(f["asset"], f["code"], f["reason"]) for f in report["failed"]] == [("cgi-simple-lithology", "install_failed", "http_status")]
    assert "HTTP 404" in report["failed"][0]["message"]


async def test_an_unknown_asset_is_invalid_arguments_naming_the_known_ones(tmp_path, mirror):
    server, _ = knowledge_site(tmp_path, mirror)
    async with server.connect() as client:
        result = await client.call_tool("geomap_prepare_knowledge", {"assets": ["nope"]})
    envelope = assert_envelope(result, "invalid_arguments", server)
    assert envelope["details"]["field"] == "/assets" and "ics-chart" in envelope["details"]["expected"]


async def test_a_running_server_sees_what_the_cli_installed(tmp_path, mirror):
    server, _ = knowledge_site(tmp_path, mirror)
    async with server.connect() as client:
        before = (await client.call_tool("geomap_capabilities", {})).structured_content
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **server.env}
        assert subprocess.run([ASSETS_BINARY, "ics-chart"], env=env, capture_output=True).returncode == 0
        after = (await client.call_tool("geomap_capabilities", {})).structured_content
        again = await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart"]})
    state = lambda caps: {asset["id"]: asset["state"] for asset in caps["assets"]}["ics-chart"]  # noqa: E731
    assert (state(before), state(after)) == ("missing", "installed")
    assert again.structured_content["consent"] == "not_needed" and [a["asset"] for a in again.structured_content["already_present"]] == ["ics-chart"]


async def test_the_operator_can_withhold_the_tool_and_still_install_with_the_cli(tmp_path, mirror, era):
    server, data = knowledge_site(tmp_path, mirror, {"GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION": "false"})
    async with server.connect(era) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
        with pytest.raises(MCPError) as raised:
            await client.call_tool("geomap_prepare_knowledge", {})
    assert "geomap_prepare_knowledge" not in names and caps["preparation"] == {"knowledge": False, "detectors": True}
    error = raised.value.error
    assert error.code == -32602 and "unknown_tool" in error.message
    envelope = error.data
    assert envelope["code"] == "unknown_tool" and envelope["details"]["reason"] == "withheld_by_operator"
    assert "operator withheld" in envelope["message"] and "tools/list" not in envelope["message"]
    assert "stratigraphic-amenity-assets --all" in envelope["recovery_hints"][0]
    assert server.tool_call_line(envelope["trace_id"])["outcome"] == "unknown_tool"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **server.env}
    assert subprocess.run([ASSETS_BINARY, "ics-chart"], env=env, capture_output=True).returncode == 0
    assert (server.data_root / "assets/ics-chart/chart.ttl").read_bytes() == data["ics-chart"]


async def test_a_cancelled_call_stops_cleanly_and_logs_cancelled(tmp_path, mirror, era):
    import anyio

    server, _ = knowledge_site(tmp_path, mirror, {"GEOMAP_ASSET_TIMEOUT": "60s"})
    mirror.behaviour["chart.ttl"] = "stall"
    assets = server.data_root / "assets"
    async with server.connect(era) as client:
        with anyio.move_on_after(1.5) as scope:
            await client.call_tool("geomap_prepare_knowledge", {"assets": ["ics-chart"]})
        assert scope.cancelled_caught, "the download stalls until the client gives up"
        with anyio.fail_after(10):
            while not [line for line in server.log() if "tool=geomap_prepare_knowledge" in line]:
                await anyio.sleep(0.05)
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    line = next(line for line in server.log() if "tool=geomap_prepare_knowledge" in line)
    assert "outcome=cancelled" in line, line
    assert {asset["id"]: asset["state"] for asset in caps["assets"]}["ics-chart"] == "missing"
    assert [p.name for p in assets.iterdir() if p.name.startswith(".partial")] == [], "nothing half-installed"


async def test_open_consent_questions_hold_no_heavy_slot_and_unanswered_ones_install_nothing(tmp_path, mirror):
    """Two slots, two consent questions nobody answers: a georeference still runs at once, and after
    GEOMAP_CONSENT_TIMEOUT both preparations end as unanswered, having downloaded nothing."""
    server, _ = knowledge_site(tmp_path, mirror, {"GEOMAP_MAX_HEAVY_CALLS": "2", "GEOMAP_CONSENT_TIMEOUT": "8s"})
    png(server.map_root / "map.png", 64, 48)
    asked: list[str] = []

    async def never_answers(context, params):
        asked.append(params.message)
        await anyio.sleep(3600)

    reports: list[dict] = []
    async with server.connect("legacy", elicitation_callback=never_answers) as client:

        async def prepare(asset: str):
            result = await client.call_tool("geomap_prepare_knowledge", {"assets": [asset]})
            assert result.is_error is False, result
            reports.append(result.structured_content)

        async with anyio.create_task_group() as group:
            group.start_soon(prepare, "ics-chart")
            group.start_soon(prepare, "cgi-simple-lithology")
            with anyio.fail_after(5):
                while len(asked) < 2:
                    await anyio.sleep(0.02)
            registered = await client.call_tool("geomap_register_map", {"path": "map.png"})
            bounds = {"west": 10, "south": 40, "east": 11, "north": 41}
            started = time.monotonic()
            georeferenced = await client.call_tool("geomap_georeference", {"map_id": registered.structured_content["map_id"], "crs": "EPSG:4326", "bounds": bounds})
            assert georeferenced.is_error is False, georeferenced
            assert reports == [], "both consent questions were still open while the georeference ran"
            assert time.monotonic() - started < 5, "the georeference did not wait for a slot"
    assert [report["consent"] for report in reports] == ["unanswered", "unanswered"], reports
    assert all(report["installed"] == [] and "GEOMAP_CONSENT_TIMEOUT" in report["summary"] for report in reports), reports
    assert mirror.requests == [], "nothing was downloaded"
    assert not (server.data_root / "assets" / "ics-chart").exists()

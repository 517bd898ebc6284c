"""The streamable HTTP deployment (`serve --http`): who may connect, many clients on one server,
heavy-call slots, graceful shutdown, and a clean end of a stdio session that never began.

The rest of the suite runs over HTTP too when GEOMAP_TEST_TRANSPORT=http (./dev test does both).
"""

import asyncio
import json
import signal
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager

import pytest
from conftest import ERAS, Server, png, run_binary
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One raw POST: status, headers (lower-case names) and body, whatever the status."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


@asynccontextmanager
async def client_at(url: str, token: str, era: str = "legacy", **options):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http_client:
        async with Client(streamable_http_client(url, http_client=http_client), mode=era, **options) as client:
            yield client


def test_health_check_answers_without_a_token(tmp_path):
    server = Server(tmp_path, transport="http")
    with server.http_process() as url:
        health = url.removesuffix("/mcp") + "/healthz"
        with urllib.request.urlopen(health, timeout=10) as response:
            assert (response.status, response.read()) == (200, b"ok\n")


def test_requests_without_the_right_token_get_a_bare_401_and_the_token_is_never_logged(tmp_path):
    server = Server(tmp_path, transport="http")
    body = json.dumps(INITIALIZE).encode()
    with server.http_process() as url:
        refusals = {
            "no token": post(url, body, {}),
            "wrong token": post(url, body, {"Authorization": "Bearer not-the-token-0123456789"}),
            "another scheme": post(url, body, {"Authorization": f"Basic {server.token}"}),
            "token in the query string": post(f"{url}?access_token={server.token}", body, {}),
        }
        for case, (status, headers, content) in refusals.items():
            assert status == 401, case
            assert headers.get("www-authenticate") == "Bearer", case
            assert content == b"", case
        status, headers, _ = post(url, body, {"Authorization": f"Bearer {server.token}"})
        assert status == 200 and "mcp-session-id" in headers
        ended = urllib.request.Request(url, method="DELETE", headers={"Authorization": f"Bearer {server.token}", "Mcp-Session-Id": headers["mcp-session-id"]})
        with urllib.request.urlopen(ended, timeout=10) as response:
            assert response.status == 204, "a session ended is no content (the Python SDK warns on 202)"
    log = server.log_path.read_text()
    assert server.token not in log and "event=http_listen" in log and "tokens=true" in log


def test_foreign_host_and_origin_and_oversize_bodies_are_refused(tmp_path):
    server = Server(tmp_path, transport="http")
    body = json.dumps(INITIALIZE).encode()
    auth = {"Authorization": f"Bearer {server.token}"}
    with server.http_process() as url:
        assert post(url, body, {**auth, "Host": "rebound.example"})[0] == 403
        assert post(url, body, {**auth, "Origin": "http://rebound.example"})[0] == 403
        assert post(url, body, {**auth, "Origin": "http://localhost:3000"})[0] == 200, "a loopback origin is allowed"
        assert post(url, b" " * (2 << 20), auth)[0] == 413
        assert post(url.removesuffix("/mcp") + "/other", body, auth)[0] == 404


def test_listening_off_loopback_needs_tokens_and_says_how(tmp_path):
    server = Server(tmp_path)
    refused = run_binary(server, "serve", "--http", "0.0.0.0:0")
    assert refused.returncode == 2, refused
    assert "GEOMAP_HTTP_TOKENS_FILE" in refused.stderr and "0.0.0.0:0" in refused.stderr and "127.0.0.1" in refused.stderr
    empty = tmp_path / "no-tokens"
    empty.write_text("# none yet\n")
    refused = run_binary(server, "serve", "--http", "0.0.0.0:0", env={"GEOMAP_HTTP_TOKENS_FILE": str(empty)})
    assert refused.returncode == 2 and "holds no token" in refused.stderr, refused
    bad = run_binary(server, "serve", "--http", "localhost:80")
    assert bad.returncode == 2 and "GEOMAP_HTTP_LISTEN" in bad.stderr, bad


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_many_clients_share_one_server_and_each_call_logs_its_session(tmp_path, era):
    server = Server(tmp_path, transport="http")
    png(server.map_root / "scan.png", 64, 48)
    with server.http_process() as url:

        async def one_agent() -> None:
            async with client_at(url, server.token, era) as client:
                registered = await client.call_tool("geomap_register_map", {"path": "scan.png"})
                assert registered.is_error is False, registered
                described = await client.call_tool("geomap_describe_map", {"map_id": registered.structured_content["map_id"]})
                assert described.is_error is False, described
                assert (await client.call_tool("geomap_capabilities", {})).is_error is False

        await asyncio.gather(*(one_agent() for _ in range(4)))
    lines = server.tool_call_lines()
    assert len(lines) == 12 and all(line["outcome"] == "ok" for line in lines), lines
    assert all(line["session"] for line in lines), lines
    assert len({line["session"] for line in lines}) >= 4, "each agent is told apart"


@pytest.mark.anyio
async def test_a_heavy_call_waits_for_a_free_slot_and_says_so(tmp_path):
    server = Server(tmp_path, {"GEOMAP_MAX_HEAVY_CALLS": "1", "GEOMAP_FAULT_SLOW_TOOL": "geomap_read_text:2500"}, transport="http")
    png(server.map_root / "scan.png", 64, 48)
    with server.http_process() as url:
        async with client_at(url, server.token) as first, client_at(url, server.token) as second:
            map_id = (await first.call_tool("geomap_register_map", {"path": "scan.png"})).structured_content["map_id"]
            heard: list[str] = []

            async def on_progress(progress, total, message):
                heard.append(message or "")

            started = time.monotonic()
            holding = asyncio.create_task(first.call_tool("geomap_read_text", {"map_id": map_id}))
            await asyncio.sleep(0.8)
            waiting = await second.call_tool("geomap_read_text", {"map_id": map_id}, progress_callback=on_progress)
            elapsed = time.monotonic() - started
            held = await holding
    assert any(message.startswith("waiting for a free slot") and "GEOMAP_MAX_HEAVY_CALLS" in message for message in heard), heard
    assert elapsed >= 4.5, f"the second call ran beside the first ({elapsed:.1f} s)"
    for result in (held, waiting):  # no OCR models here: both fail the same documented way, after their turn
        assert result.is_error and result.structured_content["code"] == "missing_extra", result


def call_then_sigterm(server: Server, url: str) -> tuple[object, float]:
    """Calls geomap_capabilities and sends the server SIGTERM half a second in; returns what the call ended
    with (its result, or the exception when the session ended with the server) and the seconds that took."""
    outcomes = []

    async def run():
        async with client_at(url, server.token) as client:
            await client.list_tools()  # the SDK checks results against the tools' schemas, listing them if it has not
            call = asyncio.create_task(client.call_tool("geomap_capabilities", {}))
            await asyncio.sleep(0.5)
            started = time.monotonic()
            server.http_process_handle.send_signal(signal.SIGTERM)
            try:
                result = await asyncio.wait_for(call, 20)
            except Exception as error:  # the session ends with the server: the client may see the stream close
                result = error
            outcomes.append((result, time.monotonic() - started))

    try:
        asyncio.run(run())
    except Exception:  # closing the client: the stopped server no longer accepts its last requests
        pass
    [outcome] = outcomes
    return outcome


def test_sigterm_lets_a_call_in_flight_finish_then_exits(tmp_path):
    server = Server(tmp_path, {"GEOMAP_FAULT_SLOW_TOOL": "geomap_capabilities:1500"}, transport="http")
    with server.http_process() as url:
        result, _ = call_then_sigterm(server, url)
        assert not isinstance(result, Exception) and result.is_error is False, result
        assert server.http_process_handle.wait(timeout=30) == 0
    log = server.log()
    assert [line["outcome"] for line in server.tool_call_lines()] == ["ok"], log
    assert any("event=server_stop" in line and "signal=SIGTERM" in line for line in log), log
    assert not any(" ERROR " in line for line in log), log


def test_a_call_still_running_when_the_grace_ends_is_cancelled_and_logged(tmp_path):
    server = Server(tmp_path, {"GEOMAP_FAULT_SLOW_TOOL": "geomap_capabilities:60000", "GEOMAP_SHUTDOWN_GRACE": "300ms"}, transport="http")
    with server.http_process() as url:
        result, waited = call_then_sigterm(server, url)
        assert server.http_process_handle.wait(timeout=30) == 0
        assert waited < 15, f"the call was not cancelled at the end of the grace ({waited:.1f} s)"
        if not isinstance(result, Exception):
            assert result.is_error and result.structured_content["details"]["reason"] == "cancelled", result
    lines = server.tool_call_lines()
    assert [line["outcome"] for line in lines] == ["cancelled"], server.log()
    assert any("grace period" in line and "GEOMAP_SHUTDOWN_GRACE" in line for line in server.log())


def modern_call(url: str, token: str, tool: str, arguments: dict, progress_token: str | None = None) -> bytes:
    """A raw 2026-07-28 tools/call POST (no session: the protocol version and capabilities travel in `_meta`)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    if progress_token:
        meta["progressToken"] = progress_token
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": meta}}).encode()
    authority = url.removeprefix("http://").split("/", 1)[0]
    headers = [
        "POST /mcp HTTP/1.1",
        f"Host: {authority}",
        f"Authorization: Bearer {token}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        f"Mcp-Name: {tool}",
        f"Content-Length: {len(body)}",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


def test_a_client_that_disconnects_mid_georeference_cancels_it_in_the_2026_era(tmp_path):
    """At 2026-07-28 a request's own HTTP response is its only channel: closing it is the cancellation."""
    import socket

    server = Server(tmp_path, {"GEOMAP_MAX_HEAVY_CALLS": "1"}, transport="http")
    png(server.map_root / "big.png", 6000, 5000, noise=True)
    png(server.map_root / "scan.png", 300, 200)
    bounds = {"west": -120.0, "south": 35.0, "east": -119.0, "north": 36.0}
    with server.http_process() as url:
        authority = url.removeprefix("http://").split("/", 1)[0]
        host, port = authority.rsplit(":", 1)

        def call(tool: str, arguments: dict, *, until: bytes | None = None) -> bytes:
            """Sends one call and reads its response stream, closing the connection early once `until` arrives."""
            with socket.create_connection((host, int(port)), timeout=60) as connection:
                connection.sendall(modern_call(url, server.token, tool, arguments, progress_token="p1" if until else None))
                received = b""
                while chunk := connection.recv(65536):
                    received += chunk
                    if until and until in received:
                        break
                    if not until and b'"id":7' in received and b"\r\n0\r\n\r\n" in received:
                        break
                return received

        def answer(raw: bytes) -> dict:
            """The call's result, from the `data:` line of its server-sent event stream that answers it."""
            messages = [json.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:") and line[5:].strip().startswith(b"{")]
            [result] = [message["result"] for message in messages if message.get("id") == 7]
            assert not result.get("isError"), result
            return result["structuredContent"]

        big = answer(call("geomap_register_map", {"path": "big.png"}))["map_id"]
        small = answer(call("geomap_register_map", {"path": "scan.png"}))["map_id"]
        call("geomap_georeference", {"map_id": big, "crs": "EPSG:4267", "bounds": bounds}, until=b"writing the Cloud Optimized GeoTIFF")
        closed = time.monotonic()
        deadline = closed + 20
        while not [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"] and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped_after = time.monotonic() - closed
        assert answer(call("geomap_georeference", {"map_id": small, "crs": "EPSG:4267", "bounds": bounds}))["revision_id"].startswith("rev_")
    [cancelled, done] = [line for line in server.tool_call_lines() if line["tool"] == "geomap_georeference"]
    assert (cancelled["outcome"], done["outcome"]) == ("cancelled", "ok"), server.log()
    assert stopped_after < 10, f"the call ran on for {stopped_after:.1f} s after its client left"
    assert not (server.data_root / "artifacts" / big).exists() or not any((server.data_root / "artifacts" / big).iterdir()), "no half-written revision"
    assert not [line for line in server.log() if " ERROR " in line], server.log()


def test_stdio_input_that_ends_before_initialize_is_a_clean_exit(tmp_path):
    server = Server(tmp_path)
    ended = run_binary(server)
    assert ended.returncode == 0, ended
    assert "event=server_stop" in ended.stderr and "before the client initialized" in ended.stderr, ended.stderr
    assert " ERROR " not in ended.stderr, ended.stderr


def test_check_reports_the_transport_and_the_call_limits(tmp_path):
    server = Server(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text("check-token-0123456789abcdef\n")
    checked = run_binary(server, "check", env={"GEOMAP_HTTP_LISTEN": "127.0.0.1:8765", "GEOMAP_HTTP_TOKENS_FILE": str(tokens), "GEOMAP_MAX_HEAVY_CALLS": "3"})
    assert "transport: streamable HTTP on 127.0.0.1:8765" in checked.stdout and "1 bearer token" in checked.stdout, checked.stdout
    assert "heavy calls at once: 3" in checked.stdout and "check-token" not in checked.stdout
    refused = run_binary(server, "check", env={"GEOMAP_HTTP_LISTEN": "0.0.0.0:8765"})
    assert refused.returncode == 1 and "PROBLEM" in refused.stdout and "GEOMAP_HTTP_TOKENS_FILE" in refused.stdout, refused.stdout
    bad = run_binary(server, "check", env={"GEOMAP_MAX_HEAVY_CALLS": "0"})
    assert bad.returncode == 2 and "GEOMAP_MAX_HEAVY_CALLS" in bad.stderr, bad

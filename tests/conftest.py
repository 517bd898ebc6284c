"""Shared helpers for the end-to-end tests.

Every test starts the real release binary (GEOMAP_TEST_BINARY) as a subprocess
and talks to it with the official Python MCP client, in the protocol era the
test asks for. The server's stderr goes to a file the test can read, so log
lines can be matched to trace IDs.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import struct
import subprocess
import threading
import zlib
import time
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BINARY = os.environ.get("GEOMAP_TEST_BINARY", str(Path(__file__).parents[1] / "target/release/stratigraphic-amenity"))
# How Server.connect reaches the server: `stdio` (what MCP hosts run) or `http` (streamable HTTP on loopback, with a token).
TRANSPORT = os.environ.get("GEOMAP_TEST_TRANSPORT", "stdio")
# The registry's backend for this run: `sqlite` (each server's own file) or `postgres` (each server
# its own database on the server GEOMAP_TEST_POSTGRES_URL names, which ./dev test starts).
REGISTRY = os.environ.get("GEOMAP_TEST_REGISTRY", "sqlite")
POSTGRES_ADMIN_URL = os.environ.get("GEOMAP_TEST_POSTGRES_URL")
HTTP_LISTEN = re.compile(r"event=http_listen address=(?P<address>\S+)")
ERAS = ["legacy", "2026-07-28"]
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
LOG_LINE = re.compile(
    r"^\S+\s+INFO event=tool_call tool=(?P<tool>\S+) outcome=(?P<outcome>\S+) duration_ms=(?P<duration_ms>\d+) trace_id=(?P<trace_id>[0-9a-f]{32})"
    r"(?: session=(?P<session>[0-9a-z]+))?$"
)


ASSETS_BINARY = str(Path(BINARY).with_name("stratigraphic-amenity-assets"))
# The same server built with the test-only `fault-injection` feature (./dev test builds it beside the real one):
# a Server whose settings name a GEOMAP_FAULT_* variable runs it; every other test runs the binary operators run.
FAULT_BINARY = str(Path(BINARY).with_name("stratigraphic-amenity-faults"))
SHARED_ASSETS = Path(__file__).resolve().parents[2] / "shared" / "assets"


def shared_asset(*names: str) -> Path:
    """The workplace's real upstream files (`../shared/assets` beside the clone) when they hold `names`;
    otherwise the calling test is skipped, naming what is absent (a clone with nothing beside it has none)."""
    for name in names:
        if not (SHARED_ASSETS / name).is_file():
            pytest.skip(f"SKIPPED: {SHARED_ASSETS / name} is absent (real upstream data beside the clone)")
    return SHARED_ASSETS


class Mirror:
    """A loopback HTTP server: `files` by name; `behaviour[name]` is `truncate`, `stall` or `tamper`; anything else is 404."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.behaviour: dict[str, str] = {}
        self.requests: list[str] = []
        self.stop = threading.Event()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                name = self.path.lstrip("/")
                mirror.requests.append(name)
                body = mirror.files.get(name)
                if body is None:
                    self.send_error(404)
                    return
                how = mirror.behaviour.get(name)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if how == "truncate":
                    self.wfile.write(body[: len(body) // 2])
                elif how == "stall":
                    self.wfile.write(body[:1000])
                    self.wfile.flush()
                    mirror.stop.wait(60)
                elif how == "tamper":
                    self.wfile.write(bytes([body[0] ^ 1]) + body[1:])
                else:
                    self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def mirror():
    served = Mirror()
    yield served
    served.close()


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Server:
    """One data root and map root, and how to start the server on them."""

    def __init__(self, base: Path, env: dict[str, str] | None = None, transport: str | None = None):
        self.base = base
        self.transport = transport or TRANSPORT
        self.token = "e2e-" + os.urandom(16).hex()
        self.data_root = base / "data"
        self.map_root = base / "maps"
        self.map_root.mkdir(parents=True, exist_ok=True)
        self.log_path = base / "server.log"
        self.binary = FAULT_BINARY if any(name.startswith("GEOMAP_FAULT_") for name in env or {}) else BINARY
        self.env = {
            "GEOMAP_DATA_ROOT": str(self.data_root),
            "GEOMAP_MAP_ROOTS": str(self.map_root),
            "RUST_BACKTRACE": "0",
            **(env or {}),
        }
        if REGISTRY == "postgres":
            assert POSTGRES_ADMIN_URL, "GEOMAP_TEST_REGISTRY=postgres needs GEOMAP_TEST_POSTGRES_URL"
            name = "e2e_" + os.urandom(8).hex()
            psql(POSTGRES_ADMIN_URL, f"CREATE DATABASE {name}")
            self.env["GEOMAP_REGISTRY_URL"] = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}?sslmode=disable"

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(command=self.binary, env=self.env)

    @asynccontextmanager
    async def connect(self, era: str = "legacy", **client_options):
        """A client session in `era` over this server's transport; `client_options` go to the SDK's Client
        (an elicitation_callback, say)."""
        if self.transport == "http":
            with self.http_process() as url:
                async with create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"}) as http_client:
                    async with Client(streamable_http_client(url, http_client=http_client), mode=era, **client_options) as client:
                        yield client
            return
        with open(self.log_path, "a") as errlog:
            async with Client(stdio_client(self.params(), errlog=errlog), mode=era, **client_options) as client:
                yield client

    @contextmanager
    def http_process(self, *, tokens: bool = True, env: dict[str, str] | None = None):
        """Starts `serve --http 127.0.0.1:0` (with this server's token unless `tokens` is false) and
        yields its MCP URL once it listens; stops it with SIGTERM afterwards."""
        environment = {"PATH": os.environ["PATH"], "HOME": str(self.base), **self.env, **(env or {})}
        if tokens:
            tokens_file = self.base / "tokens"
            tokens_file.write_text(f"# e2e\n{self.token}\n")
            environment["GEOMAP_HTTP_TOKENS_FILE"] = str(tokens_file)
        before = len(self.log())
        with open(self.log_path, "a") as errlog:
            process = subprocess.Popen([self.binary, "serve", "--http", "127.0.0.1:0"], env=environment, stdin=subprocess.DEVNULL, stderr=errlog)
        try:
            deadline = time.monotonic() + 30
            while not (found := [m for line in self.log()[before:] if (m := HTTP_LISTEN.search(line))]):
                assert process.poll() is None, "the HTTP server exited:\n" + "\n".join(self.log()[before:])
                assert time.monotonic() < deadline, "the HTTP server did not listen within 30 s"
                time.sleep(0.02)
            self.http_process_handle = process
            yield f"http://{found[0]['address']}/mcp"
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def log(self) -> list[str]:
        return self.log_path.read_text().splitlines() if self.log_path.exists() else []

    def tool_call_lines(self) -> list[dict]:
        return [m.groupdict() for line in self.log() if (m := LOG_LINE.match(line))]

    def tool_call_line(self, trace_id: str) -> dict:
        matches = [line for line in self.tool_call_lines() if line["trace_id"] == trace_id]
        assert len(matches) == 1, f"expected one tool_call line for {trace_id}, got {matches}\n" + "\n".join(self.log())
        return matches[0]

    @property
    def database(self) -> Path:
        """The SQLite registry file; a test that works on the file itself skips on PostgreSQL."""
        if REGISTRY == "postgres":
            pytest.skip("the registry is in PostgreSQL: this test works on the SQLite file")
        return self.data_root / "registry.sqlite"

    def registry(self) -> dict:
        """The registry's maps and revision IDs, read straight from the database (read-only)."""
        maps_query = "SELECT map_id FROM maps ORDER BY id"
        query = "SELECT maps.map_id, revisions.revision_id FROM revisions JOIN maps ON revisions.map = maps.id ORDER BY revisions.id"
        if REGISTRY == "postgres":
            url = self.env["GEOMAP_REGISTRY_URL"]
            maps = {map_id: {"revisions": []} for map_id in psql(url, maps_query).split()}
            for line in psql(url, query).splitlines():
                map_id, revision_id = line.split("|")
                maps[map_id]["revisions"].append(revision_id)
            return {"maps": maps}
        connection = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True)
        try:
            maps = {map_id: {"revisions": []} for (map_id,) in connection.execute(maps_query)}
            for map_id, revision_id in connection.execute(query):
                maps[map_id]["revisions"].append(revision_id)
            return {"maps": maps}
        finally:
            connection.close()


def psql(url: str, sql: str) -> str:
    """Runs `sql` with PostgreSQL's own client on the database at `url`; its rows, `|`-separated."""
    return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], capture_output=True, text=True, check=True).stdout


async def interrupt(client, tool: str, arguments: dict, heard, then=None, *, cancel: bool = True, timeout: float = 120) -> None:
    """Calls `tool` and waits for a progress message for which `heard(message, progress)` is true; then runs
    `then()` (when given) and, unless `cancel` is false, cancels the call: the SDK sends
    notifications/cancelled, or in the 2026-07-28 era over HTTP closes the call's response."""
    import anyio

    seen = anyio.Event()

    async def on_progress(progress, total, message):
        if message and heard(message, progress):
            seen.set()

    async with anyio.create_task_group() as group:

        async def call():
            await client.call_tool(tool, arguments, progress_callback=on_progress)

        group.start_soon(call)
        with anyio.fail_after(timeout):
            await seen.wait()
        if then is not None:
            then()
        if cancel:
            group.cancel_scope.cancel()


def run_binary(server: Server, *args: str, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """Runs the binary once (check, registry export/import, or a start that should fail) on the server's settings."""
    environment = {"PATH": os.environ["PATH"], "HOME": str(server.base), **server.env, **(env or {})}
    return subprocess.run([server.binary, *args], env=environment, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)


def child_servers() -> list[int]:
    """PIDs of server processes started by this test process."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                exe = os.readlink(entry / "exe")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and os.path.basename(exe) in (os.path.basename(BINARY), os.path.basename(FAULT_BINARY)):
                found.append(int(entry.name))
    return found


@pytest.fixture
def server(tmp_path) -> Server:
    return Server(tmp_path)


@pytest.fixture(params=ERAS)
def era(request) -> str:
    return request.param


def assert_envelope(result, code: str, server: Server | None = None, *, tool: str | None = None, hints: bool = True) -> dict:
    """Checks an error result end to end and returns its envelope."""
    assert result.is_error is True, result
    envelope = result.structured_content
    assert envelope["schema"] == "geomap-error/v1"
    assert envelope["code"] == code, envelope
    assert TRACE_ID.match(envelope["trace_id"]), envelope["trace_id"]
    assert isinstance(envelope["retryable"], bool)
    assert envelope["message"]
    found_hints = envelope.get("recovery_hints", [])
    if hints:
        assert found_hints, f"{code} should carry recovery hints"
    text = result.content[0].text
    details = json.dumps(envelope.get("details", {}), separators=(",", ":"), ensure_ascii=False)
    expected_digest = [
        f"error.code: {code}",
        f"trace_id: {envelope['trace_id']}",
        f"details: {details}",
        *[f"recovery_hint: {hint}" for hint in found_hints],
    ]
    lines = text.splitlines()
    assert lines[-len(expected_digest):] == expected_digest, text
    assert lines[-len(expected_digest) - 1] == "Evidence digest", text
    assert text.startswith(envelope["message"])
    if server is not None:
        line = server.tool_call_line(envelope["trace_id"])
        assert line["outcome"] == code
        if tool:
            assert line["tool"] == tool
    return envelope


def png(path: Path, width: int, height: int, color=(200, 120, 40), noise: bool = False) -> Path:
    """Writes a real RGB PNG: one colour, or random pixels (which do not compress)."""
    if noise:
        raw = zlib.compress(b"".join(b"\x00" + os.urandom(3 * width) for _ in range(height)))
    else:
        raw = zlib.compress((b"\x00" + bytes(color) * width) * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b""))
    return path


def png_header_only(path: Path, width: int, height: int) -> Path:
    """Writes only a PNG signature and an IHDR claiming width×height (no pixels)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)))
    return path


def pillow_image(path: Path, width: int, height: int, fmt: str) -> Path:
    """Writes a real JPEG or TIFF with Pillow."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (width, height), (90, 140, 60)).save(path, format=fmt)
    return path

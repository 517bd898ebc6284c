"""Three replicas behind nginx, as README's "Past one machine" configures them: one PostgreSQL registry,
one artifact root, GEOMAP_REPLICA_ID r1–r3, the first-party providers with fixture assets, on 127.0.0.1
only. 50 clients of both protocol eras register, georeference, look up, query knowledge and ask for
capabilities for GEOMAP_TEST_REPLICA_SECONDS (default 60) while r2 is SIGKILLed and restarted twice.
Runs once, in the stdio pass of ./dev test (it serves HTTP itself); needs Debian's nginx and the
PostgreSQL server ./dev test starts, and skips by name without them."""

import asyncio
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from conftest import BINARY, POSTGRES_ADMIN_URL, REGISTRY, TRANSPORT, png, psql
from test_http import client_at
from test_providers import provider_site

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
pytestmark = [
    pytest.mark.skipif(TRANSPORT == "http" or REGISTRY == "postgres", reason="runs once, in the stdio pass (it serves HTTP itself)"),
    pytest.mark.skipif(POSTGRES_ADMIN_URL is None, reason="needs a PostgreSQL server: GEOMAP_TEST_POSTGRES_URL is unset"),
    pytest.mark.skipif(NGINX is None, reason="needs nginx (Debian's nginx package)"),
]

CLIENTS = 50
SECONDS = float(os.environ.get("GEOMAP_TEST_REPLICA_SECONDS", "60"))
BOUNDS = {"west": 128.0, "south": 30.0, "east": 146.0, "north": 46.0}
MAPS = 12
EXTRA = 400  # scans the clients register under way, beside the MAPS registered first
README = Path(__file__).resolve().parents[1] / "README.md"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def documented_codes() -> set[str]:
    """The error codes README's table documents."""
    rows = re.findall(r"^\| `([a-z_]+)` \|", README.read_text(), re.MULTILINE)
    return {name for name in rows if not name.startswith("geomap_")}


class Replica:
    """One `serve --http` process of the cluster, started and killed as an operator would."""

    def __init__(self, name: str, base: Path, env: dict[str, str]):
        self.name, self.port = name, free_port()
        self.log = base / f"{name}.log"
        self.env = {**env, "GEOMAP_DATA_ROOT": str(base / name), "GEOMAP_REPLICA_ID": name}
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        before = self.log.read_text().count("event=http_listen") if self.log.exists() else 0
        with open(self.log, "a") as errlog:
            self.process = subprocess.Popen([BINARY, "serve", "--http", f"127.0.0.1:{self.port}"], env=self.env, stdin=subprocess.DEVNULL, stderr=errlog)
        deadline = time.monotonic() + 30
        while self.log.read_text().count("event=http_listen") == before:
            assert self.process.poll() is None and time.monotonic() < deadline, self.log.read_text()[-3000:]
            time.sleep(0.05)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()


def nginx_config(replicas: list[Replica], port: int, prefix: Path) -> str:
    """README's configuration, on loopback ports, with its temporary files under `prefix`."""
    servers = " ".join(f"server 127.0.0.1:{r.port} max_fails=1 fail_timeout=2s;" for r in replicas)
    upstreams = "\n".join(f"    upstream geomap_{r.name} {{ server 127.0.0.1:{r.port}; }}" for r in replicas)
    routes = "\n".join(f"        ~^{r.name}\\.  geomap_{r.name};" for r in replicas)
    user = "user root;" if os.geteuid() == 0 else ""
    temp = " ".join(f"{kind}_temp_path {prefix}/{kind};" for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"])
    return f"""{user}
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    {temp}
    upstream geomap {{ {servers} }}
{upstreams}
    map $http_mcp_session_id $geomap_upstream {{
{routes}
        default geomap;
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://$geomap_upstream;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 1h;
            proxy_next_upstream error timeout;
            proxy_intercept_errors on;
            error_page 502 504 = @unreachable;
        }}
        location @unreachable {{
            if ($http_mcp_session_id) {{ return 404; }}
            return 502;
        }}
        location = /healthz {{ proxy_pass http://geomap; }}
    }}
}}
"""


async def agent(url: str, era: str, map_ids: list[str], until: float, seed: int, seen: dict) -> None:
    """One client calling until `until`: registrations, georeferences, lookups and capabilities. An
    acknowledged registration or revision goes to `seen`; a tool error's code too; a broken session
    (its replica died) is noted with its time and a new session started."""
    turn = seed
    while time.monotonic() < until:
        try:
            async with client_at(url, "unused", era) as client:
                while time.monotonic() < until:
                    turn += 1
                    map_id = map_ids[turn % len(map_ids)]
                    tool, arguments = [
                        ("geomap_register_map", {"path": f"extra{(seed * 997 + turn) % EXTRA}.png"}),
                        ("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": BOUNDS}),
                        ("geomap_lookup", {"term": "Sandstone"}),
                        ("geomap_query_knowledge", {"map_id": map_id}),
                        ("geomap_capabilities", {}),
                    ][turn % 5]
                    result = await client.call_tool(tool, arguments)
                    seen["calls"] += 1
                    if result.is_error:
                        seen["codes"].append(result.structured_content["code"])
                    elif tool == "geomap_register_map":
                        seen["maps"].add(result.structured_content["map_id"])
                    elif tool == "geomap_georeference":
                        seen["revisions"].add(result.structured_content["revision_id"])
                    elif tool == "geomap_query_knowledge":
                        seen["bundles"].add(result.structured_content["bundle_id"])
        except Exception as error:  # noqa: BLE001 (sorted below: the transport's failures are noted, anything else is raised)
            leaf = error
            while isinstance(leaf, ExceptionGroup):
                leaf = leaf.exceptions[0]
            if not isinstance(leaf, (MCPError, httpx2.HTTPError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)):
                raise
            seen["broken"].append((time.monotonic(), era, f"{type(leaf).__name__}: {leaf}"[:200]))
            await asyncio.sleep(0.2)


def test_three_replicas_behind_nginx_lose_nothing_while_one_is_killed_and_restarted_twice(tmp_path):
    database = "replicas_" + os.urandom(6).hex()
    psql(POSTGRES_ADMIN_URL, f"CREATE DATABASE {database}")
    registry_url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}?sslmode=disable"
    maps = tmp_path / "maps"
    maps.mkdir()
    for index in range(MAPS):
        png(maps / f"scan{index}.png", 64 + index, 48, color=(index * 20, 120, 40))
    for index in range(EXTRA):
        png(maps / f"extra{index}.png", 32 + index % 50, 24 + index // 50, color=(index % 256, 60, 200))
    site = provider_site(tmp_path / "site", None)  # its settings: the providers' fixture assets
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GEOMAP_CONFIG": site.env["GEOMAP_CONFIG"],
        "GEOMAP_PROVIDER_ROOTS": site.env["GEOMAP_PROVIDER_ROOTS"],
        "GEOMAP_MAP_ROOTS": str(maps),
        "GEOMAP_ARTIFACT_ROOT": str(tmp_path / "shared"),
        "GEOMAP_REGISTRY_URL": registry_url,
        "GEOMAP_SHUTDOWN_GRACE": "5s",
        "RUST_BACKTRACE": "0",
    }
    replicas = [Replica(f"r{index}", tmp_path, env) for index in (1, 2, 3)]
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    port = free_port()
    (prefix / "nginx.conf").write_text(nginx_config(replicas, port, prefix))
    nginx = None
    try:
        for replica in replicas:
            replica.start()
        nginx = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"], stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert nginx.poll() is None and time.monotonic() < deadline, nginx.stderr.read().decode() if nginx.poll() is not None else "nginx did not listen"
                time.sleep(0.05)

        async def run() -> dict:
            async with client_at(url, "unused", "2026-07-28") as client:
                map_ids = [(await client.call_tool("geomap_register_map", {"path": f"scan{i}.png"})).structured_content["map_id"] for i in range(MAPS)]
            seen = {"calls": 0, "maps": set(map_ids), "revisions": set(), "bundles": set(), "codes": [], "broken": []}
            start = time.monotonic()
            until = start + SECONDS
            kills = []

            async def killer() -> None:
                for fraction in (0.25, 0.6):
                    await asyncio.sleep(start + fraction * SECONDS - time.monotonic())
                    killed = time.monotonic()
                    replicas[1].kill()
                    await asyncio.sleep(SECONDS / 12)
                    await asyncio.to_thread(replicas[1].start)
                    kills.append((killed, time.monotonic()))

            agents = [agent(url, ["legacy", "2026-07-28"][index % 2], map_ids, until, index, seen) for index in range(CLIENTS)]
            await asyncio.gather(killer(), *agents)
            seen["kills"] = kills
            return seen

        seen = asyncio.run(run())
        recorded_maps = set(psql(registry_url, "SELECT map_id FROM maps").split())
        recorded_revisions = set(psql(registry_url, "SELECT revision_id FROM revisions").split())
        recorded_bundles = set(psql(registry_url, "SELECT bundle_id FROM bundles").split())
        sessions = {replica.name: replica.log.read_text().count("event=tool_call") for replica in replicas}
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait(timeout=30)
        for replica in replicas:
            replica.stop()
    reasons = collections.Counter(reason for _, _, reason in seen["broken"])
    print(
        f"{seen['calls']} calls in {SECONDS:.0f} s by {CLIENTS} clients; tool calls per replica {sessions}; "
        f"{len(seen['revisions'])} revisions, {len(seen['bundles'])} bundles; codes {collections.Counter(seen['codes'])}; broken sessions {dict(reasons)}"
    )
    assert seen["calls"] > CLIENTS * 4 and all(count > 0 for count in sessions.values()), (seen["calls"], sessions)
    assert len(seen["maps"]) > MAPS + 100 and seen["maps"] <= recorded_maps, "every acknowledged registration is in the registry"
    assert seen["revisions"] <= recorded_revisions, "every acknowledged revision is in the registry"
    assert seen["bundles"] and seen["bundles"] <= recorded_bundles, "every acknowledged knowledge bundle is in the registry"
    assert set(seen["codes"]) <= documented_codes(), f"undocumented codes: {set(seen['codes']) - documented_codes()}"
    # A knowledge query on a map no one has georeferenced yet fails as it should; nothing else may.
    assert set(seen["codes"]) <= {"georef_required"}, collections.Counter(seen["codes"])
    windows = [(killed - 1, restarted + 10) for killed, restarted in seen["kills"]]
    outside = [broken for broken in seen["broken"] if not any(low <= broken[0] <= high for low, high in windows)]
    assert outside == [], f"sessions broke only when a replica died: {outside}"
    for revision_id in seen["revisions"]:
        folders = list((tmp_path / "shared" / "artifacts").glob(f"*/{revision_id}"))
        assert len(folders) == 1 and any(folders[0].iterdir()), f"{revision_id}'s folder is on the shared artifact root, whole"
    checked = subprocess.run([BINARY, "check"], env={**env, "GEOMAP_DATA_ROOT": str(tmp_path / "r1")}, capture_output=True, text=True, timeout=60)
    assert "integrity check passed" in checked.stdout, checked.stdout + checked.stderr

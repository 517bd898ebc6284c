"""The registry (SQLite, or PostgreSQL in the PostgreSQL pass): migration from registry.json, damaged
files, many writers and SIGKILLs, paginated resources, export and import, and moving a registry
between the two backends."""

import base64
import json
import os
import random
import shutil
import signal
import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from conftest import POSTGRES_ADMIN_URL, REGISTRY, TRANSPORT, Server, child_servers, pillow_image, png, psql, run_binary

pytestmark = pytest.mark.anyio

BOUNDS = {"crs": "EPSG:4326", "bounds": {"west": -120.0, "south": 35.0, "east": -119.9, "north": 35.1}}
QUADRATIC = [
    {"col": c, "row": r, "x": -120 + 1e-4 * c + 1e-9 * c * c, "y": 35.1 - 1e-4 * r}
    for c, r in [(0, 0), (200, 0), (0, 160), (200, 160), (100, 80), (50, 120), (170, 30)]
]


def document(maps: dict, version: int = 2) -> str:
    return json.dumps({"schema_version": version, "maps": maps})


def synthetic_maps(count: int, root) -> dict:
    """Registry records for maps whose files do not exist (for listings, never described)."""
    maps = {}
    for n in range(count):
        map_id = f"map_{n:020x}"
        maps[map_id] = {
            "map_id": map_id, "root": str(root), "relative_path": f"archive/{n:05}.tif", "media_type": "image/tiff",
            "width": 100, "height": 80, "bytes": 1000 + n, "sha256": f"{n:064x}", "modified_ns": n,
            "registered_at": "2026-01-01T00:00:00Z", "revisions": [],
        }
    return maps


def integrity(server: Server) -> str:
    connection = sqlite3.connect(server.database)
    try:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        connection.close()


async def populated(server: Server) -> dict[str, dict]:
    """Three registered maps, two georeferenced (affine bounds; polynomial2 with a VRT and a warped GeoTIFF): map_id -> describe result."""
    pillow_image(server.map_root / "sheets" / "a.png", 200, 160, "PNG")
    pillow_image(server.map_root / "sheets" / "b.png", 200, 160, "PNG")
    png(server.map_root / "sheets" / "c.png", 30, 20)
    described = {}
    async with server.connect() as client:
        ids = [(await client.call_tool("geomap_register_map", {"path": f"sheets/{n}"})).structured_content["map_id"] for n in ("a.png", "b.png", "c.png")]
        assert (await client.call_tool("geomap_georeference", {"map_id": ids[0], **BOUNDS})).is_error is False
        assert (await client.call_tool("geomap_georeference", {"map_id": ids[0], **BOUNDS})).is_error is False
        fitted = await client.call_tool("geomap_georeference", {"map_id": ids[1], "crs": "EPSG:4326", "control_points": QUADRATIC, "transform": "polynomial2"})
        assert fitted.is_error is False, fitted
        for map_id in ids:
            described[map_id] = (await client.call_tool("geomap_describe_map", {"map_id": map_id})).structured_content
    return described


def moved(described: dict, old_root, new_root) -> dict:
    """A describe result as it reads once the data root moved (artifact paths name the data root)."""
    return json.loads(json.dumps(described).replace(str(old_root), str(new_root)))


@pytest.mark.parametrize("version", [1, 2])
async def test_a_registry_json_is_migrated_with_every_map_revision_and_id(tmp_path, version):
    before = Server(tmp_path / "old")
    described = await populated(before)
    exported = run_binary(before, "registry", "export")
    assert exported.returncode == 0, exported.stderr
    legacy = json.loads(exported.stdout)
    assert legacy["schema_version"] == 3 and set(legacy["maps"]) == set(described)
    legacy["schema_version"] = version  # schema 2 had no bundles nor documents
    del legacy["bundles"], legacy["documents"]
    if version == 1:  # schema 1 had no revisions
        for record in legacy["maps"].values():
            del record["revisions"]
    after = Server(tmp_path / "new")
    after.map_root = before.map_root
    after.env["GEOMAP_MAP_ROOTS"] = str(before.map_root)
    after.data_root.mkdir()
    if version == 2:
        shutil.copytree(before.data_root / "artifacts", after.data_root / "artifacts")
    original = json.dumps(legacy, indent=2).encode()
    (after.data_root / "registry.json").write_bytes(original)

    async with after.connect() as client:
        for map_id, expected in described.items():
            expected = moved(expected, before.data_root, after.data_root)
            if version == 1:
                expected = {**expected, "revisions": []}
                expected.pop("current_revision_id", None)
            result = await client.call_tool("geomap_describe_map", {"map_id": map_id})
            assert result.is_error is False, result
            assert result.structured_content == expected
            again = await client.call_tool("geomap_register_map", {"path": expected["source"]["relative_path"]})
            assert (again.structured_content["map_id"], again.structured_content["already_registered"]) == (map_id, True)
        if version == 2:
            artifact = described[next(iter(described))]["revisions"][0]["artifacts"][0]
            read = await client.read_resource(artifact["resource_uri"])
            assert base64.b64decode(read.contents[0].blob) == Path(artifact["path"]).read_bytes()
    assert not (after.data_root / "registry.json").exists()
    assert (after.data_root / "registry.json.migrated").read_bytes() == original
    async with after.connect() as client:  # a second start has nothing to migrate
        await client.call_tool("geomap_capabilities", {})
    migrated = [line for line in after.log() if "event=registry_migrated" in line]
    revisions = 3 if version == 2 else 0
    assert len(migrated) == 1 and "maps=3" in migrated[0] and f"revisions={revisions}" in migrated[0], after.log()


def damaged_database(server: Server) -> bytes:
    """A real registry with a few maps, closed cleanly."""
    server.data_root.mkdir(parents=True)
    (tmp := server.base / "export.json").write_text(document(synthetic_maps(300, server.map_root)))
    assert run_binary(server, "registry", "import", str(tmp)).returncode == 0
    return server.database.read_bytes()


def future_version(whole: bytes) -> bytes:
    version = (999).to_bytes(4, "big")
    return whole[:60] + version + whole[64:]  # user_version lives at offset 60 of the header


@pytest.mark.parametrize(
    "case, damage, reason",
    [
        ("garbage", lambda whole: b"\x00garbage" * 1024, "not an SQLite database (it is some other kind of file)"),
        ("truncated", lambda whole: whole[: len(whole) // 2], "cut short"),
        ("future schema", future_version, "schema version 999 is newer than this server knows"),
        ("json instead", lambda whole: document({}).encode(), "not an SQLite database (it is a JSON file)"),
    ],
)
def test_a_damaged_database_stops_the_server_before_any_call_and_is_left_untouched(server, case, damage, reason):
    whole = damaged_database(server)
    bytes_before = damage(whole)
    server.database.write_bytes(bytes_before)
    started = run_binary(server)
    assert started.returncode == 1, started.stderr
    assert "error.code: registry_corrupt" in started.stderr
    assert f"{server.database}: " in started.stderr and reason in started.stderr, started.stderr
    assert f"recover with: mkdir {server.data_root}/registry-corrupt-" in started.stderr
    assert f"mv {server.database}* {server.data_root}/registry-corrupt-" in started.stderr
    checked = run_binary(server, "check")
    assert checked.returncode == 1 and "PROBLEM registry:" in checked.stdout and reason in checked.stdout, checked.stdout
    assert server.database.read_bytes() == bytes_before, "the damaged file is never written"


async def test_the_recovery_command_lets_the_server_start_again(server):
    damaged_database(server)
    server.database.write_bytes(os.urandom(4096))
    command = next(line.split("recover with: ", 1)[1] for line in run_binary(server).stderr.splitlines() if "recover with: " in line)
    os.system(command)  # noqa: S605 - the command the server printed, run as the operator would
    async with server.connect() as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    assert caps["data_root"]["state"] == "ready" and caps["data_root"]["registered_maps"] == 0
    assert len(list(server.data_root.glob("registry-corrupt-*/registry.sqlite"))) == 1


async def test_damage_inside_the_file_is_registry_corrupt_at_the_call_and_in_check(server):
    whole = damaged_database(server)
    connection = sqlite3.connect(server.database)
    root_page = connection.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'maps'").fetchone()[0]
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    damaged = bytearray(whole)
    start = (root_page - 1) * page_size
    damaged[start : start + page_size] = b"\xff" * page_size  # the maps table's root page
    server.database.write_bytes(bytes(damaged))
    async with server.connect() as client:
        result = await client.call_tool("geomap_describe_map", {"map_id": "map_00000000000000000001"})
    envelope = result.structured_content
    assert envelope["code"] == "registry_corrupt" and envelope["cause"] == "database" and envelope["details"] == {"reason": "malformed"}, envelope
    assert f"mv {server.database}* {server.data_root}/registry-corrupt-" in envelope["message"], "the message repeats the remedy"
    checked = run_binary(server, "check")
    assert checked.returncode == 1 and "PROBLEM registry:" in checked.stdout and "damaged (database disk image is malformed)" in checked.stdout, checked.stdout
    assert "recover with: mkdir" in checked.stdout


async def test_two_servers_registering_and_georeferencing_at_once_lose_nothing(server):
    for n in range(400):
        png(server.map_root / f"p{n:03}.png", 4 + n % 50, 4 + n // 50)

    async def work(start):
        async with server.connect() as client:
            for n in range(start, start + 200):
                registered = await client.call_tool("geomap_register_map", {"path": f"p{n:03}.png"})
                assert registered.is_error is False, registered
                placed = await client.call_tool("geomap_georeference", {"map_id": registered.structured_content["map_id"], **BOUNDS})
                assert placed.is_error is False, placed

    async with anyio.create_task_group() as group:
        group.start_soon(work, 0)
        group.start_soon(work, 200)
    registry = server.registry()
    assert len(registry["maps"]) == 400
    assert all(len(record["revisions"]) == 1 for record in registry["maps"].values())
    assert not [line for line in server.log() if "outcome=" in line and "outcome=ok" not in line], "no call failed, none was merely busy"
    assert integrity(server) == "ok"


def leaves(error: BaseException):
    """The exceptions inside (possibly nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


async def test_twenty_sigkills_during_writes_leave_a_sound_registry_with_every_acknowledged_write(server):
    files = [png(server.map_root / f"k{n:04}.png", 4, 1 + n) for n in range(3000)]
    maps: set[str] = set()
    revisions: set[str] = set()
    rng = random.Random(11)
    next_file = 0
    killed = 0
    for _ in range(20):
        async def kill_soon():
            await anyio.sleep(rng.uniform(0.05, 0.4))
            for pid in child_servers():
                os.kill(pid, signal.SIGKILL)

        try:
            async with server.connect() as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(kill_soon)
                    while next_file < len(files):
                        result = await client.call_tool("geomap_register_map", {"path": files[next_file].name})
                        assert result.is_error is False, result
                        next_file += 1
                        map_id = result.structured_content["map_id"]
                        maps.add(map_id)
                        placed = await client.call_tool("geomap_georeference", {"map_id": map_id, **BOUNDS})
                        assert placed.is_error is False, placed
                        revisions.add(placed.structured_content["revision_id"])
        except Exception as error:  # the connection dies with the server; a failed call is a failure
            if any(isinstance(leaf, AssertionError) for leaf in leaves(error)):
                raise
            killed += 1
        next_file += 1  # the call in flight may or may not have landed
        assert integrity(server) == "ok"
        registry = server.registry()
        assert maps <= set(registry["maps"]), maps - set(registry["maps"])
        assert revisions <= {r for record in registry["maps"].values() for r in record["revisions"]}
    assert killed >= 15, "the kills should land in the middle of writes"
    assert len(revisions) > 20
    checked = run_binary(server, "check")
    assert checked.returncode == 0 and "integrity check passed" in checked.stdout, checked.stdout


async def test_an_unchanged_registration_writes_nothing(server):
    png(server.map_root / "same.png", 16, 16)
    async with server.connect() as client:
        await client.call_tool("geomap_register_map", {"path": "same.png"})
        files = [server.database, server.data_root / "registry.sqlite-wal"]
        before = [(f.stat().st_size, f.stat().st_mtime_ns) for f in files]
        again = await client.call_tool("geomap_register_map", {"path": "same.png"})
        assert again.structured_content["already_registered"] is True
        assert [(f.stat().st_size, f.stat().st_mtime_ns) for f in files] == before


async def test_resources_are_listed_page_by_page_while_another_server_registers(server, era):
    (export := server.base / "maps.json").write_text(document(synthetic_maps(1000, server.map_root)))
    assert run_binary(server, "registry", "import", str(export)).returncode == 0
    expected = {f"geomap://maps/map_{n:020x}" for n in range(1000)}
    for n in range(300):
        png(server.map_root / "late" / f"{n:03}.png", 5, 5 + n)

    async def register_more():
        async with server.connect() as other:
            for n in range(300):
                assert (await other.call_tool("geomap_register_map", {"path": f"late/{n:03}.png"})).is_error is False

    seen: list[str] = []
    pages = 0
    async with server.connect(era) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(register_more)
            cursor = None
            while True:
                page = await client.list_resources(cursor=cursor, cache_mode="bypass")
                pages += 1
                seen += [str(resource.uri) for resource in page.resources]
                assert len(page.resources) <= 200
                cursor = page.next_cursor
                if cursor is None:
                    break
                await anyio.sleep(0.01)
    assert len(seen) == len(set(seen)), "no resource twice"
    assert expected <= set(seen), "every map that existed before the listing began"
    assert pages >= 5


async def test_a_cursor_the_server_did_not_give_is_invalid_params(server, era):
    async with server.connect(era) as client:
        for cursor in ["not-a-cursor", base64.urlsafe_b64encode(b"m-1").decode().rstrip("="), "bTE"[:2]]:
            with pytest.raises(MCPError) as raised:
                await client.list_resources(cursor=cursor, cache_mode="bypass")
            assert raised.value.error.code == -32602
            envelope = raised.value.error.data
            assert envelope["code"] == "invalid_arguments" and envelope["details"]["field"] == "/cursor"
            assert "nextCursor" in raised.value.error.message


async def test_an_export_restores_into_an_empty_data_root_only(tmp_path):
    source = Server(tmp_path / "source")
    described = await populated(source)
    export = tmp_path / "backup.json"
    exported = run_binary(source, "registry", "export", str(export))
    assert exported.returncode == 0 and "exported 3 maps" in exported.stderr
    assert not (tmp_path / "backup.json.partial").exists()

    target = Server(tmp_path / "target")
    target.map_root, target.env["GEOMAP_MAP_ROOTS"] = source.map_root, str(source.map_root)
    imported = run_binary(target, "registry", "import", str(export))
    assert imported.returncode == 0 and "imported 3 maps, 3 revisions, " in imported.stderr, imported.stderr
    async with target.connect() as client:
        for map_id, expected in described.items():
            result = await client.call_tool("geomap_describe_map", {"map_id": map_id})
            assert result.structured_content == moved(expected, source.data_root, target.data_root)

    again = run_binary(target, "registry", "import", str(export))
    assert again.returncode == 1 and "already holds 3 maps" in again.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 2, "maps": {"x": 1}}')
    refused = run_binary(Server(tmp_path / "third"), "registry", "import", str(broken))
    assert refused.returncode == 1 and f"{broken} is not a registry export" in refused.stderr


def test_twenty_thousand_maps_move_from_sqlite_to_postgresql_and_back_losslessly(tmp_path):
    """`registry export` then `registry import`, SQLite → PostgreSQL → SQLite, at 20,000 maps with
    revisions, bundles and documents: the last export is the first, byte for byte."""
    if POSTGRES_ADMIN_URL is None:
        pytest.skip("needs a PostgreSQL server: GEOMAP_TEST_POSTGRES_URL is unset")
    if TRANSPORT == "http" or REGISTRY == "postgres":
        pytest.skip("runs once, in the stdio pass (it starts no MCP server)")
    maps = synthetic_maps(20_000, tmp_path / "maps")
    revision = {"revision_id": "", "created_at": "2026-01-01T00:00:00Z", "crs": "EPSG:4326", "crs_name": "WGS 84", "transform": "affine",
                "geotransform": [0.0, 1.0, 0.0, 0.0, 0.0, -1.0], "pixel_region": {"col": 0, "row": 0, "width": 1, "height": 1},
                "wgs84_bounds": {"west": 0.0, "south": -1.0, "east": 1.0, "north": 0.0}, "artifacts": [{"name": "map.tif", "media_type": "image/tiff", "bytes": 10}], "warnings": []}
    for n, record in enumerate(list(maps.values())[:5000]):
        record["revisions"] = [{**revision, "revision_id": f"rev_{n:020x}"}]
    ids = list(maps)
    bundles = [{"bundle_id": f"kb_{n:020x}", "map_id": ids[n] if n % 2 else None, "revision_id": None, "created_at": "2026-01-02T00:00:00Z", "document": json.dumps({"n": n})} for n in range(2000)]
    documents = [{"kind": ["layout", "reading", "units"][n % 3], "id": f"{['lay', 'txt', 'unt'][n % 3]}_{n:020x}", "map_id": ids[n], "created_at": "2026-01-03T00:00:00Z", "document": json.dumps({"n": n, "é": " "})} for n in range(3000)]
    source_file = tmp_path / "source.json"
    source_file.write_text(json.dumps({"schema_version": 3, "maps": maps, "bundles": bundles, "documents": documents}))

    sqlite_server = Server(tmp_path / "sqlite")
    assert run_binary(sqlite_server, "registry", "import", str(source_file), timeout=300).returncode == 0
    first = tmp_path / "first.json"
    assert run_binary(sqlite_server, "registry", "export", str(first), timeout=300).returncode == 0

    database = "moved_" + os.urandom(6).hex()
    psql(POSTGRES_ADMIN_URL, f"CREATE DATABASE {database}")
    postgres_server = Server(tmp_path / "postgres", env={"GEOMAP_REGISTRY_URL": POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}?sslmode=disable"})
    imported = run_binary(postgres_server, "registry", "import", str(first), timeout=600)
    assert imported.returncode == 0 and "imported 20000 maps, 5000 revisions, 2000 knowledge bundles and 3000 layouts" in imported.stderr, imported.stderr
    second = tmp_path / "second.json"
    assert run_binary(postgres_server, "registry", "export", str(second), timeout=300).returncode == 0

    back = Server(tmp_path / "back")
    assert run_binary(back, "registry", "import", str(second), timeout=300).returncode == 0
    third = tmp_path / "third.json"
    assert run_binary(back, "registry", "export", str(third), timeout=300).returncode == 0
    assert first.read_bytes() == second.read_bytes() == third.read_bytes(), "the same registry on either backend exports the same bytes"
    exported = json.loads(first.read_text())
    assert (len(exported["maps"]), len(exported["bundles"]), len(exported["documents"])) == (20_000, 2000, 3000)
    checked = run_binary(postgres_server, "check", timeout=120)
    assert "20000 maps, 5000 revisions; integrity check passed" in checked.stdout, checked.stdout


async def test_capabilities_count_maps_and_revisions(server):
    await populated(server)
    async with server.connect() as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    assert (caps["data_root"]["registered_maps"], caps["data_root"]["revisions"]) == (3, 3)


"""Panics, a corrupt legacy registry, the command line and the config file."""

import re
import struct
from pathlib import Path

import pytest

from conftest import BINARY, Server, assert_envelope, png, run_binary

pytestmark = pytest.mark.anyio


async def test_a_panic_is_internal_error_with_its_backtrace_logged_above_the_line(tmp_path, era):
    server = Server(tmp_path, {"GEOMAP_FAULT_PANIC_TOOL": "geomap_describe_map"})
    async with server.connect(era) as client:
        result = await client.call_tool("geomap_describe_map", {"map_id": "map_x"})
        envelope = assert_envelope(result, "internal_error", server, tool="geomap_describe_map")
        assert envelope["cause"] == "panic"
        assert envelope["retryable"] is True, "describe is idempotent"
        assert envelope["trace_id"] in envelope["recovery_hints"][0]
        after = await client.call_tool("geomap_capabilities", {})
        assert after.is_error is False, "the server goes on serving"
    log = server.log()
    line_index = next(i for i, line in enumerate(log) if envelope["trace_id"] in line and "event=tool_call" in line)
    above = "\n".join(log[:line_index])
    panic_start = max(i for i, line in enumerate(log[:line_index]) if "panicked" in line)
    assert envelope["trace_id"] in log[panic_start]
    assert "fault injection: geomap_describe_map panics on purpose" in above
    assert "stack backtrace:" in above
    assert all("event=tool_call" not in line for line in log[panic_start:line_index]), "the backtrace sits just above the line"
    # The frame that panicked, by file and line: read from the debug file beside the binary, which has none.
    assert re.search(r"^ +at \S*host/server/src/mcp/mod\.rs:\d+:\d+$", above, re.MULTILINE), above
    assert_installable(Path(server.binary))


INSTALLED_LIMIT = 80_000_000


def elf_sections(path: Path) -> dict[str, bytes]:
    """Section name → contents (for the small ones) of a 64-bit little-endian ELF file."""
    with open(path, "rb") as elf:
        header = elf.read(64)
        assert header[:6] == b"\x7fELF\x02\x01", f"{path} is not a 64-bit little-endian ELF file"
        shoff, = struct.unpack_from("<Q", header, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3A)
        elf.seek(shoff)
        table = elf.read(shentsize * shnum)
        headers = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]

        def contents(index: int) -> bytes:
            _, kind, _, _, offset, size = headers[index]
            if kind == 8 or size > 1 << 20:  # SHT_NOBITS, or too big to need here
                return b""
            elf.seek(offset)
            return elf.read(size)

        names = contents(shstrndx)
        return {names[name : names.index(b"\0", name)].decode(): contents(i) for i, (name, *_) in enumerate(headers)}


def assert_installable(binary: Path):
    """What an operator copies (README, Connecting an MCP host): the binary, at most 80 MB and without debug
    sections, and BINARY.debug beside it, named by its .gnu_debuglink, holding the line tables backtraces read."""
    assert binary.stat().st_size <= INSTALLED_LIMIT, f"{binary} is {binary.stat().st_size:,} bytes"
    sections = elf_sections(binary)
    assert not [name for name in sections if name.startswith(".debug_") and name != ".debug_gdb_scripts"], sections.keys()
    debug = binary.with_name(binary.name + ".debug")
    assert sections[".gnu_debuglink"].split(b"\0")[0] == debug.name.encode()
    assert {".debug_info", ".debug_line"} <= elf_sections(debug).keys()


async def test_the_binary_operators_run_has_no_fault_injection(tmp_path):
    """./dev builds fault injection into a separate test-only binary; the real one ignores the variables."""
    server = Server(tmp_path, {"GEOMAP_FAULT_PANIC_TOOL": "geomap_describe_map"})
    server.binary = BINARY
    assert b"GEOMAP_FAULT_" not in Path(BINARY).read_bytes()
    assert_installable(Path(BINARY))
    async with server.connect() as client:
        result = await client.call_tool("geomap_describe_map", {"map_id": "map_x"})
    assert_envelope(result, "artifact_not_found", server, tool="geomap_describe_map")


@pytest.mark.parametrize("content", [b"{ not json", b'{"schema_version": 99, "maps": {}}'])
def test_a_corrupt_registry_stops_the_server_and_is_left_untouched(server, content):
    server.data_root.mkdir(parents=True)
    registry = server.data_root / "registry.json"
    registry.write_bytes(content)
    started = run_binary(server)
    assert started.returncode != 0
    assert str(registry) in started.stderr
    assert f"mv {registry} {registry}.corrupt" in started.stderr
    checked = run_binary(server, "check")
    assert checked.returncode == 1 and "PROBLEM registry:" in checked.stdout
    assert f"recover with: mv {registry} {registry}.corrupt" in checked.stdout
    assert "result: 1 problem(s)" in checked.stdout
    assert registry.read_bytes() == content


def test_check_reports_the_setup_and_exits_zero_when_ready(server):
    checked = run_binary(server, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"map root [0]: {server.map_root}, resolves relative paths" in checked.stdout
    assert "result: ready to serve" in checked.stdout


@pytest.mark.parametrize(
    "variable, value",
    [("GEOMAP_MAX_IMAGE_PIXELS", "lots"), ("GEOMAP_MAP_ROOTS", "relative/dir"), ("GEOMAP_LOG", "info,[x")],
)
def test_a_bad_setting_stops_the_server_naming_the_variable(server, variable, value):
    started = run_binary(server, env={variable: value})
    assert started.returncode == 2
    assert variable in started.stderr and "not valid" in started.stderr


def test_a_missing_configured_map_root_stops_the_server(server):
    started = run_binary(server, env={"GEOMAP_MAP_ROOTS": str(server.base / "nowhere")})
    assert started.returncode == 1 and "nowhere" in started.stderr and "GEOMAP_MAP_ROOTS" in started.stderr


def test_help_and_version(server):
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    documented = re.findall(r"^\| `(GEOMAP_[A-Z_]+)` \|", readme, re.MULTILINE)
    assert "GEOMAP_WORKER_THREADS" in documented and "GEOMAP_CONSENT_TIMEOUT" in documented
    help_text = run_binary(server, "--help").stdout
    assert [name for name in documented if f"    {name} " not in help_text] == [], "README's settings and --help drifted apart"
    version = run_binary(server, "--version")
    assert version.returncode == 0 and version.stdout.startswith("stratigraphic-amenity ")
    assert run_binary(server, "--bogus").returncode == 2


def test_every_command_explains_itself_and_a_usage_error_is_two_lines(server):
    batch = run_binary(server, "batch", "--help")
    assert batch.returncode == 0, batch.stderr
    for words in ("Usage: stratigraphic-amenity batch [OPTIONS] <MANIFEST>", "--shard <I/N>", "--steps <STEP,", "JOB_COMPLETION_INDEX", "JSON line", "Exit status"):
        assert words in batch.stdout, batch.stdout
    registry = run_binary(server, "registry", "--help")
    assert registry.returncode == 0 and "export" in registry.stdout and "import" in registry.stdout, registry.stdout + registry.stderr
    assert "Usage: stratigraphic-amenity registry export [FILE]" in run_binary(server, "registry", "export", "--help").stdout
    assert "Usage: stratigraphic-amenity registry import <FILE>" in run_binary(server, "registry", "import", "--help").stdout
    for args, problem, command in [
        (["batch"], "<MANIFEST>", "stratigraphic-amenity batch"),
        (["serve", "--bogus"], "unexpected argument '--bogus'", "stratigraphic-amenity serve"),
        (["--bogus"], "unexpected argument '--bogus'", "stratigraphic-amenity"),
        (["batch", "maps.txt", "--shard", "one/two"], "'--shard <I/N>'", "stratigraphic-amenity batch"),
        (["registry", "import"], "<FILE>", "stratigraphic-amenity registry import"),
    ]:
        failed = run_binary(server, *args)
        lines = failed.stderr.splitlines()
        assert failed.returncode == 2 and len(lines) == 2 and failed.stdout == "", (args, failed.stderr)
        assert lines[0].startswith("error: ") and problem in lines[0], (args, failed.stderr)
        assert lines[1] == f"For more information, try '{command} --help'.", (args, failed.stderr)


async def test_the_config_file_is_read_and_the_environment_wins(tmp_path):
    config = tmp_path / "geomap.toml"
    config.write_text('max_image_pixels = 10\nmax_image_bytes = 123456\n')
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(config), "GEOMAP_MAX_IMAGE_BYTES": "2MiB"})
    png(server.map_root / "small.png", 4, 4)
    async with server.connect() as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
        result = await client.call_tool("geomap_register_map", {"path": "small.png"})
    assert (caps["media"]["max_image_pixels"], caps["media"]["max_image_bytes"]) == (10, 2 * 2**20)
    envelope = assert_envelope(result, "oversize_image", server)
    assert envelope["details"]["limit_value"] == 10

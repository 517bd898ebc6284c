"""A third party's provider with an asset of its own, as an operator enables it: the glossary provider
(tests/providers/glossary, written from sdk/README.md alone and depending on the SDK by path) reads
`fault-glossary-data`, which no catalog approves. Each hint on the way is followed to success."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import BINARY, Server, assert_envelope, run_binary
from test_prepare_knowledge import answering

pytestmark = pytest.mark.anyio

WASM = Path(BINARY).parents[1] / "wasm32-wasip2" / "release"
GLOSSARY = [
    {"term": "thrust fault", "definition": "A reverse fault whose plane dips less than 45 degrees."},
    {"term": "normal fault", "definition": "A fault whose hanging wall moved down relative to its footwall."},
]


def third_party_site(tmp_path: Path, config: str = "") -> Server:
    """A server whose provider root holds the glossary component (under the `_` spelling of its name)."""
    root = tmp_path / "provider-root"
    root.mkdir(exist_ok=True)
    shutil.copy(WASM / "glossary_provider.wasm", root / "fault_glossary.wasm")
    (tmp_path / "geomap.toml").write_text(config)
    return Server(tmp_path, {"GEOMAP_CONFIG": str(tmp_path / "geomap.toml"), "GEOMAP_PROVIDER_ROOTS": str(root), "GEOMAP_PROVIDERS": "fault-glossary"})


def declared_source(mirror, data: bytes) -> str:
    mirror.files["glossary.json"] = data
    return (
        '[assets.fault-glossary-data]\ntitle = "Fault glossary"\nlicence = "CC0 1.0"\n'
        f'[assets.fault-glossary-data.sources."glossary.json"]\nurl = "{mirror.url}/glossary.json"\nsize = {len(data)}\n'
        f'sha256 = "{hashlib.sha256(data).hexdigest()}"\n'
    )


async def test_a_declared_source_is_installed_after_consent_and_the_provider_answers(tmp_path, mirror, era):
    data = json.dumps(GLOSSARY).encode()
    server = third_party_site(tmp_path, declared_source(mirror, data))
    listed = run_binary(server, "providers").stdout
    assert "fault-glossary" in listed and "not ready: missing assets fault-glossary-data" in listed
    assert "stratigraphic-amenity-assets fault-glossary-data" in listed, listed
    async with server.connect(era, elicitation_callback=answering("accept", True)) as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
        declared = next(asset for asset in caps["assets"] if asset["id"] == "fault-glossary-data")
        assert (declared["origin"], declared["state"], declared["title"], declared["bytes"]) == ("operator", "missing", "Fault glossary", len(data))
        assert {asset["origin"] for asset in caps["assets"] if asset["id"] == "ics-chart"} == {"approved"}
        missing = assert_envelope(await client.call_tool("geomap_lookup", {"term": "thrust fault"}), "missing_knowledge_asset", server, tool="geomap_lookup")
        assert missing["details"]["missing_assets"] == ["fault-glossary-data"]
        assert any("geomap_prepare_knowledge" in hint for hint in missing["recovery_hints"]), missing
        prepared = await client.call_tool("geomap_prepare_knowledge", {"assets": ["fault-glossary-data"]})
        assert prepared.is_error is False, prepared
        assert [asset["asset"] for asset in prepared.structured_content["installed"]] == ["fault-glossary-data"]
        answer = await client.call_tool("geomap_lookup", {"term": "thrust fault"})
    assert answer.is_error is False, answer
    (result,) = answer.structured_content["results"]
    assert result["provider"] == "fault-glossary"
    assert "less than 45 degrees" in json.dumps(result), result
    assert (server.data_root / "assets" / "fault-glossary-data" / "glossary.json").read_bytes() == data


async def test_an_undeclared_asset_is_told_with_the_config_lines_and_those_lines_make_it_ready(tmp_path):
    server = third_party_site(tmp_path)
    listed = run_binary(server, "providers").stdout
    assert "fault-glossary-data is not in this server's catalog" in listed and "[assets.fault-glossary-data]" in listed, listed
    checked = run_binary(server, "providers", "check", str(WASM / "glossary_provider.wasm"))
    assert checked.returncode == 0, checked.stderr
    assert f"copy it to {tmp_path / 'provider-root' / 'fault-glossary.wasm'}" in checked.stdout
    assert "GEOMAP_PROVIDERS already enables fault-glossary" in checked.stdout
    assert '[assets.fault-glossary-data.sources."<file>"]' in checked.stdout and str(tmp_path / "geomap.toml") in checked.stdout
    async with server.connect("legacy") as client:
        missing = assert_envelope(await client.call_tool("geomap_lookup", {"term": "thrust fault"}), "missing_knowledge_asset", server, tool="geomap_lookup")
    hint = missing["recovery_hints"][0]
    assert "GEOMAP_CONFIG" in hint and "[assets.fault-glossary-data]" in hint and "restart" in hint, hint

    # The operator follows the hint with a folder of their own, and restarts the server.
    own = tmp_path / "own-glossary"
    own.mkdir()
    (own / "glossary.json").write_text(json.dumps(GLOSSARY))
    (tmp_path / "geomap.toml").write_text(f'[assets.fault-glossary-data]\npath = "{own}"\n')
    assert "fault-glossary 0.1.0, serves lookup; ready" in run_binary(server, "providers").stdout
    async with server.connect("legacy") as client:
        answer = await client.call_tool("geomap_lookup", {"term": "normal fault"})
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    assert answer.is_error is False, answer
    assert "hanging wall" in json.dumps(answer.structured_content)
    declared = next(asset for asset in caps["assets"] if asset["id"] == "fault-glossary-data")
    assert (declared["origin"], declared["state"]) == ("operator", "custom")
    assert sorted(p.name for p in own.iterdir()) == ["glossary.json"], "the operator's folder is never written"

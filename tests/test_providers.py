"""Providers end to end through the reference client: geomap_lookup and geomap_query_knowledge on
fixture and real assets, every unknown_provider reason, missing_knowledge_asset under both
preparation settings, georef_required, warnings, hostile providers, the CLI."""

import csv
import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import BINARY, SHARED_ASSETS, Server, assert_envelope, child_servers, png, run_binary

pytestmark = pytest.mark.anyio

WASM = Path(BINARY).parents[1] / "wasm32-wasip2" / "release"
FIRST_PARTY = ["ics-timescale", "cgi-lithology", "k2-rocks", "usgs-seismicity"]

CHART = """
PREFIX ischart: <http://resource.geosciml.org/classifier/ics/ischart/>
PREFIX gts: <http://resource.geosciml.org/ontology/timescale/gts#>
PREFIX rank: <http://resource.geosciml.org/ontology/timescale/rank/>
PREFIX schema: <https://schema.org/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX time: <http://www.w3.org/2006/time#>
ischart:Mesozoic a skos:Concept ; gts:rank rank:Era ; skos:prefLabel "Mesozoic"@en ;
    time:hasBeginning [ ischart:inMYA 251.902 ; schema:marginOfError 0.024 ] ; time:hasEnd [ ischart:inMYA 66.0 ] .
ischart:Jurassic a skos:Concept ; gts:rank rank:Period ; skos:broader ischart:Mesozoic ;
    skos:prefLabel "Jurassic"@en , "侏罗 系"@zh ; skos:notation "J" ;
    time:hasBeginning [ ischart:inMYA 201.4 ; schema:marginOfError 0.2 ] ; time:hasEnd [ ischart:inMYA 143.1 ; schema:marginOfError 0.6 ] .
ischart:Cretaceous a skos:Concept ; gts:rank rank:Period ; skos:broader ischart:Mesozoic ; skos:prefLabel "Cretaceous"@en .
ischart:LowerCretaceous a skos:Concept ; gts:rank rank:Epoch ; skos:broader ischart:Cretaceous ;
    time:hasBeginning [ ischart:inMYA 143.1 ; schema:marginOfError 0.6 ] ; time:hasEnd [ ischart:inMYA 100.5 ; schema:marginOfError 0.1 ] .
"""

LITHOLOGY = """
PREFIX : <http://resource.geosciml.org/classifier/cgi/lithology/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
:sedimentary_rock a skos:Concept ; skos:prefLabel "sedimentary rock"@en ; skos:narrower :clastic_sandstone .
:clastic_sandstone a skos:Concept ; skos:broader :sedimentary_rock ; skos:prefLabel "sandstone"@en , "砂岩"@zh ;
    skos:definition "Clastic sedimentary rock of sand-sized grains."@en .
"""

CSV_HEADER = "time,latitude,longitude,depth,mag,magType,nst,gap,dmin,rms,net,id,updated,place,type,horizontalError,depthError,magError,magNst,status,locationSource,magSource"
EVENTS = [  # (time, latitude, longitude, depth, magnitude, id)
    ("2011-03-11T05:46:24.120Z", 38.297, 142.373, 29.0, 9.1, "tohoku"),
    ("1995-01-16T20:46:52.000Z", 34.583, 135.018, 21.9, 6.9, "kobe"),
    ("2016-04-15T16:25:06.000Z", 32.782, 130.726, 10.0, 7.0, "kumamoto"),
    ("1989-10-18T00:04:15.000Z", 37.040, -121.883, 17.2, 6.9, "loma-prieta"),
]


def write_csv(path: Path) -> None:
    rows = [CSV_HEADER] + [f'{t},{lat},{lon},{depth},{mag},mw,,,,,us,{id_},{t},"{id_}, somewhere",earthquake,,,,,reviewed,us,us' for t, lat, lon, depth, mag, id_ in EVENTS]
    path.write_text("\n".join(rows) + "\n")


def fixture_assets(base: Path) -> dict[str, Path]:
    """Small assets in the real files' shapes, written by the test; each is the operator's own copy."""
    folders = {asset: base / "fixtures" / asset for asset in ["ics-chart", "cgi-simple-lithology", "k2-rock-knowledge", "usgs-earthquakes-m45"]}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    (folders["ics-chart"] / "chart.ttl").write_text(CHART)
    (folders["cgi-simple-lithology"] / "simplelithology.ttl").write_text(LITHOLOGY)
    k2 = folders["k2-rock-knowledge"]
    (k2 / "k2_rock_type.json").write_text(json.dumps([{"rock_value": "Igneous rocks", "rock_name": "granite"}]))
    (k2 / "k2_rock_age.json").write_text("[]")
    (k2 / "k2_rock_detail.json").write_text(json.dumps([{"id": "granite", "question": "?", "answer": "A coarse-grained intrusive rock."}]))
    write_csv(folders["usgs-earthquakes-m45"] / "earthquake_1970_4.5mag.csv")
    return folders


@pytest.fixture(scope="session")
def compile_cache(tmp_path_factory) -> Path:
    """One compile cache for the servers of these tests, so each component is compiled once per run."""
    return tmp_path_factory.mktemp("provider-compile-cache")


def provider_site(tmp_path: Path, compile_cache: Path | None, *, assets: bool = True, extra: tuple[str, ...] = (), env: dict | None = None) -> Server:
    """A server with the first-party providers, fixture assets (unless `assets` is false), and
    `extra` test components ("hostile", "busy", "wrong-world") in a provider root, the hostile one on a 1 s deadline."""
    config = ['[provider_limits.hostile-provider]\ndeadline = "1s"\nmemory = "64MiB"\noutput = "1MiB"\n']
    if assets:
        config += [f'[assets.{asset}]\npath = "{folder}"\n' for asset, folder in fixture_assets(tmp_path).items()]
    (tmp_path / "geomap.toml").write_text("\n".join(config))
    root = tmp_path / "provider-root"
    root.mkdir(exist_ok=True)
    if "hostile" in extra:
        shutil.copy(WASM / "hostile_provider.wasm", root / "hostile_provider.wasm")
    if "busy" in extra:
        shutil.copy(WASM / "busy_provider.wasm", root / "busy_provider.wasm")
    if "wrong-world" in extra:
        shutil.copy(WASM / "wrong_world_provider.wasm", root / "wrong-world.wasm")
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(tmp_path / "geomap.toml"), "GEOMAP_PROVIDER_ROOTS": str(root), **(env or {})})
    if compile_cache is not None:
        (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
        (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    return server


def by_provider(result) -> dict:
    assert result.is_error is False, result
    return {answer["provider"]: answer for answer in result.structured_content["results"]}


async def test_a_lookup_asks_every_lookup_provider_and_tags_each_answer(tmp_path, compile_cache, era):
    server = provider_site(tmp_path, compile_cache)
    async with server.connect(era) as client:
        answers = by_provider(await client.call_tool("geomap_lookup", {"term": "Lower Cretaceous"}))
        chinese = by_provider(await client.call_tool("geomap_lookup", {"term": "侏罗系", "providers": ["ics-timescale"], "language": "zh"}))
        sandstone = by_provider(await client.call_tool("geomap_lookup", {"term": "Sandstone", "providers": ["cgi-lithology"]}))
        granite = by_provider(await client.call_tool("geomap_lookup", {"term": "granite", "providers": ["k2-rocks"]}))
    assert sorted(answers) == ["cgi-lithology", "ics-timescale", "k2-rocks"], "every enabled lookup provider, and only those"
    early = answers["ics-timescale"]["entries"][0]
    assert early["label"] == "Early Cretaceous", early
    assert (early["data"]["begin"]["ma"], early["data"]["begin"]["plus_minus_ma"], early["data"]["end"]["ma"]) == (143.1, 0.6, 100.5)
    assert [parent["label"] for parent in early["data"]["parents"]] == ["Cretaceous", "Mesozoic"]
    assert answers["k2-rocks"]["entries"] == [] and answers["k2-rocks"]["close_matches"], "nothing found is an answer with close matches, not a failure"
    assert chinese["ics-timescale"]["entries"][0]["label"] == "侏罗 系"
    assert chinese["ics-timescale"]["entries"][0]["data"]["english_name"] == "Jurassic"
    assert sandstone["cgi-lithology"]["entries"][0]["id"] == "http://resource.geosciml.org/classifier/cgi/lithology/clastic_sandstone"
    assert sandstone["cgi-lithology"]["entries"][0]["data"]["broader_chain"][0]["label"] == "sedimentary rock"
    assert granite["k2-rocks"]["entries"][0]["data"]["description"] == "A coarse-grained intrusive rock."


async def test_the_real_assets_answer_as_the_files_say(tmp_path, mirror, compile_cache, era):
    if not SHARED_ASSETS.is_dir():
        pytest.skip(f"SKIPPED LOUDLY: {SHARED_ASSETS} is absent, so the real assets cannot be served from the loopback mirror")
    for path in SHARED_ASSETS.iterdir():
        mirror.files[path.name] = path.read_bytes()
    server = provider_site(tmp_path, compile_cache, assets=False, env={"GEOMAP_ASSET_MIRROR": mirror.url})
    box = {"west": 128.0, "south": 30.0, "east": 146.0, "north": 46.0}
    async with server.connect(era) as client:
        prepared = await client.call_tool("geomap_prepare_knowledge", {})
        jurassic = by_provider(await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]}))
        lower = by_provider(await client.call_tool("geomap_lookup", {"term": "Lower Cretaceous", "providers": ["ics-timescale"]}))
        chinese = by_provider(await client.call_tool("geomap_lookup", {"term": "侏罗系", "providers": ["ics-timescale"]}))
        sandstone = by_provider(await client.call_tool("geomap_lookup", {"term": "sandstone", "providers": ["cgi-lithology"]}))
        granite = by_provider(await client.call_tool("geomap_lookup", {"term": "Granite", "providers": ["k2-rocks"]}))
        quakes = await client.call_tool("geomap_query_knowledge", {"area": box, "providers": ["usgs-seismicity"], "limit": 3})
        bundle_id = quakes.structured_content["bundle_id"]
        stored = await client.read_resource(f"geomap://bundles/{bundle_id}")
    report = prepared.structured_content
    assert sorted(report["ready_providers"]) == sorted(FIRST_PARTY), report
    assert "Now ready" in report["summary"] and "retry" in report["summary"]
    interval = jurassic["ics-timescale"]["entries"][0]["data"]
    assert (interval["begin"]["ma"], interval["begin"]["plus_minus_ma"], interval["end"]["ma"], interval["end"]["plus_minus_ma"]) == (201.4, 0.2, 143.1, 0.6)
    assert lower["ics-timescale"]["entries"][0]["label"] == "Early Cretaceous"
    assert chinese["ics-timescale"]["entries"][0]["id"].endswith("/Jurassic")
    assert sandstone["cgi-lithology"]["entries"][0]["id"].startswith("http://resource.geosciml.org/classifier/cgi/lithology/")
    rock_types = {row["rock_value"] for row in json.loads((SHARED_ASSETS / "k2_rock_type.json").read_text()) if row["rock_name"] == "granite"}
    assert granite["k2-rocks"]["entries"][0]["data"]["rock_type"] == sorted(rock_types), "as the K2 file says"
    # The same count, computed independently from the CSV.
    with open(SHARED_ASSETS / "earthquake_1970_4.5mag.csv", newline="") as handle:
        expected = sum(
            1
            for row in csv.DictReader(handle)
            if box["west"] <= float(row["longitude"]) <= box["east"] and box["south"] <= float(row["latitude"]) <= box["north"] and row["mag"] and float(row["mag"]) >= 4.5
        )
    assert quakes.is_error is False, quakes
    summary_item = quakes.structured_content["results"][0]["items"][0]
    assert summary_item["data"]["count"] == expected > 100
    assert json.loads(stored.contents[0].text) == quakes.structured_content, "the bundle resource is what the tool returned"


async def test_a_map_without_a_georeference_is_georef_required_then_its_area_is_asked(tmp_path, compile_cache, era):
    server = provider_site(tmp_path, compile_cache)
    png(server.map_root / "japan.png", 200, 160)
    async with server.connect(era) as client:
        map_id = (await client.call_tool("geomap_register_map", {"path": "japan.png"})).structured_content["map_id"]
        early = await client.call_tool("geomap_query_knowledge", {"map_id": map_id})
        envelope = assert_envelope(early, "georef_required", server, tool="geomap_query_knowledge")
        georef = await client.call_tool("geomap_georeference", {"map_id": map_id, "crs": "EPSG:4326", "bounds": {"west": 128, "south": 30, "east": 146, "north": 46}})
        revision_id = georef.structured_content["revision_id"]
        first = await client.call_tool("geomap_query_knowledge", {"map_id": map_id, "provider_options": {"usgs-seismicity": {"min_magnitude": 6.95}}})
        second = await client.call_tool("geomap_query_knowledge", {"map_id": map_id})
    assert envelope["details"] == {"map_id": map_id}
    assert "geomap_georeference" in envelope["recovery_hints"][0]
    assert first.is_error is False, first
    bundle = first.structured_content
    assert (bundle["map_id"], bundle["revision_id"]) == (map_id, revision_id)
    assert bundle["area"] == {"west": 128.0, "south": 30.0, "east": 146.0, "north": 46.0}
    assert [answer["provider"] for answer in bundle["results"]] == ["usgs-seismicity"]
    assert bundle["results"][0]["items"][0]["data"]["count"] == 2, "tohoku and kumamoto are at least M6.95 in the box; kobe is not"
    assert second.structured_content["results"][0]["items"][0]["data"]["count"] == 3
    assert bundle["bundle_id"] != second.structured_content["bundle_id"], "every call writes a new bundle"
    assert any(link.uri == f"geomap://bundles/{bundle['bundle_id']}" for link in first.content if link.type == "resource_link")
    connection = sqlite3.connect(f"file:{server.database}?mode=ro", uri=True)
    rows = connection.execute("SELECT bundles.bundle_id, maps.map_id, bundles.revision_id FROM bundles JOIN maps ON bundles.map = maps.id ORDER BY bundles.id").fetchall()
    connection.close()
    assert rows == [(bundle["bundle_id"], map_id, revision_id), (second.structured_content["bundle_id"], map_id, revision_id)]


async def test_every_unknown_provider_reason_is_told_apart_without_hints(tmp_path, compile_cache, era):
    enabled = "ics-timescale,cgi-lithology,usgs-seismicity,hostile-provider,wrong-world"
    server = provider_site(tmp_path, compile_cache, extra=("hostile", "wrong-world"), env={"GEOMAP_PROVIDERS": enabled})
    cases = [
        ("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescal"]}, "not_found"),
        ("geomap_lookup", {"term": "granite", "providers": ["k2-rocks"]}, "not_enabled"),
        ("geomap_lookup", {"term": "Jurassic", "providers": ["usgs-seismicity"]}, "cannot_serve"),
        ("geomap_query_knowledge", {"providers": ["usgs-seismicity"]}, "cannot_serve"),
        ("geomap_query_knowledge", {"area": {"west": 0, "south": 0, "east": 1, "north": 1}, "provider_options": {"usgs-seismicity": {"min_magnitude": "big"}}}, "invalid_options"),
        ("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"], "provider_options": {"ics-timescale": {"rank": "Century"}}}, "invalid_options"),
        ("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"], "provider_options": {"ics-timescale": {"etc": "x"}}}, "invalid_options"),
        ("geomap_lookup", {"term": "Jurassic", "providers": ["wrong-world"]}, "incompatible"),
        ("geomap_lookup", {"term": "panic", "providers": ["hostile-provider"]}, "runtime_failure"),
    ]
    envelopes = []
    async with server.connect(era) as client:
        for tool, arguments, reason in cases:
            envelope = assert_envelope(await client.call_tool(tool, arguments), "unknown_provider", server, tool=tool, hints=False)
            assert envelope["details"]["reason"] == reason, (arguments, envelope)
            assert "recovery_hints" not in envelope
            envelopes.append(envelope)
        healthy = await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})
    assert healthy.is_error is False, "the server is fine after every failure"
    not_found, not_enabled, cannot_serve, needs_area, bad_option, bad_enum, path_like, incompatible, crashed = envelopes
    assert not_found["details"]["suggestions"][0] == "ics-timescale" and "ics-timescale" in not_found["message"]
    assert "GEOMAP_PROVIDERS" in not_enabled["message"] and "not enabled" in not_enabled["message"]
    assert "geomap_query_knowledge" in cannot_serve["message"]
    assert "needs an area" in needs_area["message"]
    assert bad_option["details"]["field"] == "/provider_options/usgs-seismicity/min_magnitude"
    assert bad_enum["details"]["field"] == "/provider_options/ics-timescale/rank"
    assert path_like["details"]["option"] == "/etc", "a JSON pointer that looks like a path is not scrubbed"
    assert path_like["details"]["field"] == "/provider_options/ics-timescale/etc"
    assert "@0.2.0" in incompatible["message"] and "operator" in incompatible["message"]
    assert crashed["details"]["failure"] == "trap" and crashed["trace_id"] in crashed["message"]
    assert not any(str(tmp_path) in json.dumps(envelope) for envelope in envelopes), "no server path leaves"


async def test_hostile_providers_are_stopped_within_their_deadline_and_the_server_lives_on(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache, extra=("hostile",))
    expected = {"loop": "timeout", "sleep": "timeout", "memory": "memory_limit", "panic": "trap", "recurse": "trap", "huge": "output_too_large"}
    async with server.connect() as client:
        for term, failure in expected.items():
            started = time.monotonic()
            result = await client.call_tool("geomap_lookup", {"term": term, "providers": ["hostile-provider"]})
            elapsed = time.monotonic() - started
            envelope = assert_envelope(result, "unknown_provider", server, hints=False)
            assert (envelope["details"]["reason"], envelope["details"]["failure"]) == ("runtime_failure", failure), term
            assert elapsed < 3.0, f"{term} took {elapsed:.1f}s against a 1 s deadline"
            healthy = await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})
            assert healthy.is_error is False, f"after {term}"
        for probe in ["passwd", "escape", "socket", "env"]:
            answer = by_provider(await client.call_tool("geomap_lookup", {"term": probe, "providers": ["hostile-provider"]}))
            entry = answer["hostile-provider"]["entries"][0]
            assert entry["data"]["got"] is False, (probe, entry)
        assert len(child_servers()) == 1
    crash_line = next(line for line in server.log() if "provider hostile-provider failed (trap)" in line)
    assert "panics on purpose" in crash_line, "the operator's log has the provider's own panic message"


async def test_the_providers_of_one_lookup_run_at_once(tmp_path, compile_cache, era):
    """Two providers that each compute for 700 ms without yielding answer one lookup in about 700 ms,
    not 1400: each runs on a thread of its own. (Each stops at 700 ms of wall time, so even one free
    core gives the same answer: only running them one after the other doubles it.)"""
    server = provider_site(tmp_path, compile_cache, extra=("hostile", "busy"))
    both = ["busy-provider", "hostile-provider"]
    async with server.connect(era) as client:
        warm = await client.call_tool("geomap_lookup", {"term": "busy:0", "providers": both})  # compiled and instantiated once
        started = time.monotonic()
        busy = await client.call_tool("geomap_lookup", {"term": "busy:700", "providers": both})
        elapsed = time.monotonic() - started
    assert sorted(by_provider(warm)) == both
    answers = by_provider(busy)
    assert [answers[name]["entries"][0]["summary"] for name in both] == ["busy 700 ms", "busy 700 ms"]
    assert elapsed < 1.3, f"{elapsed:.2f} s: the two providers' 700 ms of work ran one after the other"


async def test_one_failing_provider_is_a_warning_when_another_answers(tmp_path, compile_cache, era):
    server = provider_site(tmp_path, compile_cache, extra=("hostile",))
    async with server.connect(era) as client:
        result = await client.call_tool("geomap_lookup", {"term": "panic", "providers": ["k2-rocks", "hostile-provider"]})
        missing = await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale", "no-such-provider"]})
    assert result.is_error is False, result
    assert [answer["provider"] for answer in result.structured_content["results"]] == ["k2-rocks"]
    [warning] = result.structured_content["warnings"]
    assert (warning["provider"], warning["code"], warning["reason"]) == ("hostile-provider", "unknown_provider", "runtime_failure")
    assert "crashed" in warning["message"]
    [warning] = missing.structured_content["warnings"]
    assert (warning["provider"], warning["reason"]) == ("no-such-provider", "not_found")


@pytest.mark.parametrize("preparation", [True, False])
async def test_a_missing_asset_says_who_can_install_it(tmp_path, compile_cache, era, preparation):
    env = {} if preparation else {"GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION": "false"}
    server = provider_site(tmp_path, compile_cache, assets=False, env=env)
    async with server.connect(era) as client:
        result = await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})
        everyone = await client.call_tool("geomap_lookup", {"term": "Jurassic"})
    envelope = assert_envelope(result, "missing_knowledge_asset", server, tool="geomap_lookup")
    next_call = envelope["details"].pop("next_call", None)
    assert envelope["details"] == {"provider": "ics-timescale", "missing_assets": ["ics-chart"], "download_bytes": 652009}
    # The download is the next call only where a tool here can make it, after the user agrees.
    assert next_call == ({"tool": "geomap_prepare_knowledge", "arguments": {"assets": ["ics-chart"]}, "ask_user": True} if preparation else None), next_call
    assert envelope["cause"] == "asset_not_installed"
    if preparation:
        assert envelope["recovery_hints"][0] == (
            'Ask the user whether to download ics-chart (0.7 MB); after they agree, call geomap_prepare_knowledge with {"assets": ["ics-chart"]}, then call geomap_lookup again.'
        )
    else:
        assert envelope["recovery_hints"][0] == (
            f'Ask the operator to run `stratigraphic-amenity-assets ics-chart --root "{server.data_root}"` in the server\'s environment, then call geomap_lookup again.'
        )
    assert envelope["recovery_hints"][-1].startswith("Do not run installer commands in your own shell")
    assert envelope["recovery_hints"][0] in envelope["message"], "the message repeats the remedy"
    # With no providers named, every lookup provider fails the same way: the call fails with the first.
    assert assert_envelope(everyone, "missing_knowledge_asset", server)["details"]["provider"] == "ics-timescale"


async def test_arguments_that_do_not_fit_are_invalid_arguments(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache)
    cases = [
        ("geomap_query_knowledge", {"map_id": "map_x", "area": {"west": 0, "south": 0, "east": 1, "north": 1}}, "/area"),
        ("geomap_query_knowledge", {"area": {"west": 200, "south": 0, "east": 1, "north": 1}}, "/area/west"),
        ("geomap_query_knowledge", {"area": {"west": 0, "south": 5, "east": 1, "north": 1}}, "/area/north"),
        ("geomap_lookup", {"term": "  "}, "/term"),
        ("geomap_lookup", {"term": "Jurassic", "limit": 0}, "/limit"),
        ("geomap_lookup", {"term": "Jurassic", "providers": []}, "/providers"),
        ("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"], "provider_options": {"k2-rocks": {}}}, "/provider_options/k2-rocks"),
        ("geomap_lookup", {"term": "Jurassic", "provider_options": {"ics-timescale": 3}}, "/provider_options/ics-timescale"),
    ]
    async with server.connect() as client:
        for tool, arguments, field in cases:
            envelope = assert_envelope(await client.call_tool(tool, arguments), "invalid_arguments", server, tool=tool)
            assert envelope["details"]["field"] == field, (arguments, envelope)


async def test_capabilities_list_every_provider_with_its_state_and_limits(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache, extra=("hostile", "wrong-world"), env={"GEOMAP_PROVIDERS": "ics-timescale,cgi-lithology,usgs-seismicity,hostile-provider,wrong-world"})
    (tmp_path / "fixtures" / "usgs-earthquakes-m45" / "earthquake_1970_4.5mag.csv").unlink()
    shutil.rmtree(tmp_path / "fixtures" / "cgi-simple-lithology")
    async with server.connect() as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    providers = {provider["name"]: provider for provider in caps["providers"]}
    assert list(providers) == [*FIRST_PARTY, "hostile-provider", "wrong-world"]
    ics = providers["ics-timescale"]
    assert (ics["enabled"], ics["ready"], ics["kinds"], ics["origin"], ics["missing_assets"]) == (True, True, ["lookup"], {"kind": "first_party"}, [])
    assert ics["options_schema"]["properties"]["rank"]["enum"][0] == "Super-Eon"
    assert (providers["k2-rocks"]["enabled"], providers["k2-rocks"]["ready"]) == (False, False)
    usgs = providers["usgs-seismicity"]
    assert (usgs["kinds"], usgs["needs_area"], usgs["ready"]) == (["knowledge"], True, True), "an operator's own folder counts as present"
    assert (providers["cgi-lithology"]["ready"], providers["cgi-lithology"]["missing_assets"]) == (True, []), "the custom folder is there, if empty"
    hostile = providers["hostile-provider"]
    assert hostile["origin"] == {"kind": "provider_root", "index": 0}
    assert hostile["limits"] == {"deadline_ms": 1000, "memory_bytes": 64 << 20, "output_bytes": 1 << 20}
    assert providers["wrong-world"]["problem"].startswith("incompatible") and providers["wrong-world"]["ready"] is False
    tools = {tool["name"]: tool for tool in caps["tools"]}
    assert tools["geomap_lookup"]["ready"] and tools["geomap_query_knowledge"]["ready"]


async def test_no_ready_knowledge_provider_shows_in_capabilities(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache, assets=False)
    async with server.connect() as client:
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    tools = {tool["name"]: tool for tool in caps["tools"]}
    assert (tools["geomap_query_knowledge"]["ready"], tools["geomap_query_knowledge"]["unavailable_code"]) == (False, "missing_knowledge_asset")
    assert {p["name"]: p["missing_assets"] for p in caps["providers"]}["usgs-seismicity"] == ["usgs-earthquakes-m45"]


async def test_compiled_components_are_cached_under_the_data_root(tmp_path):
    server = provider_site(tmp_path, None)
    async with server.connect() as client:
        assert (await client.call_tool("geomap_lookup", {"term": "Jurassic", "providers": ["ics-timescale"]})).is_error is False
    cached = sorted(path.name for path in (server.data_root / "cache" / "providers").iterdir())
    assert len([name for name in cached if name.endswith(".cwasm")]) == len(FIRST_PARTY), cached
    assert len([name for name in cached if name.endswith(".cwasm.sha256")]) == len(FIRST_PARTY), cached


def test_the_cli_lists_providers_and_checks_a_component(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache, extra=("wrong-world",), env={"GEOMAP_PROVIDERS": "ics-timescale,wrong-world,absent-one"})
    listed = run_binary(server, "providers")
    assert listed.returncode == 1, "a provider that cannot load, or is enabled but absent, is a problem"
    lines = listed.stdout
    assert "ics-timescale 0.1.0, serves lookup; ready" in lines
    assert "k2-rocks" in lines and "found, not enabled" in lines
    assert "NOT LOADABLE: it exports geomap:provider/provider@0.2.0" in lines
    assert "absent-one" in lines and "NOT FOUND" in lines
    good = run_binary(server, "providers", "check", str(WASM / "usgs_seismicity.wasm"))
    assert good.returncode == 0 and "ok: usgs-seismicity" in good.stdout and "knowledge needs an area" in good.stdout
    bad = run_binary(server, "providers", "check", str(WASM / "wrong_world_provider.wasm"))
    assert bad.returncode == 1 and "@0.2.0" in bad.stderr
    renamed = tmp_path / "renamed.wasm"
    shutil.copy(WASM / "k2_rocks.wasm", renamed)
    mismatch = run_binary(server, "providers", "check", str(renamed))
    assert mismatch.returncode == 0, "a component under another name checks, and is told the name it loads under"
    assert f"copy it to {tmp_path / 'provider-root' / 'k2-rocks.wasm'}" in mismatch.stdout
    assert "under its present name, renamed.wasm, the server would not load it" in mismatch.stdout
    shutil.copy(WASM / "k2_rocks.wasm", tmp_path / "provider-root" / "renamed.wasm")
    refused = run_binary(server, "providers", env={"GEOMAP_PROVIDERS": "renamed"}).stdout
    assert 'it calls itself "k2-rocks", but its file names it "renamed"' in refused, "the server itself still refuses the misnamed file"


async def test_a_symlink_out_of_a_provider_root_is_not_loaded(tmp_path, compile_cache):
    server = provider_site(tmp_path, compile_cache)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(WASM / "hostile_provider.wasm", outside / "hostile_provider.wasm")
    (tmp_path / "provider-root" / "hostile_provider.wasm").symlink_to(outside / "hostile_provider.wasm")
    async with server.connect() as client:
        result = await client.call_tool("geomap_lookup", {"term": "healthy", "providers": ["hostile-provider"]})
    envelope = assert_envelope(result, "unknown_provider", server, hints=False)
    assert (envelope["details"]["reason"], "cannot be read" in envelope["message"]) == ("incompatible", True)


async def test_every_result_schema_validates_against_the_tools_output_schema(tmp_path, compile_cache):
    import jsonschema

    server = provider_site(tmp_path, compile_cache)
    async with server.connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        lookup = await client.call_tool("geomap_lookup", {"term": "Jurassic"})
        query = await client.call_tool("geomap_query_knowledge", {"area": {"west": 128, "south": 30, "east": 146, "north": 46}})
        failed = await client.call_tool("geomap_lookup", {"term": "x", "providers": ["nope"]})
    for name, result in [("geomap_lookup", lookup), ("geomap_query_knowledge", query), ("geomap_lookup", failed)]:
        jsonschema.validate(result.structured_content, tools[name].output_schema)
    assert tools["geomap_query_knowledge"].annotations.idempotent_hint is False
    assert tools["geomap_lookup"].annotations.read_only_hint is True

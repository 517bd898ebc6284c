"""Ages at the precision the words state, end to end: geomap_lookup asks ics-timescale, on the real ICS
chart as the operator's own copy, for an age with an informal modifier; the answer is the chart interval the
words mean, with the words kept beside it."""

import pytest

from conftest import Server
from test_layout_words import knowledge_config
from test_providers import by_provider, compile_cache  # noqa: F401 (session fixture)

pytestmark = pytest.mark.anyio


async def test_lower_permian_is_the_cisuralian_with_its_words_kept(tmp_path, compile_cache, era):  # noqa: F811
    config = knowledge_config(tmp_path, lithology=False)  # skips, naming the chart, when ../shared/assets lacks it
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(config)})
    (server.data_root / "cache").mkdir(parents=True, exist_ok=True)
    (server.data_root / "cache" / "providers").symlink_to(compile_cache)
    async with server.connect(era) as client:
        lower = by_provider(await client.call_tool("geomap_lookup", {"term": "Lower Permian", "providers": ["ics-timescale"]}))
        middle = by_provider(await client.call_tool("geomap_lookup", {"term": "middle Miocene", "providers": ["ics-timescale"]}))
    cisuralian = lower["ics-timescale"]["entries"][0]
    assert (cisuralian["label"], cisuralian["id"]) == ("Cisuralian", "http://resource.geosciml.org/classifier/ics/ischart/Cisuralian"), cisuralian
    # The chart file (ICS 2024-12) ends the Cisuralian at 274.4 Ma (earlier charts: 273.01).
    assert (cisuralian["data"]["begin"]["ma"], cisuralian["data"]["end"]["ma"]) == (298.9, 274.4)
    informal = cisuralian["data"]["informal"]
    assert informal["term"] == "Lower Permian", "the words asked are kept beside the interval"
    assert (informal["part"], informal["of"]["label"], [span["label"] for span in informal["spans"]]) == ("early", "Permian", ["Cisuralian"])
    assert '"Lower Permian" is informal' in cisuralian["summary"]
    span = middle["ics-timescale"]["entries"][0]
    assert (span["label"], span["data"]["begin"]["ma"], span["data"]["end"]["ma"]) == ("Langhian–Serravallian", 15.98, 11.63)
    assert [part["label"] for part in span["data"]["informal"]["spans"]] == ["Langhian", "Serravallian"]

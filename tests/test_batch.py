"""`stratigraphic-amenity batch`: an archive's manifest in shards over one registry, a shard killed and run
again, every map processed once per step. Runs once, in the stdio pass (it starts no MCP server)."""

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import BINARY, TRANSPORT, Server, png

pytestmark = pytest.mark.skipif(TRANSPORT == "http", reason="runs once per registry backend, in the stdio passes (it serves nothing)")

MAPS = 40
README = Path(__file__).resolve().parents[1] / "README.md"


def documented_codes() -> set[str]:
    rows = re.findall(r"^\| `([a-z_]+)` \|", README.read_text(), re.MULTILINE)
    return {name for name in rows if not name.startswith("geomap_")}


def batch(server: Server, *args: str, env: dict | None = None) -> subprocess.Popen:
    environment = {"PATH": os.environ["PATH"], "HOME": str(server.base), **server.env, **(env or {})}
    return subprocess.Popen([BINARY, "batch", *args], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)


def lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_two_shards_one_killed_and_run_again_process_every_map_once_per_step(server):
    for index in range(MAPS):
        png(server.map_root / f"sheet{index:02}.png", 900, 700 + index, noise=True)
    manifest = server.base / "manifest.txt"
    manifest.write_text("# the archive\n" + "\n".join(f"sheet{index:02}.png" for index in range(MAPS)) + "\n\n")
    steps = ["--steps", "register,georef"]

    survivor = batch(server, str(manifest), "--shard", "2", *steps, env={"JOB_COMPLETION_INDEX": "0"})  # as a Kubernetes Indexed Job runs it
    killed = batch(server, str(manifest), "--shard", "1/2", *steps)
    first = killed.stdout.readline()  # one step done: the shard is under way
    killed.send_signal(signal.SIGKILL)
    before_kill = first + killed.stdout.read()
    killed.wait()
    rerun = batch(server, str(manifest), "--shard", "1/2", *steps)
    rerun_out, rerun_err = rerun.communicate(timeout=600)
    survivor_out, survivor_err = survivor.communicate(timeout=600)
    assert (survivor.returncode, rerun.returncode) == (0, 0), survivor_err + rerun_err
    assert killed.returncode == -signal.SIGKILL

    runs = {"survivor": lines(survivor_out), "killed": lines(before_kill), "rerun": lines(rerun_out)}
    every = [line for run in runs.values() for line in run]
    assert {line["map"] for line in runs["survivor"]} == {f"sheet{index:02}.png" for index in range(0, MAPS, 2)}, "shard 0 of 2: every other map"
    assert {line["map"] for line in runs["rerun"]} == {f"sheet{index:02}.png" for index in range(1, MAPS, 2)}, "shard 1 of 2: the others"
    assert len(runs["killed"]) < MAPS, "killed part way"
    registered = [line["map"] for line in every if line["step"] == "register" and line["outcome"] == "ok"]
    assert len(registered) == len(set(registered)), "no map registered twice"
    # A kill between a registration's commit and its line leaves that map registered without an "ok":
    # the run again finds it done. Every map is registered, once.
    again = {line["map"] for line in runs["rerun"] if line["step"] == "register" and line["outcome"] == "done_before"}
    assert {line["map"] for line in runs["killed"] if line["step"] == "register" and line["outcome"] == "ok"} <= again, "what the killed run did is not done again"
    assert set(registered) | again == {f"sheet{index:02}.png" for index in range(MAPS)}
    assert len(server.registry()["maps"]) == MAPS
    for line in every:
        assert set(line) == {"map", "map_id", "step", "outcome", "duration_ms", "trace_id"} and re.fullmatch(r"[0-9a-f]{32}", line["trace_id"]), line
        assert line["outcome"] in {"ok", "done_before"} | documented_codes(), line
    # Noise has no coordinate labels, and without the text reader's models the tool says so first:
    # either way its own code, the same for every map.
    georeferenced = [line for line in runs["survivor"] if line["step"] == "georef"]
    [code] = {line["outcome"] for line in georeferenced}
    assert code in {"too_few_labels", "missing_extra"} and len(georeferenced) == MAPS // 2, georeferenced
    assert "batch: shard 0/2: 20 of the manifest's 40 maps, steps register,georef" in survivor_err
    traced = {line.split("trace_id=")[1].split()[0] for line in survivor_err.splitlines() if "event=tool_call" in line and "tool=geomap_georeference" in line and f"outcome={code}" in line}
    assert traced == {line["trace_id"] for line in georeferenced}, "each step has its log line under its trace ID"


def test_bad_arguments_and_a_missing_manifest_say_what_is_wrong(server):
    wrong = batch(server, "manifest.txt", "--shard", "2/2")
    _, err = wrong.communicate(timeout=60)
    assert wrong.returncode == 2 and "the index must be below the count" in err
    missing = batch(server, str(server.base / "absent.txt"))
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 2 and "cannot read the manifest" in err

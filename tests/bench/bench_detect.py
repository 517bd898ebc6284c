"""geomap_process_image against a straightforward Python pipeline (Pillow, numpy, onnxruntime) doing the
same steps on the same models and the same 10000×8000 scan, side by side in one run (a benchmark, not a
test). Run with ./dev bench, which installs onnxruntime into the test venv.

Prints: the medians end to end and their ratio (goal: the server at least 2× faster); the share of the
server's time spent outside model inference (goal: at most 15 %; inference measured with onnxruntime on
the same models and threads); the server's peak memory against the decoded image (goal: at most 1.3× plus
the models, whose running cost is measured as this process's growth from creating and running both sessions). The models have YOLOv10's contract and about 7.7 GFLOPs at 640 (YOLOv10-n: 6–9).
"""

import asyncio
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import Mirror, Server, child_servers  # noqa: E402
from detector_models import Letterbox, costly_detector  # noqa: E402
from test_detect import CACHE, WHEEL  # noqa: E402

from harness import status_mib  # noqa: E402

WIDTH, HEIGHT = 10_000, 8_000
MAIN_MAP, LEGEND = (0, 0, 7000, 8000), (7500, 1000, 9500, 6000)
SWATCHES = [(40, 100 + 400 * i, 240, 300 + 400 * i) for i in range(10)]
TEXTS = [(300, 110 + 400 * i, 1900, 290 + 400 * i) for i in range(10)]
ROUNDS = 3


def scan(path: Path) -> Path:
    image = Image.new("RGB", (WIDTH, HEIGHT), (245, 242, 230))
    draw = ImageDraw.Draw(image)
    for i in range(40):
        draw.rectangle((i * 170, (i * 397) % 7000, i * 170 + 900, (i * 397) % 7000 + 1000), fill=(100 + i * 3, 180 - i * 2, 120 + i))
    lx, ly = LEGEND[:2]
    for i, (x0, y0, x1, y1) in enumerate(SWATCHES):
        draw.rectangle((lx + x0, ly + y0, lx + x1, ly + y1), fill=(20 * i, 200 - 15 * i, 90), outline=(0, 0, 0), width=4)
    image.save(path, compress_level=1)
    return path


def make_models(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    whole = Letterbox(WIDTH, HEIGHT)
    crop = Letterbox(LEGEND[2] - LEGEND[0], LEGEND[3] - LEGEND[1])
    return {
        "component": costly_detector(folder / "component.onnx", [[*whole.to_input(*MAIN_MAP), 0.9, 1], [*whole.to_input(*LEGEND), 0.8, 2]], seed=1),
        "legend": costly_detector(
            folder / "legend.onnx", [[*crop.to_input(*b), 0.9, 0] for b in SWATCHES] + [[*crop.to_input(*b), 0.8, 1] for b in TEXTS], seed=2
        ),
    }


def interpolate(pixels: np.ndarray, width: int, height: int) -> np.ndarray:
    """Bilinear interpolation between the four nearest pixels, as OpenCV's INTER_LINEAR (PEACE's letterbox)."""
    h, w = pixels.shape[:2]
    xs = np.clip((np.arange(width) + 0.5) * (w / width) - 0.5, 0, w - 1)
    ys = np.clip((np.arange(height) + 0.5) * (h / height) - 0.5, 0, h - 1)
    x0, y0 = np.floor(xs).astype(np.intp), np.floor(ys).astype(np.intp)
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    fx, fy = (xs - x0)[None, :, None], (ys - y0)[:, None, None]
    top, bottom = pixels[y0].astype(np.float32), pixels[y1].astype(np.float32)
    upper = top[:, x0] * (1 - fx) + top[:, x1] * fx
    lower = bottom[:, x0] * (1 - fx) + bottom[:, x1] * fx
    return np.rint(upper * (1 - fy) + lower * fy)


def letterbox(pixels: np.ndarray, size: int = 640) -> tuple[np.ndarray, float, int, int]:
    h, w = pixels.shape[:2]
    gain = min(size / h, size / w)
    inner = (round(w * gain), round(h * gain))
    pad_x, pad_y = round((size - inner[0]) / 2 - 0.1), round((size - inner[1]) / 2 - 0.1)
    canvas = np.full((size, size, 3), 114.0, dtype=np.float32)
    canvas[pad_y : pad_y + inner[1], pad_x : pad_x + inner[0]] = interpolate(pixels, *inner)
    tensor = (canvas / 255.0).transpose(2, 0, 1)[None]
    return np.ascontiguousarray(tensor), gain, pad_x, pad_y


def boxes(session, pixels: np.ndarray, one_box: set[int]) -> list[tuple[int, list[float], float]]:
    tensor, gain, pad_x, pad_y = letterbox(pixels)
    rows = session.run(None, {"images": tensor})[0][0]
    h, w = pixels.shape[:2]
    found = []
    for x0, y0, x1, y1, score, cls in rows[:300]:
        if score < 0.25:
            continue
        b = [min(max((x0 - pad_x) / gain, 0), w), min(max((y0 - pad_y) / gain, 0), h), min(max((x1 - pad_x) / gain, 0), w), min(max((y1 - pad_y) / gain, 0), h)]
        found.append((int(round(cls)), [float(v) for v in b], float(score)))
    found.sort(key=lambda d: -d[2])

    def iou(a, b):
        iw, ih = max(0, min(a[2], b[2]) - max(a[0], b[0])), max(0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = iw * ih
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0

    for cls in one_box:
        members = [d for d in found if d[0] == cls]
        if len(members) > 1:
            others = [d for d in found if d[0] != cls]
            best = min(members, key=lambda d: max((iou(d[1], o[1]) for o in others), default=0))
            found = [d for d in found if d[0] != cls or d is best]
    kept = []
    for d in found:
        if all(iou(k[1], d[1]) <= 0.8 for k in kept):
            kept.append(d)
    return kept


def python_pipeline(path: Path, components, legend, out: Path) -> float:
    started = time.perf_counter()
    image = Image.open(path).convert("RGB")
    pixels = np.asarray(image)
    found = boxes(components, pixels, {0, 1, 2, 3})
    entries = []
    for cls, b, _ in found:
        if cls == 2:
            x0, y0, x1, y1 = (int(v) for v in b)
            inside = boxes(legend, pixels[y0:y1, x0:x1], set())
            for _, s, score in [d for d in inside if d[0] == 0]:
                region = pixels[y0 + int(s[1]) : y0 + int(s[3]), x0 + int(s[0]) : x0 + int(s[2])].reshape(-1, 3)
                region = region[region.max(axis=1) >= 48]
                colour = [int(v) for v in np.median(region, axis=0)] if len(region) else [0, 0, 0]
                entries.append({"swatch": s, "colour": colour, "score": score})
    out.mkdir(parents=True, exist_ok=True)
    for index, (cls, b, _) in enumerate(found):
        crop = image.crop(tuple(int(v) for v in b))
        scale = min(1.0, 2048 / max(crop.size))  # the server's crops are at most 2048 pixels a side
        if scale < 1:
            crop = crop.resize((round(crop.width * scale), round(crop.height * scale)), Image.BILINEAR)
        crop.save(out / f"component-{index}.png", compress_level=1)
    scale = 1600 / max(image.size)
    preview = image.resize((round(image.width * scale), round(image.height * scale)), Image.BILINEAR)
    draw = ImageDraw.Draw(preview)
    for _, b, _ in found:
        draw.rectangle([v * scale for v in b], outline=(255, 0, 0), width=3)
    preview.save(out / "preview.png")
    (out / "layout.json").write_text(json.dumps({"components": found, "legend": entries}))
    return time.perf_counter() - started


def peak_rss_mib(pid: int) -> float:
    return status_mib(pid, "VmHWM")


async def server_runs(base: Path, files: dict[str, Path], scan_path: Path) -> tuple[list[float], list[dict], float, float]:
    mirror = Mirror()
    try:
        mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
        lines = []
        for asset, key in [("peace-component-weights", "component"), ("peace-legend-weights", "legend")]:
            data = files[key].read_bytes()
            mirror.files[files[key].name] = data
            lines.append(f'[assets.{asset}.sources."model.onnx"]\nurl = "{mirror.url}/{files[key].name}"\nsize = {len(data)}\nsha256 = "{hashlib.sha256(data).hexdigest()}"\n')
        base.mkdir(parents=True, exist_ok=True)
        (base / "geomap.toml").write_text("\n".join(lines))
        server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url, "GEOMAP_CONFIG": str(base / "geomap.toml")})
        shutil.copy(scan_path, server.map_root / "scan.png")
        async with server.connect() as client:
            map_id = (await client.call_tool("geomap_register_map", {"path": "scan.png"})).structured_content["map_id"]
            assert (await client.call_tool("geomap_prepare_detectors", {})).structured_content["detectors_ready"]
            [pid] = child_servers()
            before = peak_rss_mib(pid)
            first = await client.call_tool("geomap_process_image", {"map_id": map_id})  # loads the detectors
            assert first.is_error is False, first
            seconds, timings = [], []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                result = await client.call_tool("geomap_process_image", {"map_id": map_id})
                seconds.append(time.perf_counter() - started)
                timings.append(result.structured_content["timings"])
            peak = peak_rss_mib(pid)
        return seconds, timings, before, peak
    finally:
        mirror.close()


def main() -> None:
    if not (CACHE / WHEEL).exists():
        sys.exit(f"{CACHE / WHEEL} is missing: run the tests once (they fetch it with pip)")
    base = Path(tempfile.mkdtemp(prefix="bench-detect-"))
    try:
        files = make_models(base / "models")
        scan_path = scan(base / "scan.png")
        threads = os.cpu_count() or 1
        without_models = status_mib(os.getpid(), "VmRSS")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        components = onnxruntime.InferenceSession(str(files["component"]), options, providers=["CPUExecutionProvider"])
        legend = onnxruntime.InferenceSession(str(files["legend"]), options, providers=["CPUExecutionProvider"])
        tensor = np.zeros((1, 3, 640, 640), dtype=np.float32)
        inference = []
        for _ in range(5):
            started = time.perf_counter()
            components.run(None, {"images": tensor})
            legend.run(None, {"images": tensor})
            inference.append(time.perf_counter() - started)
        # What the two models cost at run time (weights, ONNX Runtime's arenas after a run), measured here.
        models_running = status_mib(os.getpid(), "VmRSS") - without_models
        seconds, timings, before, peak = asyncio.run(server_runs(base / "server", files, scan_path))
        python = [python_pipeline(scan_path, components, legend, base / f"python-{i}") for i in range(ROUNDS)]
        med = statistics.median
        print(f"scan {WIDTH}x{HEIGHT}, models of about 7.7 GFLOPs each, {threads} threads, medians of {ROUNDS}")
        print(f"geomap_process_image end to end: {med(seconds):.2f} s; Python pipeline: {med(python):.2f} s; server is {med(python) / med(seconds):.2f}x faster (goal >= 2x)")
        stages = {key: med(t[key] for t in timings) for key in timings[0]}
        print("server stages (ms): " + ", ".join(f"{key} {value:.0f}" for key, value in stages.items()))
        share = 1 - med(inference) / med(seconds)
        print(f"inference alone (both models, onnxruntime): {med(inference) * 1e3:.0f} ms; share of the server's time outside inference: {share:.0%} (goal <= 15%)")
        decoded = WIDTH * HEIGHT * 3 / 2**20
        models = sum(p.stat().st_size for p in files.values()) / 2**20
        print(
            f"server peak RSS {peak:.0f} MiB (before processing {before:.0f} MiB) against the decoded image {decoded:.0f} MiB; "
            f"the models: {models:.1f} MiB on disk, {models_running:.0f} MiB running in onnxruntime (weights and arenas, measured in this process)"
        )
        print(
            f"growth {(peak - before) / decoded:.2f}x the decoded image; without the running models {(peak - before - models_running) / decoded:.2f}x (goal <= 1.3x plus the models)"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The map's structure through the official client: geomap_extract_units on the drawn structure map
(tests/unit_maps.py: faults solid and dashed, a thrust with teeth, an anticline and a syncline, 40
strike-and-dip symbols with their dips, four vertical and four horizontal beds, under contours, contacts, codes, a slight skew and JPEG),
scored the TA1 way per line type (buffer F1 against the lines as drawn) and for the attitudes (F1
within a symbol's radius, then the dip directions within 10° and the dips read exactly), with its
explanation and with the explanation cut off, and at half to three times its size (the spread of
each score across the sizes, and the scale each extraction reports); then the whole extraction's time (units, lines,
points, GeoPackage written) on the drawn map at 10000 pixels wide and, when ../shared/assets has it,
on the USGS scan enlarged to 10000×6185; on that scan at its own size, resized to 5000 px and
enlarged to 7000 and 10000 px wide, how much of three of its named faults the line features follow
(NAMED_FAULTS) and where its lines of section are found.

Goals (issue 35): fault buffer F1 at least 0.85, fold axes at least 0.70, attitudes F1 at least 0.85
with 90 % of dips read exactly, the whole extraction of a 10000×6185 scan in at most 15 s on this
2-core machine; (issue 60) the drawn map's scores within 0.03 of one another from 2/3× to 3×. A benchmark, not a test: run with ./dev bench.
"""

import math
import shutil
import sys
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import unit_maps  # noqa: E402
from conftest import SHARED_ASSETS, Mirror, Server  # noqa: E402
from test_detect import CACHE, OCR_WHEEL, WHEEL  # noqa: E402
from test_structure import USGS_A_SECTION, USGS_B_SECTION, USGS_C_SECTION, USGS_GRAND_WASH, USGS_NAMED_FAULTS, ENLARGED_WIDTH, RESIZED_WIDTH, covered, layer, line_layers, line_scores, named_faults_followed, save_resized  # noqa: E402

from harness import run  # noqa: E402

SCAN = SHARED_ASSETS / "sample_usgs.jpg"
ENLARGED = (10_000, 6185)
# The whole extraction of the enlarged scan should take at most this long on this 2-core machine.
GOAL_S = 15.0
# Three faults the USGS sample names on its main map, traced by eye (tests/test_structure.py): the
# Hurricane fault's eastern strand, the Toroweap fault and the Grand Wash fault's dotted stretch.
NAMED_FAULTS = {**USGS_NAMED_FAULTS, "Grand Wash": USGS_GRAND_WASH}
# The drawn map at half, two thirds, once, twice and three times its size (at half its type is 12 px
# tall): the same sheet should give the same features, scores within 0.03 of one another.
SCALES = (0.5, 2 / 3, 1.0, 2.0, 3.0)


async def extract(client, name: str) -> tuple[dict, float]:
    """Registers `name`, reads its layout, then times geomap_extract_units."""
    map_id = (await client.call_tool("geomap_register_map", {"path": name})).structured_content["map_id"]
    layout = await client.call_tool("geomap_process_image", {"map_id": map_id})
    assert layout.is_error is False, layout
    started = time.perf_counter()
    result = await client.call_tool("geomap_extract_units", {"map_id": map_id})
    seconds = time.perf_counter() - started
    assert result.is_error is False, result
    return result.structured_content, seconds


def scores(units: dict, scale: float) -> dict:
    """Buffer F1 per line type, the attitudes' scores (their dip directions from the sheet's up:
    the benchmark's maps are not georeferenced), the vertical and horizontal beds' F1 and dips and the line of section's ends against the drawing."""
    _, _, found = line_scores(units, scale)
    point_types = {row["properties"]["id"]: row["properties"]["symbol"] for row in layer(units["geopackage_path"], "point_type")}
    features = layer(units["geopackage_path"], "point_feature")

    def of_type(kind: str) -> list:
        mine = [f for f in features if point_types[f["properties"]["type"]] == kind]
        return [(*f["geometry"]["coordinates"], f["properties"]["dip_direction"], f["properties"]["dip"]) for f in mine]

    radius = unit_maps.STRIKE_PX * scale / 2
    found["attitudes"] = unit_maps.point_scores(unit_maps.attitude_truth(scale), of_type("inclined bedding"), radius)
    # Vertical and horizontal beds: F1 and the share whose dip (the symbol's) is right.
    for kind, _, _ in unit_maps.BED_SYMBOLS:
        truth = [(x, y, None, dip) for x, y, k, dip in unit_maps.bed_truth(scale) if k == kind]
        score = unit_maps.point_scores(truth, of_type(kind), radius)
        found[kind] = {"f1": score["f1"], "dip_exact": score["dip_exact"]}
    # The line of section: how far each found end is from its drawn end, in pixels at scale 1.
    want = unit_maps.section_truth(scale)
    found["section_end_offsets_px"] = [[round(math.dist(s[end], point) / scale, 1) for end, point in zip(("from", "to"), want)] for s in units["sections"]]
    return found


async def measure(base: Path) -> None:
    mirror = Mirror()
    try:
        mirror.files[WHEEL] = (CACHE / WHEEL).read_bytes()
        mirror.files[OCR_WHEEL] = (CACHE / OCR_WHEEL).read_bytes()
        server = Server(base, {"GEOMAP_ASSET_MIRROR": mirror.url})
        unit_maps.draw(server.map_root / "structure.jpg", structure=True)
        unit_maps.draw(server.map_root / "no_explanation.jpg", structure=True, explanation=False)
        large = 10_000 / unit_maps.STRUCTURE_SCAN[0]
        unit_maps.draw(server.map_root / "structure_10000.jpg", structure=True, scale=large)
        for scale in SCALES:
            unit_maps.draw(server.map_root / f"structure_{scale:.3f}.jpg", structure=True, scale=scale)
        if SCAN.exists():
            shutil.copy(SCAN, server.map_root / "usgs.jpg")
            Image.open(SCAN).resize(ENLARGED, Image.LANCZOS).save(server.map_root / "usgs_10000.png", compress_level=1)
            for width in (RESIZED_WIDTH, ENLARGED_WIDTH):
                save_resized(Image.open(SCAN), width, server.map_root / f"usgs_{width}.png")
        async with server.connect() as client:
            prepared = await client.call_tool("geomap_prepare_detectors", {"assets": ["peace-yolov10-runtime", "ppocr-v4"]})
            assert prepared.is_error is False, prepared
            for name, what in (("structure.jpg", "with its explanation"), ("no_explanation.jpg", "explanation cut off")):
                units, seconds = await extract(client, name)
                print(f"drawn map, {what}: buffer F1 {scores(units, 1.0)} (goals: fault 0.85, folds 0.70, attitudes 0.85 with 90 % of dips exact); extraction {seconds:.1f} s")
            # The same sheet at other resolutions: its scores, their spread per measure, and the
            # scale the extraction reports.
            by_scale = {}
            for scale in SCALES:
                units, _ = await extract(client, f"structure_{scale:.3f}.jpg")
                found = scores(units, scale)
                by_scale[scale] = {kind: found[kind] for kind in ("fault", "thrust fault", "anticline", "syncline")} | {
                    "attitudes": found["attitudes"]["f1"],
                    "dips exact": found["attitudes"]["dip_exact"],
                    **{kind: found[kind]["f1"] for kind, _, _ in unit_maps.BED_SYMBOLS},
                }
                reported = units["scale"]
                # The issue holds 0.5× to the goal only where the type stays at least 8 px tall.
                type_height = next((e["measured"] for e in (reported or {}).get("estimates", []) if e["source"] == "type_height"), "type not measured")
                print(
                    f"drawn map at {scale:.2f}× ({round(unit_maps.STRUCTURE_SCAN[0] * scale)} px wide): {by_scale[scale]}; "
                    f"scale {reported and (reported['mm_per_px'], reported['source'])}, {type_height}"
                )
            spread = {kind: round(max(s[kind] for s in by_scale.values()) - min(s[kind] for s in by_scale.values()), 3) for kind in by_scale[1.0]}
            within = {kind: round(max(s[kind] for k, s in by_scale.items() if k >= 2 / 3 - 1e-9) - min(s[kind] for k, s in by_scale.items() if k >= 2 / 3 - 1e-9), 3) for kind in by_scale[1.0]}
            print(f"drawn map across {', '.join(f'{k:.2f}×' for k in SCALES)}: spread of each score {spread}; from 0.67× up {within} (goal: within 0.03)")
            units, seconds = await extract(client, "structure_10000.jpg")
            print(f"drawn map at 10000×{round(unit_maps.SCAN[1] * large)}: buffer F1 {scores(units, large)}; extraction {seconds:.1f} s (lines {units['timings']['lines_ms'] / 1e3:.1f} s)")
            if SCAN.exists():
                # The scan as published, then enlarged (its thin strokes blurred wider, not sharper)
                # three times: the lines should not depend on the size a sheet was scanned at.
                published = Image.open(SCAN).width
                sizes = (
                    ("usgs.jpg", "at its own size", 1.0),
                    (f"usgs_{RESIZED_WIDTH}.png", f"resized to {RESIZED_WIDTH} px wide", RESIZED_WIDTH / published),
                    (f"usgs_{ENLARGED_WIDTH}.png", f"enlarged to {ENLARGED_WIDTH} px wide", ENLARGED_WIDTH / published),
                    ("usgs_10000.png", "enlarged to 10000×6185", ENLARGED[0] / published),
                )
                for name, what, scale in sizes:
                    units, seconds = await extract(client, name)
                    found = {line["type"]: line["count"] for line in units["lines"]}
                    marks = {point["type"]: point["count"] for point in units["points"]}
                    goal = f" ({seconds / GOAL_S:.2f}× the {GOAL_S:.0f} s goal)" if name == "usgs_10000.png" else ""
                    print(f"USGS scan {what}: extraction {seconds:.1f} s{goal}, timings {units['timings']}; line features per type {found}; point features per type {marks}")
                    features, types = line_layers(units)
                    along = named_faults_followed(features, types, Image.open(SCAN).convert("L"), scale, NAMED_FAULTS)
                    print(f"USGS named faults {what}, share of each traced length a line feature follows (types by samples): {along}")
                    truths = {"A–A′": USGS_A_SECTION, "B–B′": USGS_B_SECTION, "C–C′": USGS_C_SECTION}
                    sections = {}
                    for s in units["sections"]:
                        ends = [(x / scale, y / scale) for x, y in (s["from"], s["to"])]
                        if (truth := truths.get(s["name"])) is None:
                            sections[s["name"]] = f"ends {ends}, not on the sheet as looked at by eye"
                            continue
                        offsets = [round(math.dist(end, want), 1) for end, want in zip(ends, truth)]
                        sections[s["name"]] = f"ends {offsets} px off, {covered(ends, truth):.2f} covered, {s['ends_from']}"
                    print(f"USGS lines of section {what}: {sections or 'none found'} (ends' distances from where their letters begin as looked at by eye, in the published scan's pixels)")
            else:
                print(f"USGS scan at 10000×6185: skipped ({SCAN} is not there)")
    finally:
        mirror.close()


if __name__ == "__main__":
    run(measure, "bench-structure-", [CACHE / WHEEL, CACHE / OCR_WHEEL], "the wheels: run tests/test_read_text.py once")

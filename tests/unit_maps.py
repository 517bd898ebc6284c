"""Geologic maps the unit tests and the benchmark draw, with the truth of every pixel: units as
polygons, then what a printed map lays over them (black contacts, a fault, brown contour lines across
every unit, printed codes, strike-and-dip symbols), a slight skew, blur and JPEG. A legend with a
swatch, a code and a description per unit stands right of the main map, as the layout reader finds it."""

import math
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
PAPER = (252, 250, 244)
CONTOUR = (150, 100, 60)
# (code, description, colour); Tg and Tgc are a close pair (ΔE about 7).
UNITS = [
    ("Qal", "Alluvium (Holocene)", (250, 235, 150)),
    ("Tb", "Basalt flows (Pliocene)", (230, 120, 110)),
    ("Pc", "Coconino Sandstone (Lower Permian)", (120, 170, 230)),
    ("Kd", "Dakota Sandstone (Upper Cretaceous)", (110, 200, 200)),
    ("Tg", "Gravel (Miocene)", (200, 220, 120)),
    ("Tgc", "Conglomerate (Miocene)", (178, 208, 102)),
]
SCAN = (1700, 1000)
MAIN_MAP = (40, 40, 1040, 940)
SKEW_DEGREES = 0.4


def polygons(scale: float = 1.0) -> list[tuple[int, list[tuple[float, float]]]]:
    """(unit index, outline) in drawing order over a ground of unit 0, in a 1000 × 900 frame at (40, 40)."""
    shapes = [
        (1, [(0, 0), (560, 0), (410, 380), (0, 520)]),
        (2, [(560, 0), (1000, 0), (1000, 410), (410, 380)]),
        (3, [(0, 520), (410, 380), (480, 900), (0, 900)]),
        (4, [(660, 560), (1000, 520), (1000, 900), (610, 900)]),
        (5, [(480, 660), (650, 600), (610, 900), (500, 900)]),
    ]
    x0, y0 = MAIN_MAP[0] * scale, MAIN_MAP[1] * scale
    return [(unit, [(x0 + x * scale, y0 + y * scale) for x, y in outline]) for unit, outline in shapes]


def draw(path: Path, *, scale: float = 1.0, quality: int = 88) -> "Image.Image":
    """Draws the map at `path` (JPEG) and returns the truth: a palette image, unit index + 1 per pixel, 0 outside the main map."""
    size = (int(SCAN[0] * scale), int(SCAN[1] * scale))
    box = tuple(int(v * scale) for v in MAIN_MAP)
    image = Image.new("RGB", size, PAPER)
    truth = Image.new("L", size, 0)
    draw_image, draw_truth = ImageDraw.Draw(image), ImageDraw.Draw(truth)
    draw_image.rectangle(box, fill=UNITS[0][2])
    draw_truth.rectangle(box, fill=1)
    for unit, outline in polygons(scale):
        draw_image.polygon(outline, fill=UNITS[unit][2])
        draw_truth.polygon(outline, fill=unit + 1)
    line = max(1, round(3 * scale))
    for _, outline in polygons(scale):  # contacts
        draw_image.line(outline + [outline[0]], fill=(25, 25, 25), width=line)
    draw_image.line([(box[0] + 60 * scale, box[1] + 260 * scale), (box[0] + 860 * scale, box[1] + 760 * scale)], fill=(10, 10, 10), width=max(2, round(5 * scale)))  # a fault
    for k in range(1, 10):  # contour lines across every unit
        base = box[1] + k * 90 * scale
        points = [(box[0] + x, base + 25 * scale * math.sin(x / (70 * scale) + k)) for x in range(0, box[2] - box[0], max(1, int(4 * scale)))]
        draw_image.line(points, fill=CONTOUR, width=max(1, round(2 * scale)))
    font = ImageFont.truetype(str(FONT), max(10, int(24 * scale)))
    for unit, outline in polygons(scale):  # printed codes
        cx, cy = sum(x for x, _ in outline) / len(outline), sum(y for _, y in outline) / len(outline)
        draw_image.text((cx, cy), UNITS[unit][0], fill=(20, 20, 20), font=font)
    draw_image.text((box[0] + 900 * scale, box[1] + 450 * scale), UNITS[0][0], fill=(20, 20, 20), font=font)
    for sx, sy in [(150, 150), (700, 200), (300, 700), (850, 700), (900, 300)]:  # strike-and-dip symbols
        x, y = box[0] + sx * scale, box[1] + sy * scale
        draw_image.line([(x - 14 * scale, y), (x + 14 * scale, y)], fill=(15, 15, 15), width=line)
        draw_image.line([(x, y), (x, y + 9 * scale)], fill=(15, 15, 15), width=line)
    draw_image.rectangle(box, outline=(0, 0, 0), width=line)
    # The legend, at the same scale.
    font, bold = ImageFont.truetype(str(FONT), round(28 * scale)), ImageFont.truetype(str(BOLD), round(34 * scale))
    draw_image.text((1120 * scale, 60 * scale), "EXPLANATION", fill=(20, 20, 20), font=bold)
    for index, (code, description, colour) in enumerate(UNITS):
        top = (140 + index * 80) * scale
        draw_image.rectangle((1120 * scale, top, 1209 * scale, top + 45 * scale), fill=colour, outline=(0, 0, 0), width=max(2, round(2 * scale)))
        width = draw_image.textlength(code, font=font)
        draw_image.text(((1120 + 45) * scale - width / 2, top + 8 * scale), code, fill=(20, 20, 20), font=font)
        draw_image.text((1240 * scale, top + 8 * scale), description, fill=(20, 20, 20), font=font)
    centre = (size[0] / 2, size[1] / 2)
    image = image.rotate(SKEW_DEGREES, resample=Image.BICUBIC, center=centre, fillcolor=PAPER)
    truth = truth.rotate(SKEW_DEGREES, resample=Image.NEAREST, center=centre, fillcolor=0)
    image = image.filter(ImageFilter.GaussianBlur(0.7))
    image.save(path, quality=quality)
    return truth


def f1_per_unit(truth: "Image.Image", predicted: "Image.Image", classes: dict[int, str], box: tuple[int, int, int, int]) -> dict[str, float]:
    """Pixel F1 of each unit inside `box`: `truth` holds unit index + 1, `predicted` raster classes
    (covering `box`), `classes` maps a raster class to its code."""
    codes = {index + 1: code for index, (code, _, _) in enumerate(UNITS)}
    x0, y0, x1, y1 = box
    truth_pixels = truth.crop(box).tobytes()
    predicted_pixels = predicted.tobytes()
    assert len(truth_pixels) == len(predicted_pixels), (truth.crop(box).size, predicted.size)
    counts: dict[str, list[int]] = {code: [0, 0, 0] for code in codes.values()}  # true positive, false positive, false negative
    for want, got in zip(truth_pixels, predicted_pixels):
        want_code, got_code = codes.get(want), classes.get(got)
        if want_code == got_code:
            if want_code:
                counts[want_code][0] += 1
            continue
        if got_code in counts:
            counts[got_code][1] += 1
        if want_code:
            counts[want_code][2] += 1
    return {code: (2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0) for code, (tp, fp, fn) in counts.items()}

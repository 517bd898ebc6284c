"""Geologic maps the unit tests and the benchmark draw, with the truth of every pixel: units as
polygons, then what a printed map lays over them (black contacts, a fault, brown contour lines across
every unit, printed codes, strike-and-dip symbols), a slight skew, blur and JPEG. A legend with a
swatch, a code and a description per unit stands right of the main map, as the layout reader finds it.
The structure map adds faults, a thrust, folds and 40 strike-and-dip symbols with their dips printed,
and an explanation of their symbols in a column of its own."""

import math
import random
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
# The structure map is wider: the explanation of line symbols stands in a column of its own.
STRUCTURE_SCAN = (2800, 1000)
SYMBOLS_AT = (1960, 300)  # the heading's top left; samples 120 px wide, words 150 px right of a sample's start
RED = (200, 30, 30)
BLACK = (15, 15, 15)
# The explanation of line symbols: (words, colour, stroke width, dash and gap or None, marks).
LINE_SYMBOLS = [
    ("Contact", BLACK, 3, None, None),
    ("Fault—Dashed where approximately located", RED, 4, (18, 10), None),
    ("Thrust fault—Teeth on upper plate", BLACK, 6, None, "teeth"),
    ("Anticline—Showing crestline", BLACK, 5, None, "away"),
    ("Syncline—Showing troughline", BLACK, 5, None, "towards"),
]
# The line of section A–A′ on the main map, in its frame's pixels (thinner than the contacts, its
# letters beyond its ends), and its cross section under the legend: the caption's top left and the
# profile's box, in the scan's pixels at scale 1.
SECTION = [(440, 835), (930, 790)]
SECTION_LETTERS = ("A", "A′")
SECTION_CAPTION_AT = (1120, 640)
SECTION_PROFILE = (1120, 690, 1880, 930)
# The profile drawn at the map's scale: as wide as its line of section is long, and a little more.
SECTION_PROFILE_AT_SCALE = (1120, 690, 1640, 930)
# A strike-and-dip symbol: strike line and tick lengths at scale 1 (the stroke is the contacts' width).
STRIKE_PX, TICK_PX = 28, 9
DIP_FONT_PX = 18
# The explanation's attitude entry, under its line symbols, with the dip printed beside its sample.
ATTITUDE_WORDS, ATTITUDE_SAMPLE_DIP = "Strike and dip of beds", "35"
# Below it, the entries of vertical beds (a tick on each side) and horizontal beds (a cross in a
# circle of this radius at scale 1), each drawn four times on the main map.
BED_SYMBOLS = [("vertical bedding", "Vertical bedding", 90), ("horizontal bedding", "Horizontal bedding", 0)]
CIRCLE_RADIUS_PX = 10
# A line's dotted (concealed) part: a dot and the gap after it, in pixels at scale 1.
DOTS = (2, 9)
# With `filled_marks`, filled point symbols: (TA1 point type, the explanation's words, colour, shape), each
# drawn `MARKS_EACH` times on the main map, `MARK_PX` across at scale 1, and listed in the explanation
# above its heading. A vertical joint's dot is strung on a grey hairline three marks long along its
# strike (`mark_strike`), lighter than the dot as the USGS sheet prints it.
MAGENTA = (200, 20, 120)
MARK_SYMBOLS = [
    ("other", "Collapse structure—Inward-dipping strata", BLACK, "disc"),
    ("other", "Breccia pipe—Collapse with breccia", MAGENTA, "disc"),
    ("other", "Sinkhole—Enclosed depression", BLACK, "triangle"),
    ("joint", "Strike of vertical joints", BLACK, "strung"),
]
HAIRLINE = (90, 90, 90)
MARKS_EACH, MARK_PX = 8, 12
# The structure drawn on the main map, in its frame's pixels: (type, [(pattern, points)]), each part
# beginning where the one before ended; the thrust's teeth and the folds' arrows are on the right
# of the line as its points run.
STRUCTURE = [
    ("fault", [("solid", [(80, 120), (180, 230), (260, 330)]), ("dashed", [(260, 330), (320, 450), (380, 560)])]),
    ("fault", [("dashed", [(600, 720), (760, 690), (845, 650)]), ("dotted", [(845, 650), (930, 610)])]),
    ("thrust fault", [("solid", [(520, 110), (700, 250), (960, 290)])]),
    ("anticline", [("solid", [(110, 640), (230, 720), (340, 840)])]),
    ("syncline", [("solid", [(640, 430), (800, 455), (960, 500)])]),
]


def attitudes() -> list[tuple[float, float, float, int]]:
    """The 40 strike-and-dip symbols of the structure map, in its frame's pixels: (x, y, dip direction
    in degrees clockwise from up, dip), clear of the contacts, the structure lines, the codes and each
    other, their dip directions spread all round."""
    return placed_symbols()[:40]


def bed_symbols() -> list[tuple[float, float, float, str]]:
    """The vertical and horizontal beds of the structure map (four of each, as `BED_SYMBOLS` lists
    them), in its frame's pixels, clear of everything as `attitudes` are: (x, y, strike's square in
    degrees clockwise from up, TA1 point type)."""
    return [(x, y, towards, BED_SYMBOLS[k // 4][0]) for k, (x, y, towards, _) in enumerate(placed_symbols()[40:])]


def placed_symbols() -> list[tuple[float, float, float, int]]:
    """48 places for point symbols in the structure map's frame (`attitudes`, then `bed_symbols`,
    which print no number beside them and so stand closer to the rest): (x, y, a direction, a dip)."""
    rng = random.Random(35)
    keep_off = [outline + [outline[0]] for _, outline in polygons_in_frame()] + [[p for _, points in parts for p in points] for _, parts in STRUCTURE] + [SECTION]
    codes = [(sum(x for x, _ in o) / len(o), sum(y for _, y in o) / len(o)) for _, o in polygons_in_frame()] + [(900, 450)]
    chosen: list = []
    candidates = [(x + rng.uniform(-12, 12), y + rng.uniform(-12, 12)) for y in range(50, 880, 52) for x in range(50, 980, 52)]
    rng.shuffle(candidates)
    # (how many, clear of the lines by, of the codes by, of each other by)
    for count, lines, letters, apart in [(40, 42, 60, 75), (48, 30, 45, 60)]:
        for x, y in candidates:
            if len(chosen) == count:
                break
            clear = all(distance_to(x, y, line) > lines for line in keep_off)
            clear = clear and all(math.hypot(x - cx - 25, y - cy - 15) > letters for cx, cy in codes)
            clear = clear and all(math.hypot(x - ox, y - oy) > apart for ox, oy, _, _ in chosen)
            if clear:
                k = len(chosen)
                chosen.append((x, y, (k * 9 + rng.uniform(0, 8)) % 360, rng.randint(3, 88)))
    assert len(chosen) == 48, len(chosen)
    return chosen


def mark_places() -> list[tuple[float, float, int]]:
    """The filled marks of `MARK_SYMBOLS` (`MARKS_EACH` of each) in the structure map's frame: (x,
    y, index into `MARK_SYMBOLS`), clear of the lines, the codes, the point symbols and each other."""
    rng = random.Random(36)
    keep_off = [outline + [outline[0]] for _, outline in polygons_in_frame()] + [[p for _, points in parts for p in points] for _, parts in STRUCTURE] + [SECTION]
    codes = [(sum(x for x, _ in o) / len(o), sum(y for _, y in o) / len(o)) for _, o in polygons_in_frame()] + [(900, 450)]
    symbols = placed_symbols()
    candidates = [(x + rng.uniform(-8, 8), y + rng.uniform(-8, 8)) for y in range(40, 890, 30) for x in range(40, 990, 30)]
    rng.shuffle(candidates)
    chosen: list = []
    for x, y in candidates:
        if len(chosen) == MARKS_EACH * len(MARK_SYMBOLS):
            break
        clear = all(distance_to(x, y, line) > 25 for line in keep_off)
        clear = clear and all(math.hypot(x - cx - 25, y - cy - 15) > 50 for cx, cy in codes)
        # The attitudes' dips are printed beyond their ticks: keep off the whole of them.
        clear = clear and all(math.hypot(x - sx, y - sy) > 48 for sx, sy, _, _ in symbols)
        clear = clear and all(math.hypot(x - ox, y - oy) > 40 for ox, oy, _ in chosen)
        if clear:
            chosen.append((x, y, len(chosen) % len(MARK_SYMBOLS)))
    assert len(chosen) == MARKS_EACH * len(MARK_SYMBOLS), len(chosen)
    return chosen


def mark_strike(x: float, y: float) -> float:
    """The strike of a vertical joint drawn at (x, y) of the main map's frame, degrees clockwise from up."""
    return (7 * x + 11 * y) % 180


def draw_mark(draw_image: "ImageDraw.ImageDraw", x: float, y: float, scale: float, colour: tuple, shape: str, strike: float = 135.0) -> None:
    """A filled disc `MARK_PX` across centred on (x, y), a triangle on its base as wide, or a disc
    strung on a hairline along `strike`."""
    r = MARK_PX * scale / 2
    if shape == "strung":
        dx, dy = 3 * r * math.sin(math.radians(strike)), -3 * r * math.cos(math.radians(strike))
        draw_image.line((x - dx, y - dy, x + dx, y + dy), fill=HAIRLINE, width=max(2, round(2 * scale)))
    if shape in ("disc", "strung"):
        draw_image.ellipse((x - r, y - r, x + r, y + r), fill=colour)
    else:
        draw_image.polygon([(x, y - r), (x + r, y + r), (x - r, y + r)], fill=colour)


def mark_truth(scale: float = 1.0) -> list:
    """The filled marks `draw(..., structure=True, filled_marks=True)` drew, as they are on the scan: (x, y,
    index into `MARK_SYMBOLS`, a vertical joint's dip direction from the scan's up as the server gives
    it, 0–180°, else None)."""
    return [
        (*on_structure_scan(x, y, scale), kind, (mark_strike(x, y) + 90 - SKEW_DEGREES) % 180 if MARK_SYMBOLS[kind][3] == "strung" else None)
        for x, y, kind in mark_places()
    ]


def distance_to(x: float, y: float, line: list) -> float:
    """The distance from (x, y) to a polyline."""
    best = math.inf
    for (x0, y0), (x1, y1) in zip(line, line[1:]):
        dx, dy = x1 - x0, y1 - y0
        t = max(0.0, min(1.0, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy or 1.0)))
        best = min(best, math.hypot(x - x0 - t * dx, y - y0 - t * dy))
    return best


def polygons_in_frame() -> list:
    """The units' outlines in the main map's frame (unshifted)."""
    return [(unit, [(x - MAIN_MAP[0], y - MAIN_MAP[1]) for x, y in outline]) for unit, outline in polygons()]


def draw_attitude(draw_image: "ImageDraw.ImageDraw", x: float, y: float, towards: float, scale: float, dip: str | None, font) -> None:
    """A strike line centred on (x, y) with its tick pointing `towards` (degrees clockwise from up),
    and `dip` printed beyond the tick's end."""
    dx, dy = math.sin(math.radians(towards)), -math.cos(math.radians(towards))
    half, tick, width = STRIKE_PX * scale / 2, TICK_PX * scale, max(1, round(3 * scale))
    draw_image.line([(x + dy * half, y - dx * half), (x - dy * half, y + dx * half)], fill=BLACK, width=width)
    draw_image.line([(x, y), (x + dx * tick, y + dy * tick)], fill=BLACK, width=width)
    if dip is not None:
        reach = (TICK_PX + 17) * scale
        draw_image.text((x + dx * reach, y + dy * reach), dip, fill=BLACK, font=font, anchor="mm")


def draw_bed(draw_image: "ImageDraw.ImageDraw", x: float, y: float, towards: float, scale: float, kind: str) -> None:
    """A vertical bed's strike line centred on (x, y) with a tick on each side (square to it towards
    `towards`), or a horizontal bed's cross in a circle."""
    width = max(1, round(3 * scale))
    if kind == "vertical bedding":
        dx, dy = math.sin(math.radians(towards)), -math.cos(math.radians(towards))
        half, tick = STRIKE_PX * scale / 2, TICK_PX * scale
        draw_image.line([(x + dy * half, y - dx * half), (x - dy * half, y + dx * half)], fill=BLACK, width=width)
        draw_image.line([(x - dx * tick, y - dy * tick), (x + dx * tick, y + dy * tick)], fill=BLACK, width=width)
    else:
        r = CIRCLE_RADIUS_PX * scale
        draw_image.ellipse((x - r, y - r, x + r, y + r), outline=BLACK, width=width)
        draw_image.line([(x - r, y), (x + r, y)], fill=BLACK, width=width)
        draw_image.line([(x, y - r), (x, y + r)], fill=BLACK, width=width)


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


def draw(
    path: Path,
    *,
    scale: float = 1.0,
    quality: int = 88,
    structure: bool = False,
    explanation: bool = True,
    filled_marks: bool = False,
    section_letter_px: int = 26,
    section_overrun_px: int = 0,
    section_primed_bar: bool = False,
    section_at_scale: bool = False,
) -> "Image.Image":
    """Draws the map at `path` (JPEG) and returns the truth: a palette image, unit index + 1 per pixel,
    0 outside the main map. With `structure`, the scan is wider: the faults and folds of `STRUCTURE`
    are drawn on the main map (in place of the one unexplained fault) and, unless `explanation` is
    false, the explanation of `LINE_SYMBOLS` beside the legend (`structure_truth` gives the lines as
    drawn); with `filled_marks` too, the filled marks of `MARK_SYMBOLS` (`mark_truth`), explained above it."""
    size = (int((STRUCTURE_SCAN if structure else SCAN)[0] * scale), int(SCAN[1] * scale))
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
    if not structure:  # a fault
        draw_image.line([(box[0] + 60 * scale, box[1] + 260 * scale), (box[0] + 860 * scale, box[1] + 760 * scale)], fill=(10, 10, 10), width=max(2, round(5 * scale)))
    for k in range(1, 10):  # contour lines across every unit
        base = box[1] + k * 90 * scale
        points = [(box[0] + x, base + 25 * scale * math.sin(x / (70 * scale) + k)) for x in range(0, box[2] - box[0], max(1, int(4 * scale)))]
        draw_image.line(points, fill=CONTOUR, width=max(1, round(2 * scale)))
    if structure:
        symbols = {words.split("—")[0].casefold(): (colour, width, dash, marks) for words, colour, width, dash, marks in LINE_SYMBOLS}
        for kind, parts in STRUCTURE:
            colour, width, dash, marks = symbols[kind]
            for pattern, points in parts:
                placed = [(box[0] + x * scale, box[1] + y * scale) for x, y in points]
                draw_line(draw_image, placed, colour, width * scale, {"solid": None, "dashed": dash, "dotted": DOTS}[pattern], scale)
            whole = [(box[0] + x * scale, box[1] + y * scale) for _, points in parts for x, y in points]
            draw_marks(draw_image, whole, colour, width * scale, marks, scale)
    font = ImageFont.truetype(str(FONT), max(10, int(24 * scale)))
    for unit, outline in polygons(scale):  # printed codes
        cx, cy = sum(x for x, _ in outline) / len(outline), sum(y for _, y in outline) / len(outline)
        draw_image.text((cx, cy), UNITS[unit][0], fill=(20, 20, 20), font=font)
    draw_image.text((box[0] + 900 * scale, box[1] + 450 * scale), UNITS[0][0], fill=(20, 20, 20), font=font)
    dip_font = ImageFont.truetype(str(FONT), max(8, round(DIP_FONT_PX * scale)))
    if structure:  # the line of section, its letters and its cross section
        draw_section(draw_image, box, scale, section_letter_px, section_overrun_px, (section_primed_bar, section_at_scale))
    if structure:  # strike-and-dip symbols with their dips
        for sx, sy, towards, dip in attitudes():
            draw_attitude(draw_image, box[0] + sx * scale, box[1] + sy * scale, towards, scale, str(dip), dip_font)
        for sx, sy, towards, kind in bed_symbols():
            draw_bed(draw_image, box[0] + sx * scale, box[1] + sy * scale, towards, scale, kind)
        for sx, sy, kind in mark_places() if filled_marks else []:
            _, _, colour, shape = MARK_SYMBOLS[kind]
            draw_mark(draw_image, box[0] + sx * scale, box[1] + sy * scale, scale, colour, shape, mark_strike(sx, sy))
    else:
        for sx, sy in [(150, 150), (700, 200), (300, 700), (850, 700), (900, 300)]:  # strike-and-dip symbols
            draw_attitude(draw_image, box[0] + sx * scale, box[1] + sy * scale, 180, scale, None, dip_font)
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
    if structure and explanation:  # the explanation of line symbols, in a column of its own
        x, y = SYMBOLS_AT
        draw_image.text((x * scale, y * scale), "EXPLANATION OF MAP SYMBOLS", fill=(20, 20, 20), font=font)
        for index, (words, colour, width, dash, marks) in enumerate(LINE_SYMBOLS):
            top = (y + 80 + 70 * index) * scale
            sample = [(x * scale, top + 18 * scale), ((x + 120) * scale, top + 18 * scale)]
            draw_line(draw_image, sample, colour, width * scale, dash, scale)
            draw_marks(draw_image, sample, colour, width * scale, marks, scale)
            draw_image.text(((x + 150) * scale, top), words, fill=(20, 20, 20), font=font)
        top = (y + 80 + 70 * len(LINE_SYMBOLS)) * scale
        draw_attitude(draw_image, (x + 40) * scale, top + 14 * scale, 180, scale, None, dip_font)
        draw_image.text(((x + 62) * scale, top + 4 * scale), ATTITUDE_SAMPLE_DIP, fill=BLACK, font=dip_font)
        draw_image.text(((x + 150) * scale, top), ATTITUDE_WORDS, fill=(20, 20, 20), font=font)
        for kind, words, _ in BED_SYMBOLS:
            top += 70 * scale
            draw_bed(draw_image, (x + 40) * scale, top + 14 * scale, 180, scale, kind)
            draw_image.text(((x + 150) * scale, top), words, fill=(20, 20, 20), font=font)
    if structure and explanation and filled_marks:  # the filled marks' entries, above the heading
        x, y = SYMBOLS_AT
        for index, (_, words, colour, shape) in enumerate(MARK_SYMBOLS):
            top = (y - 240 + 60 * index) * scale
            draw_mark(draw_image, (x + 40) * scale, top + 17 * scale, scale, colour, shape)
            draw_image.text(((x + 150) * scale, top), words, fill=(20, 20, 20), font=font)
    centre = (size[0] / 2, size[1] / 2)
    image = image.rotate(SKEW_DEGREES, resample=Image.BICUBIC, center=centre, fillcolor=PAPER)
    truth = truth.rotate(SKEW_DEGREES, resample=Image.NEAREST, center=centre, fillcolor=0)
    image = image.filter(ImageFilter.GaussianBlur(0.7))
    image.save(path, quality=quality)
    return truth


def draw_section(draw_image: "ImageDraw.ImageDraw", box: tuple, scale: float, letter_px: int, overrun_px: int = 0, look: tuple = (False, False)) -> None:
    """The line of section `SECTION` on the main map (2 px at scale 1, its letters a type height
    beyond its ends; with `overrun_px`, a thinner line in line with it runs on that far past its
    primed letter, as a contour or a road may) and its cross section under the legend: the
    caption, then a profile in a frame with its letters over its ends. `look` is (a bar, at scale):
    with a bar, the primed letter prints as a bar across the line's direction (as the USGS sample's
    A′ does: no reader takes it for a letter); at scale, the profile is drawn at the map's scale
    (`SECTION_PROFILE_AT_SCALE`)."""
    primed_bar, at_scale = look
    bold = ImageFont.truetype(str(BOLD), round(26 * scale))
    small = ImageFont.truetype(str(BOLD), round(letter_px * scale))
    (x0, y0), (x1, y1) = [(box[0] + x * scale, box[1] + y * scale) for x, y in SECTION]
    draw_image.line([(x0, y0), (x1, y1)], fill=BLACK, width=max(1, round(2 * scale)))
    length = math.hypot(x1 - x0, y1 - y0)
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    reach = (letter_px - 4) * scale
    draw_image.text((x0 - dx * reach, y0 - dy * reach), SECTION_LETTERS[0], fill=BLACK, font=small, anchor="mm")
    if primed_bar:
        bx, by, half = x1 + dx * reach, y1 + dy * reach, 0.35 * letter_px * scale
        draw_image.line([(bx + dy * half, by - dx * half), (bx - dy * half, by + dx * half)], fill=BLACK, width=max(1, round(3 * scale)))
    else:
        draw_image.text((x1 + dx * reach, y1 + dy * reach), SECTION_LETTERS[1], fill=BLACK, font=small, anchor="mm")
    if overrun_px:
        past = reach + 0.7 * letter_px * scale
        draw_image.line([(x1 + dx * past, y1 + dy * past), (x1 + dx * (past + overrun_px * scale), y1 + dy * (past + overrun_px * scale))], fill=(90, 90, 90), width=max(1, round(scale)))
    font = ImageFont.truetype(str(FONT), round(28 * scale))
    cx, cy = SECTION_CAPTION_AT
    draw_image.text((cx * scale, cy * scale), "CROSS SECTION A-A'", fill=(20, 20, 20), font=font)
    left, top, right, bottom = (v * scale for v in (SECTION_PROFILE_AT_SCALE if at_scale else SECTION_PROFILE))
    draw_image.rectangle((left, top + 30 * scale, right, bottom), outline=BLACK, width=max(1, round(2 * scale)))
    ground = [(left + t, top + 30 * scale + (60 + 25 * math.sin(t / (90 * scale))) * scale) for t in range(0, int(right - left), max(1, int(4 * scale)))]
    draw_image.line(ground, fill=BLACK, width=max(1, round(2 * scale)))
    draw_image.text((left, top), SECTION_LETTERS[0], fill=BLACK, font=bold)
    draw_image.text((right - 30 * scale, top), SECTION_LETTERS[1], fill=BLACK, font=bold)


def section_truth(scale: float = 1.0) -> list:
    """The line of section as it is on the scan, from A to A′."""
    return [on_structure_scan(x, y, scale) for x, y in SECTION]


def along(points: list, step: float) -> list:
    """Points every `step` pixels along a polyline, with the direction there: (x, y, dx, dy)."""
    out = []
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0)
        for k in range(max(1, int(length // step))):
            t = k * step / length
            out.append((x0 + t * (x1 - x0), y0 + t * (y1 - y0), (x1 - x0) / length, (y1 - y0) / length))
    return out


def draw_line(draw_image: "ImageDraw.ImageDraw", points: list, colour: tuple, width: float, dash: tuple | None, scale: float) -> None:
    """A stroke along `points`, solid or in dashes of (dash, gap) pixels."""
    if dash is None:
        draw_image.line(points, fill=colour, width=round(width), joint="curve")
        return
    on, off = dash[0] * scale, dash[1] * scale
    samples = along(points, 1.0)
    run = 0.0
    start = None
    for x, y, _, _ in samples:
        inked = run % (on + off) < on
        if inked and start is None:
            start = (x, y)
        if not inked and start is not None:
            draw_image.line([start, (x, y)], fill=colour, width=round(width))
            start = None
        run += 1.0
    if start is not None:
        draw_image.line([start, samples[-1][:2]], fill=colour, width=round(width))


def draw_marks(draw_image: "ImageDraw.ImageDraw", points: list, colour: tuple, width: float, marks: str | None, scale: float) -> None:
    """A thrust's teeth (every 28 pixels on the right of the line as its points run, touching it) or
    a fold's pair of arrows at its middle (pointing `away` from it or `towards` it, clear of it)."""
    if marks == "teeth":
        for x, y, dx, dy in along(points, 28 * scale)[1:]:
            rx, ry = -dy, dx  # the right, rows growing downwards
            edge = width / 2 - 0.5
            draw_image.polygon(
                [(x - 6 * scale * dx + edge * rx, y - 6 * scale * dy + edge * ry), (x + 6 * scale * dx + edge * rx, y + 6 * scale * dy + edge * ry), (x + (edge + 10 * scale) * rx, y + (edge + 10 * scale) * ry)],
                fill=colour,
            )
    elif marks in ("away", "towards"):
        samples = along(points, 1.0)
        x, y, dx, dy = samples[len(samples) // 2]
        for side in (1, -1):
            rx, ry = -dy * side, dx * side
            near, far = width / 2 + 3 * scale, width / 2 + 17 * scale
            base, apex = (near, far) if marks == "away" else (far, near)
            draw_image.polygon([(x - 6 * scale * dx + base * rx, y - 6 * scale * dy + base * ry), (x + 6 * scale * dx + base * rx, y + 6 * scale * dy + base * ry), (x + apex * rx, y + apex * ry)], fill=colour)


def on_structure_scan(x: float, y: float, scale: float = 1.0) -> tuple:
    """Where point (x, y) of the main map's frame is on the structure map's scan, once turned by the
    skew (PIL turns counter-clockwise as seen, rows growing downwards)."""
    cx, cy = STRUCTURE_SCAN[0] * scale / 2, SCAN[1] * scale / 2
    x, y = MAIN_MAP[0] * scale + x * scale, MAIN_MAP[1] * scale + y * scale
    turn = math.radians(SKEW_DEGREES)
    return (cx + (x - cx) * math.cos(turn) + (y - cy) * math.sin(turn), cy - (x - cx) * math.sin(turn) + (y - cy) * math.cos(turn))


def structure_truth(scale: float = 1.0) -> list:
    """The lines `draw(..., structure=True)` drew, as they are on the scan: (type, pattern, points) per part."""
    return [(kind, pattern, [on_structure_scan(x, y, scale) for x, y in points]) for kind, parts in STRUCTURE for pattern, points in parts]


def attitude_truth(scale: float = 1.0) -> list:
    """The strike-and-dip symbols `draw(..., structure=True)` drew, as they are on the scan: (x, y, dip
    direction clockwise from the scan's up, dip)."""
    return [(*on_structure_scan(x, y, scale), (towards - SKEW_DEGREES) % 360, dip) for x, y, towards, dip in attitudes()]


def bed_truth(scale: float = 1.0) -> list:
    """The vertical and horizontal beds `draw(..., structure=True)` drew, as they are on the scan: (x,
    y, TA1 point type, the dip their symbol says)."""
    dips = {kind: dip for kind, _, dip in BED_SYMBOLS}
    return [(*on_structure_scan(x, y, scale), kind, dips[kind]) for x, y, _, kind in bed_symbols()]


def point_scores(truth: list, found: list, radius: float) -> dict:
    """The TA1 point score: found points matched to true ones within `radius` pixels (nearest pairs
    first, each once), as F1; over the matched ones, the share whose dip direction is within 10° and
    whose dip is read exactly. `truth` and `found` hold (x, y, dip direction, dip) (dip or direction None when absent)."""
    pairs = sorted((math.hypot(t[0] - f[0], t[1] - f[1]), i, j) for i, t in enumerate(truth) for j, f in enumerate(found))
    matched, used_t, used_f = [], set(), set()
    for d, i, j in pairs:
        if d <= radius and i not in used_t and j not in used_f:
            used_t.add(i), used_f.add(j)
            matched.append((truth[i], found[j]))
    f1 = 2 * len(matched) / (len(truth) + len(found)) if truth or found else 1.0

    def off(a, b):
        return abs((a - b + 180) % 360 - 180)

    direction = sum(t[2] is not None and f[2] is not None and off(t[2], f[2]) <= 10 for t, f in matched) / max(1, len(matched))
    dip = sum(f[3] is not None and round(f[3]) == t[3] for t, f in matched) / max(1, len(matched))
    return {"f1": round(f1, 3), "matched": len(matched), "found": len(found), "dip_direction_within_10": round(direction, 3), "dip_exact": round(dip, 3)}


def polyline_distance(point: tuple, line: list) -> float:
    """How far `point` (x, y) is from the polyline `line`."""
    x, y = point
    nearest = math.inf
    for (x0, y0), (x1, y1) in zip(line, line[1:]):
        dx, dy = x1 - x0, y1 - y0
        t = max(0.0, min(1.0, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy or 1.0)))
        nearest = min(nearest, math.hypot(x - x0 - t * dx, y - y0 - t * dy))
    return nearest


def buffer_f1(truth: list, found: list, radius: float) -> float:
    """The TA1 line score: the share of found length within `radius` pixels of a true line
    (precision) and of true length within `radius` of a found one (recall), as F1. Both are lists
    of polylines."""

    def near(x: float, y: float, lines: list) -> bool:
        return any(polyline_distance((x, y), line) <= radius for line in lines)

    def share(lines: list, others: list) -> float:
        points = [p for line in lines for p in along(line, 1.0)]
        return sum(near(x, y, others) for x, y, _, _ in points) / len(points) if points else 0.0

    if not truth or not found:
        return 0.0
    precision, recall = share(found, truth), share(truth, found)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


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

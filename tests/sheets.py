"""Map sheets the tests and benchmarks draw with known truth: a neatline with ticks and
coordinate labels around it (quadrangle style: full labels at the corners, minutes only along the
edges; or UTM ticks), turned by a known skew, with the datum and scale printed below.

Coordinates are continuous pixels (pixel centres at +0.5), as GDAL and the server use them; the
sheet is drawn at twice the size and reduced, so lines and letters are antialiased."""

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
PAPER = (250, 248, 240)
INK = (25, 25, 25)
SUPER = 2  # drawn at twice the size, then reduced


@dataclass
class Sheet:
    """A drawn sheet: where its frame is, what it covers, and how it was turned."""

    width: int = 2600
    height: int = 2000
    frame: tuple = (300.5, 260.5, 2300.5, 1740.5)  # left, top, right, bottom (continuous pixels, unturned)
    west: float = -114.0
    east: float = -113.0
    south: float = 35.5
    north: float = 36.0
    skew: float = 0.0  # degrees, clockwise on screen
    words: list = field(default_factory=lambda: ["Base from U.S. Geological Survey, 1979", "North American Datum of 1927", "SCALE 1:100 000"])
    title: str = ""  # drawn in large type centred above the frame
    imprint: list = field(default_factory=list)  # lines drawn below the frame's lower right (publisher, series, authors)

    def unturned(self, x: float, y: float) -> tuple:
        """The truth's (x, y) on the sheet before it was turned: lon/lat (or easting/northing) to pixels."""
        left, top, right, bottom = self.frame
        return (left + (x - self.west) / (self.east - self.west) * (right - left), top + (self.north - y) / (self.north - self.south) * (bottom - top))

    def turn(self, px: float, py: float) -> tuple:
        cx, cy = self.width / 2, self.height / 2
        s, c = math.sin(math.radians(self.skew)), math.cos(math.radians(self.skew))
        return (cx + (px - cx) * c - (py - cy) * s, cy + (px - cx) * s + (py - cy) * c)

    def pixel(self, x: float, y: float) -> tuple:
        """Where ground (x, y) is on the drawn sheet."""
        return self.turn(*self.unturned(x, y))

    def ground(self, col: float, row: float) -> tuple:
        """The truth at a pixel of the drawn sheet."""
        cx, cy = self.width / 2, self.height / 2
        s, c = math.sin(math.radians(self.skew)), math.cos(math.radians(self.skew))
        ux, uy = cx + (col - cx) * c + (row - cy) * s, cy - (col - cx) * s + (row - cy) * c
        left, top, right, bottom = self.frame
        return (self.west + (ux - left) / (right - left) * (self.east - self.west), self.north - (uy - top) / (bottom - top) * (self.north - self.south))


def dms(value: float, whole: bool) -> str:
    """`114°00'` (whole) or `52'30"` (minutes and seconds only)."""
    total = round(abs(value) * 3600)
    degrees, minutes, seconds = total // 3600, total % 3600 // 60, total % 60
    tail = f"{minutes:02d}'" + (f'{seconds:02d}"' if seconds else "")
    if whole:
        return f"{degrees}°{tail}"
    return f"{minutes}'" + (f'{seconds:02d}"' if seconds else "")


def draw(
    sheet: Sheet,
    path: Path,
    *,
    labels: str = "dms",
    misread: dict | None = None,
    misread_sides: tuple = ("top", "bottom", "left", "right"),
    units: bool = True,
    quality: int = 90,
    words_below: float = 48,
    parts: bool = False,
) -> Path:
    """Draws `sheet` to `path` (JPEG when it ends in .jpg). `labels`: `dms` (quadrangle style),
    `utm` (metres at every tick, zone and datum in the words) or `none`. `misread` replaces the
    text of labels by their true text on `misread_sides`, as a reader's mistake (or a stray mark
    printed with the label) would. The sheet's words start `words_below` pixels below the frame,
    one line under another; a line with "SCALE" stands further right."""
    misread = misread or {}
    image = Image.new("RGB", (sheet.width * SUPER, sheet.height * SUPER), PAPER)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), 28 * SUPER)

    def at(x: float, y: float) -> tuple:
        px, py = sheet.pixel(x, y)
        return (px * SUPER - 0.5, py * SUPER - 0.5)

    def stroke(a: tuple, b: tuple, width: float) -> None:
        """A straight band `width` pixels wide (sheet pixels) from a to b (drawn-image coordinates)."""
        dx, dy = b[0] - a[0], b[1] - a[1]
        length = math.hypot(dx, dy)
        nx, ny = -dy / length * width * SUPER / 2, dx / length * width * SUPER / 2
        draw.polygon([(a[0] + nx, a[1] + ny), (b[0] + nx, b[1] + ny), (b[0] - nx, b[1] - ny), (a[0] - nx, a[1] - ny)], fill=INK)

    def text(content: str, centre: tuple) -> None:
        left, top, right, bottom = draw.textbbox((0, 0), content, font=font)
        draw.text((centre[0] - (right + left) / 2, centre[1] - (bottom + top) / 2), content, fill=INK, font=font)

    if units:  # a few coloured map units and a dark contact inside the frame
        rng = random.Random(7)
        for colour in [(230, 200, 150), (190, 220, 170), (240, 170, 170), (200, 190, 230)]:
            x = rng.uniform(sheet.west + 0.1, sheet.east - 0.4)
            y = rng.uniform(sheet.south + 0.05, sheet.north - 0.2)
            draw.polygon([at(x, y), at(x + 0.3, y), at(x + 0.25, y + 0.15), at(x + 0.05, y + 0.12)], fill=colour)
        stroke(at(sheet.west + 0.2, sheet.south + 0.1), at(sheet.east - 0.3, sheet.north - 0.1), 2)
    corners = [(sheet.west, sheet.north), (sheet.east, sheet.north), (sheet.east, sheet.south), (sheet.west, sheet.south)]
    for a, b in zip(corners, corners[1:] + corners[:1]):
        stroke(at(*a), at(*b), 3)
    lon_step = (sheet.east - sheet.west) / 4
    lat_step = (sheet.north - sheet.south) / 4
    tick = 22  # sheet pixels
    per_x = (sheet.east - sheet.west) / (sheet.frame[2] - sheet.frame[0])
    per_y = (sheet.north - sheet.south) / (sheet.frame[3] - sheet.frame[1])
    shown = []
    for i in range(5):
        lon = sheet.west + i * lon_step
        for lat, inward in [(sheet.north, -1), (sheet.south, 1)]:
            if 0 < i < 4:
                stroke(at(lon, lat), at(lon, lat + inward * tick * per_y), 3)
            if labels == "none":
                continue
            offset = 34 * per_y * (1 if inward < 0 else -1)
            truth = f"{round(lon * 1000)}mE" if labels == "utm" else dms(lon, i in (0, 4))
            shown.append(truth)
            side = "top" if inward < 0 else "bottom"
            text(misread.get(truth, truth) if side in misread_sides else truth, at(lon, lat + offset))
    for i in range(5):
        lat = sheet.north - i * lat_step
        for lon, inward in [(sheet.west, 1), (sheet.east, -1)]:
            if 0 < i < 4:
                stroke(at(lon, lat), at(lon + inward * tick * per_x, lat), 3)
            if labels == "none":
                continue
            truth = f"{round(lat * 1000)}mN" if labels == "utm" else dms(lat, i in (0, 4))
            left, top, right, bottom = draw.textbbox((0, 0), truth, font=font)
            offset = ((right - left) / SUPER / 2 + 18) * per_x * (-1 if inward > 0 else 1)
            shown.append(truth)
            side = "left" if inward > 0 else "right"
            text(misread.get(truth, truth) if side in misread_sides else truth, at(lon + offset, lat))
    under = 0
    for words in sheet.words:  # below the frame's lower left, one line under another; the scale further right
        scale = "SCALE" in words
        x = sheet.west + (sheet.east - sheet.west) * (0.6 if scale else 0.08)
        y = sheet.south - (words_below + (0 if scale else 34 * under)) * per_y
        under += 0 if scale else 1
        draw.text(at(x, y), words, fill=INK, font=font)
    if sheet.title:
        big = ImageFont.truetype(str(FONT), 44 * SUPER)
        left, top, right, _ = draw.textbbox((0, 0), sheet.title, font=big)
        draw.text(((sheet.width * SUPER - (right - left)) / 2, (sheet.frame[1] - 150) * SUPER - top), sheet.title, fill=INK, font=big)
    for k, words in enumerate(sheet.imprint):  # below the frame's lower right, one line under another
        x = sheet.west + (sheet.east - sheet.west) * 0.6
        y = sheet.south - (words_below + 34 * (k + 1)) * per_y
        draw.text(at(x, y), words, fill=INK, font=font)
    if parts:
        draw_parts(draw, font)
    image = image.reduce(SUPER)
    if str(path).endswith(".jpg"):
        image.save(path, quality=quality)
    else:
        image.save(path)
    return path


# The parts draw_parts adds, in sheet pixels (for a sheet at least 3600 × 2250 whose frame is the default).
SYMBOLS = [  # (words, kind): the explanation of map symbols, one entry every 60 pixels from y 340
    ("Contact", "contact"),
    ("Fault—Dashed where approximately located", "fault"),
    ("Thrust fault—Teeth on upper plate", "thrust"),
    ("Anticline—Showing crestline", "anticline"),
    ("Strike and dip of beds", "dip"),
    ("Breccia pipe", "pipe"),
]
SYMBOLS_AT = (2450, 280)  # the heading's top left; samples at x 2450–2570, words from x 2600
CORRELATION = (2450, 760, ["Qal", "Tb", "Pk"])  # the heading's top left, then the boxes' codes
INDEX = (2450, 1260)  # the caption's top left; the little map under it
SCALE_AT = (1300, 1790)  # the caption's top left; the bar under it
SECTION_AT = (900, 1960)  # the caption's top left; the strip under it, 1400 × 150 from x 500
RED = (200, 30, 30)


def draw_parts(draw: ImageDraw.ImageDraw, font: ImageFont.FreeTypeFont) -> None:
    """Draws, beside and below the default frame: the explanation of map symbols (lines: a
    contact, a dashed red fault, a thrust with teeth below, an anticline with arrows; points: a
    strike-and-dip with its dip 35 beside it, a breccia pipe), the correlation of map units, an
    index map, a scale bar captioned SCALE 1:62 500 and a cross section captioned A-A'."""

    def box(x0, y0, x1, y1, fill=None, outline=None, width=1):
        draw.rectangle([x0 * SUPER, y0 * SUPER, x1 * SUPER - 1, y1 * SUPER - 1], fill=fill, outline=outline, width=width * SUPER)

    def write(x, y, words, size=None):
        draw.text((x * SUPER, y * SUPER), words, fill=INK, font=size or font)

    x, y = SYMBOLS_AT
    write(x, y, "EXPLANATION OF MAP SYMBOLS")
    for k, (words, kind) in enumerate(SYMBOLS):
        top = y + 60 + 60 * k
        mid = top + 16
        write(2600, top, words)
        if kind == "contact":
            box(2450, mid - 1, 2570, mid + 1, fill=INK)
        elif kind == "fault":
            for d in range(4):
                box(2450 + 30 * d, mid - 2, 2470 + 30 * d, mid + 2, fill=RED)
        elif kind == "thrust":
            box(2450, mid - 2, 2570, mid + 2, fill=INK)
            for t in range(4):
                tx = 2458 + 30 * t
                draw.polygon([(tx * SUPER, (mid + 3) * SUPER), ((tx + 12) * SUPER, (mid + 3) * SUPER), ((tx + 6) * SUPER, (mid + 12) * SUPER)], fill=INK)
        elif kind == "anticline":
            box(2450, mid - 2, 2570, mid + 2, fill=INK)
            draw.polygon([(2504 * SUPER, (mid - 4) * SUPER), (2516 * SUPER, (mid - 4) * SUPER), (2510 * SUPER, (mid - 14) * SUPER)], fill=INK)
            draw.polygon([(2504 * SUPER, (mid + 4) * SUPER), (2516 * SUPER, (mid + 4) * SUPER), (2510 * SUPER, (mid + 14) * SUPER)], fill=INK)
        elif kind == "dip":
            box(2495, mid - 2, 2525, mid + 1, fill=INK)
            box(2509, mid + 1, 2512, mid + 12, fill=INK)
            write(2535, top - 4, "35")
        elif kind == "pipe":
            draw.ellipse([2500 * SUPER, (mid - 8) * SUPER, 2516 * SUPER, (mid + 8) * SUPER], outline=INK, width=3 * SUPER)
    x, y, codes = CORRELATION
    write(x, y, "CORRELATION OF MAP UNITS")
    for k, (code, colour) in enumerate(zip(codes, [(250, 235, 150), (230, 120, 110), (120, 170, 230)])):
        top = y + 60 + 70 * k
        box(x + 120, top, x + 240, top + 50, fill=colour, outline=INK, width=2)
        write(x + 150, top + 8, code)
    x, y = INDEX
    write(x, y, "INDEX MAP")
    box(x, y + 50, x + 300, y + 300, outline=INK, width=3)
    box(x + 120, y + 110, x + 180, y + 150, fill=RED)
    write(x + 90, y + 220, "ARIZONA")
    x, y = SCALE_AT
    write(x, y, "SCALE 1:62 500")
    for k in range(5):
        box(x - 100 + 80 * k, y + 45, x - 20 + 80 * k, y + 57, fill=INK if k % 2 == 0 else PAPER, outline=INK, width=1)
        write(x - 108 + 80 * k, y + 62, str(k))
    write(x + 320, y + 62, "MILES")
    x, y = SECTION_AT
    write(x, y, "CROSS SECTION A-A'")
    for k, colour in enumerate([(250, 235, 150), (230, 120, 110), (120, 170, 230)]):
        box(500, y + 50 + 50 * k, 1900, y + 100 + 50 * k, fill=colour)
    write(470, y + 40, "A")
    write(1910, y + 40, "A'")


def utm_sheet(skew: float = 0.0) -> Sheet:
    """A UTM sheet: 8 km by 6 km in zone 12, ticks every 2 km (east) and 1.5 km (north), NAD83."""
    return Sheet(west=384.0, east=392.0, south=3950.0, north=3956.0, skew=skew, words=["UTM grid zone 12", "North American Datum of 1983", "SCALE 1:24 000"])


def fitted_and_true(sheet: Sheet, geotransform: list, unit: float = 1.0, samples: int = 400, seed: int = 3) -> list:
    """(fitted, truth) ground pairs at random pixels inside the frame, under an affine geotransform
    whose ground is in `unit`s of the sheet's (1000 for metres on a sheet in km)."""
    rng = random.Random(seed)
    left, top, right, bottom = sheet.frame
    x0, a, b, y0, c, d = geotransform
    pairs = []
    for _ in range(samples):
        col, row = sheet.turn(rng.uniform(left, right), rng.uniform(top, bottom))
        pairs.append((((x0 + a * col + b * row) / unit, (y0 + c * col + d * row) / unit), sheet.ground(col, row)))
    return pairs


def error_px(sheet: Sheet, geotransform: list, unit: float = 1.0) -> float:
    """Root-mean-square distance, in pixels' worth, between the fitted ground and the truth over
    random pixels inside the frame."""
    left, top, right, bottom = sheet.frame
    per_x = (sheet.east - sheet.west) / (right - left)
    per_y = (sheet.north - sheet.south) / (bottom - top)
    pairs = fitted_and_true(sheet, geotransform, unit)
    return math.sqrt(sum(((f[0] - t[0]) / per_x) ** 2 + ((f[1] - t[1]) / per_y) ** 2 for f, t in pairs) / len(pairs))

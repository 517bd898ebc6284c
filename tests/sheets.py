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
    image = image.reduce(SUPER)
    if str(path).endswith(".jpg"):
        image.save(path, quality=quality)
    else:
        image.save(path)
    return path


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

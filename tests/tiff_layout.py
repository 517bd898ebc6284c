"""The layout a Cloud Optimized GeoTIFF must have, read straight from the file's bytes (the checks of
GDAL's validate_cloud_optimized_geotiff sample, which Debian's GDAL packages do not ship):

- GDAL's structural metadata right after the header, saying the IFDs come before the data;
- every IFD (the full-resolution image, then each overview, largest first) before any tile's data;
- every image tiled, its tiles stored in order, and each overview's tiles before those of the
  larger image above it (a reader streams the small overview first).
"""

from __future__ import annotations

import struct
from pathlib import Path

TILE_WIDTH, TILE_OFFSETS, TILE_BYTE_COUNTS, NEW_SUBFILE_TYPE, IMAGE_WIDTH = 322, 324, 325, 254, 256
TYPES = {1: ("B", 1), 2: ("c", 1), 3: ("H", 2), 4: ("I", 4), 5: ("II", 8), 10: ("ii", 8), 13: ("I", 4), 16: ("Q", 8), 18: ("Q", 8), 6: ("b", 1), 7: ("B", 1), 8: ("h", 2), 9: ("i", 4), 11: ("f", 4), 12: ("d", 8), 17: ("q", 8)}


def read_ifds(data: bytes) -> tuple[list[tuple[int, dict[int, list]]], int]:
    """Each IFD's offset and tags (tag -> values), and the header's size."""
    order = {b"II": "<", b"MM": ">"}[data[:2]]
    version = struct.unpack_from(order + "H", data, 2)[0]
    big = version == 43
    offset = struct.unpack_from(order + ("Q" if big else "I"), data, 8 if big else 4)[0]
    header = 16 if big else 8
    ifds = []
    while offset:
        count = struct.unpack_from(order + ("Q" if big else "H"), data, offset)[0]
        entry_size, start = (20, offset + 8) if big else (12, offset + 2)
        tags = {}
        for index in range(count):
            at = start + index * entry_size
            tag, kind = struct.unpack_from(order + "HH", data, at)
            number = struct.unpack_from(order + ("Q" if big else "I"), data, at + 4)[0]
            code, size = TYPES[kind]
            inline = 8 if big else 4
            value_at = at + (12 if big else 8)
            if size * number > inline:
                value_at = struct.unpack_from(order + ("Q" if big else "I"), data, value_at)[0]
            tags[tag] = list(struct.unpack_from(order + code * number, data, value_at))
        ifds.append((offset, tags))
        offset = struct.unpack_from(order + ("Q" if big else "I"), data, start + count * entry_size)[0]
    return ifds, header


def cog_problems(path: Path | str) -> list[str]:
    """What keeps the file from being a Cloud Optimized GeoTIFF (empty when it is one)."""
    data = Path(path).read_bytes()
    ifds, header = read_ifds(data)
    problems = []
    ghost = data[header : header + 200]
    if not ghost.startswith(b"GDAL_STRUCTURAL_METADATA_SIZE=") or b"LAYOUT=IFDS_BEFORE_DATA" not in ghost:
        problems.append("no GDAL structural metadata saying LAYOUT=IFDS_BEFORE_DATA after the header")
    images = [(offset, tags) for offset, tags in ifds if not tags.get(NEW_SUBFILE_TYPE, [0])[0] & 4]  # masks aside
    if any(TILE_WIDTH not in tags for _, tags in images):
        problems.append("an image is not tiled")
        return problems
    first_data = min(offset for _, tags in ifds for offset, size in zip(tags[TILE_OFFSETS], tags[TILE_BYTE_COUNTS]) if size)
    if max(offset for offset, _ in ifds) > first_data:
        problems.append("an IFD comes after tile data")
    widths = [tags[IMAGE_WIDTH][0] for _, tags in images]
    if widths != sorted(widths, reverse=True):
        problems.append(f"the images are not largest first: widths {widths}")
    starts = []
    for index, (_, tags) in enumerate(images):
        offsets = [offset for offset, size in zip(tags[TILE_OFFSETS], tags[TILE_BYTE_COUNTS]) if size]
        if offsets != sorted(offsets):
            problems.append(f"image {index}'s tiles are not stored in order")
        starts.append(min(offsets))
    if starts != sorted(starts, reverse=True):
        problems.append("an overview's tiles come after those of a larger image")
    return problems


def overview_count(path: Path | str) -> int:
    """How many reduced-resolution images (overviews, masks aside) the file holds."""
    ifds, _ = read_ifds(Path(path).read_bytes())
    return sum(1 for _, tags in ifds if tags.get(NEW_SUBFILE_TYPE, [0])[0] == 1)

"""The Python pipeline geomap_extract_units is measured against, for tests/bench/bench_units.py: the
same steps with numpy and GDAL's Python bindings (Debian's python3-gdal and python3-numpy): the main
map read with GDAL, CIELAB nearest swatch within ΔE 15 (ink: nearly black or grey), a 7 × 7 mode
filter in which ink does not vote (per-class box sums), ink filled by repeated passes, GDAL's sieve and
polygonize into a GeoPackage. Prints one JSON line: seconds per stage and the peak resident memory.
Usage: python3 units_pipeline.py SCAN X0 Y0 X1 Y1 MIN_AREA OUT_DIR RRGGBB..."""

import json
import resource
import sys
import time

import numpy
from osgeo import gdal, ogr

gdal.UseExceptions()


def lab(rgb: numpy.ndarray) -> numpy.ndarray:
    c = rgb.astype(numpy.float32) / 255.0
    c = numpy.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    x = (c @ numpy.array([0.4124, 0.3576, 0.1805], numpy.float32)) / 0.95047
    y = c @ numpy.array([0.2126, 0.7152, 0.0722], numpy.float32)
    z = (c @ numpy.array([0.0193, 0.1192, 0.9505], numpy.float32)) / 1.08883
    f = lambda t: numpy.where(t > 216 / 24389, numpy.cbrt(t), (24389 / 27 * t + 16) / 116)  # noqa: E731
    fx, fy, fz = f(x), f(y), f(z)
    return numpy.stack([116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)], axis=-1)


def box_sum(mask: numpy.ndarray, radius: int) -> numpy.ndarray:
    padded = numpy.pad(mask.astype(numpy.int32), radius + 1)[:-1, :-1]
    summed = padded.cumsum(0).cumsum(1)
    k = 2 * radius + 1
    return summed[k:, k:] - summed[:-k, k:] - summed[k:, :-k] + summed[:-k, :-k]


def main() -> None:
    scan, x0, y0, x1, y1, min_area, out = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7]
    swatches = numpy.array([[int(h[i : i + 2], 16) for i in (0, 2, 4)] for h in sys.argv[8:]], numpy.uint8)
    timings = {}
    started = time.perf_counter()
    dataset = gdal.Open(scan)
    rgb = numpy.dstack([dataset.GetRasterBand(b).ReadAsArray(x0, y0, x1 - x0, y1 - y0) for b in (1, 2, 3)])
    timings["read_s"] = time.perf_counter() - started
    started = time.perf_counter()
    classes = numpy.zeros(rgb.shape[:2], numpy.uint8)
    for top in range(0, rgb.shape[0], 512):  # in strips, as numpy would otherwise hold float copies of the whole map
        here = lab(rgb[top : top + 512])
        distances = numpy.stack([numpy.linalg.norm(here - lab(swatch[None, None, :])[0, 0], axis=-1) for swatch in swatches], axis=-1)
        nearest = distances.argmin(-1)
        best = numpy.take_along_axis(distances, nearest[..., None], -1)[..., 0]
        chroma = numpy.hypot(here[..., 1], here[..., 2])
        ink = (here[..., 0] < 25) | ((chroma < 12) & (here[..., 0] < 90))
        strip = numpy.where(best <= 15, nearest + 1, numpy.where(ink, 255, 0)).astype(numpy.uint8)
        classes[top : top + 512] = strip
    del rgb
    timings["classify_s"] = time.perf_counter() - started
    started = time.perf_counter()
    units = len(swatches)
    votes = numpy.stack([box_sum(classes == k, 3) for k in range(units + 1)], axis=0)
    voters = votes.sum(0)
    mode = votes.argmax(0).astype(numpy.uint8)
    own = numpy.take_along_axis(votes, numpy.minimum(classes, units)[None].astype(numpy.int64), 0)[0]
    change = (voters > 0) & ((classes == 255) | (own * 2 < voters))
    classes = numpy.where(change, mode, classes)
    del votes
    for _ in range(8):
        ink = classes == 255
        if not ink.any():
            break
        votes = numpy.stack([box_sum(classes == k, 3) for k in range(units + 1)], axis=0)
        filled = ink & (votes.sum(0) > 0)
        classes = numpy.where(filled, votes.argmax(0).astype(numpy.uint8), classes)
        del votes
    classes[classes == 255] = 0
    timings["fill_s"] = time.perf_counter() - started
    started = time.perf_counter()
    memory = gdal.GetDriverByName("MEM").Create("", classes.shape[1], classes.shape[0], 1, gdal.GDT_Byte)
    memory.SetGeoTransform([x0, 1, 0, y0, 0, 1])
    band = memory.GetRasterBand(1)
    band.WriteArray(classes)
    gdal.SieveFilter(band, band, band, min_area, 4)
    timings["sieve_s"] = time.perf_counter() - started
    started = time.perf_counter()
    package = ogr.GetDriverByName("GPKG").CreateDataSource(f"{out}/python.gpkg")
    layer = package.CreateLayer("polygon_feature", geom_type=ogr.wkbPolygon)
    layer.CreateField(ogr.FieldDefn("class", ogr.OFTInteger))
    package.StartTransaction()
    gdal.Polygonize(band, band, layer, 0, [])
    package.CommitTransaction()
    package = None
    gdal.GetDriverByName("GTiff").CreateCopy(f"{out}/python.tif", memory)
    timings["polygonize_s"] = time.perf_counter() - started
    timings["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(timings))


main()

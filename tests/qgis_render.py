"""Opens a GeoPackage in QGIS headless (Debian's python3-qgis, offscreen), as a user opening the file
would: each feature layer with its default style from the file, then renders one layer over an
extent to a PNG. Run with Debian's own Python (/usr/bin/python3), not the test venv:

    python3 qgis_render.py PACKAGE LAYER WEST SOUTH EAST NORTH WIDTH HEIGHT OUT.png

Prints, as JSON, per feature layer: its renderer, its categories (value, label, colour), whether it
is labelled, and the number of features; then renders LAYER's fills over the extent to OUT.png
(labels off, so the colours show) and prints the extent QGIS drew (widened to the image's shape)."""

import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsMapRendererParallelJob, QgsMapSettings, QgsRectangle, QgsVectorLayer  # noqa: E402
from qgis.PyQt.QtCore import QSize  # noqa: E402
from qgis.PyQt.QtGui import QColor  # noqa: E402


def main() -> None:
    package, name, west, south, east, north, width, height, out = sys.argv[1:10]
    app = QgsApplication([], False)
    app.initQgis()
    report = {}
    for layer_name in ("polygon_feature", "polygon_feature_georeferenced", "line_feature", "point_feature"):
        layer = QgsVectorLayer(f"{package}|layername={layer_name}", layer_name, "ogr")
        if not layer.isValid():
            continue
        renderer = layer.renderer()
        categories = []
        if renderer.type() == "categorizedSymbol":
            categories = [(c.value(), c.label(), c.symbol().color().name()) for c in renderer.categories()]
        report[layer_name] = {
            "renderer": renderer.type(),
            "categories": categories,
            "labelled": bool(layer.labelsEnabled()),
            "features": layer.featureCount(),
        }
    layer = QgsVectorLayer(f"{package}|layername={name}", name, "ogr")
    layer.setLabelsEnabled(False)
    settings = QgsMapSettings()
    settings.setLayers([layer])
    settings.setBackgroundColor(QColor(255, 255, 255))
    settings.setOutputSize(QSize(int(width), int(height)))
    settings.setExtent(QgsRectangle(float(west), float(south), float(east), float(north)))
    if layer.crs().isValid():
        settings.setDestinationCrs(layer.crs())
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    job.renderedImage().save(out, "PNG")
    drawn = settings.visibleExtent()
    print(json.dumps({"layers": report, "extent": [drawn.xMinimum(), drawn.yMinimum(), drawn.xMaximum(), drawn.yMaximum()]}), flush=True)
    # QGIS 3.22's Python bindings crash tearing down (exitQgis with layers alive): the work is done
    # and written, so leave without it.
    os._exit(0)


main()

"""Checks a GeoPackage against the DARPA CriticalMAAS TA1 schema with the schema's own package
(`criticalmaas-ta1-geopackage`): the package opens it as a new user would, every table, column,
foreign key and enumeration of a package it creates itself is in it as the schema defines them, and
`check_constraints` passes on every table."""

import sqlite3
import tempfile
import warnings
from functools import cache
from pathlib import Path

from criticalmaas.ta1_geopackage import GeopackageDatabase


@cache
def reference() -> dict:
    """The schema as the package creates it (in pixel coordinates): per table, its columns
    (name → (type, not null, primary key)) and its foreign keys; per enumeration, its values."""
    folder = Path(tempfile.mkdtemp(prefix="ta1-reference-"))
    GeopackageDatabase(folder / "reference.gpkg", crs="CRITICALMAAS:0").engine.dispose()
    return describe(folder / "reference.gpkg")


def describe(path) -> dict:
    with sqlite3.connect(path) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'rtree_%'")]
        columns = {t: {row[1]: (row[2].upper(), row[3], row[5]) for row in db.execute(f"PRAGMA table_info('{t}')")} for t in tables}
        keys = {t: {(row[3], row[2], row[4]) for row in db.execute(f"PRAGMA foreign_key_list('{t}')")} for t in tables}
        enums = {t: {row[0] for row in db.execute(f"SELECT * FROM {t}")} for t in tables if t.startswith("enum_")}
        geometry = {row[0]: (row[1], row[2], row[3]) for row in db.execute("SELECT table_name, column_name, geometry_type_name, srs_id FROM gpkg_geometry_columns")}
        pixel = db.execute("SELECT organization, definition FROM gpkg_spatial_ref_sys WHERE srs_id = 0").fetchone()
        counts = {t: db.execute(f"SELECT count(*) FROM '{t}'").fetchone()[0] for t in tables}
    return {"columns": columns, "keys": keys, "enums": enums, "geometry": geometry, "pixel": pixel, "counts": counts}


def assert_ta1(path) -> dict:
    """Asserts that the GeoPackage at `path` is a complete TA1 GeoPackage the schema's package opens
    and whose every table passes its constraints; returns its row count per schema table."""
    want, got = reference(), describe(path)
    missing = sorted(set(want["columns"]) - set(got["columns"]))
    assert not missing, f"tables missing: {missing}"
    for table, columns in want["columns"].items():
        for column, spec in columns.items():
            assert got["columns"][table].get(column) == spec, f"{table}.{column}: {got['columns'][table].get(column)} instead of {spec}"
        assert want["keys"][table] <= got["keys"][table], f"{table}'s foreign keys: missing {want['keys'][table] - got['keys'][table]}"
    for table, values in want["enums"].items():
        assert got["enums"][table] == values, f"{table}: {sorted(got['enums'][table] ^ values)} differ from the schema's"
    for table, (column, kind, srs) in want["geometry"].items():
        if table in got["columns"]:
            assert got["geometry"].get(table) == (column, kind, srs), f"{table}'s geometry: {got['geometry'].get(table)}"
    assert got["pixel"] == want["pixel"], f"srs_id 0 is {got['pixel']}, not the schema's pixel coordinates"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # opening an existing file must not fall back to creating one
        db = GeopackageDatabase(path, create=False)
    try:
        for table in want["columns"]:
            db.check_constraints(table)
        assert db.enum_values("line_type") >= {(name,) for name in want["enums"]["enum_line_type"]}
    finally:
        db.engine.dispose()
    return {table: got["counts"][table] for table in want["columns"] if not table.startswith(("enum_", "gpkg_")) and table != "geometry_columns"}

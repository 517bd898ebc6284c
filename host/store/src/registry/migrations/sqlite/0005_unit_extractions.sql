-- Registry schema 5: a map's units as GIS layers. Every geomap_extract_units call writes one
-- row, never rewritten: the geomap-units/v1 document, whose `files` name what lies in
-- <data root>/artifacts/<map_id>/layouts/<units_id>/ (the GeoPackage, the unit raster, the preview).

CREATE TABLE unit_extractions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    units_id   TEXT    NOT NULL UNIQUE,   -- unt_ + 20 random hex
    map        INTEGER NOT NULL REFERENCES maps (id),
    created_at TEXT    NOT NULL,          -- RFC 3339, UTC
    document   TEXT    NOT NULL           -- the extraction as JSON (geomap-units/v1)
) STRICT;
CREATE INDEX unit_extractions_by_map ON unit_extractions (map, id);

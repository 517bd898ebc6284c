-- Registry schema 5 (PostgreSQL): a map's units as GIS layers, as SQLite's schema 5.

CREATE TABLE unit_extractions (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    units_id   TEXT   NOT NULL UNIQUE,   -- unt_ + 20 random hex
    map        BIGINT NOT NULL REFERENCES maps (id),
    created_at TEXT   NOT NULL,          -- RFC 3339, UTC
    document   TEXT   NOT NULL           -- the extraction as JSON (geomap-units/v1)
);
CREATE INDEX unit_extractions_by_map ON unit_extractions (map, id);

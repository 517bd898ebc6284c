-- Registry schema 3 (PostgreSQL): layouts, as SQLite's schema 3.

CREATE TABLE layouts (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    layout_id  TEXT   NOT NULL UNIQUE,   -- lay_ + 20 random hex
    map        BIGINT NOT NULL REFERENCES maps (id),
    created_at TEXT   NOT NULL,          -- RFC 3339, UTC
    document   TEXT   NOT NULL           -- the layout as JSON (geomap-layout/v1)
);
CREATE INDEX layouts_by_map ON layouts (map, id);

-- Registry schema 4 (PostgreSQL): text readings in a table of their own, as SQLite's schema 4
-- (which moves the readings schema 3 kept in `layouts`; the same statements here).

CREATE TABLE readings (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reading_id TEXT   NOT NULL UNIQUE,   -- txt_ + 20 random hex
    map        BIGINT NOT NULL REFERENCES maps (id),
    created_at TEXT   NOT NULL,          -- RFC 3339, UTC
    document   TEXT   NOT NULL           -- the reading as JSON (geomap-text/v1)
);
CREATE INDEX readings_by_map ON readings (map, id);

INSERT INTO readings (reading_id, map, created_at, document)
    SELECT layout_id, map, created_at, document FROM layouts WHERE layout_id LIKE 'txt\_%' ESCAPE '\' ORDER BY id;
DELETE FROM layouts WHERE layout_id LIKE 'txt\_%' ESCAPE '\';

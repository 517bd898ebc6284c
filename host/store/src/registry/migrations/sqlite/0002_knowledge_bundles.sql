-- Registry schema 2: knowledge bundles. Every geomap_query_knowledge call
-- writes one row, never rewritten: what each provider answered about an area,
-- and the map and revision the area came from (both NULL for a bare area).

CREATE TABLE bundles (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    bundle_id   TEXT    NOT NULL UNIQUE,   -- kb_ + 20 random hex
    map         INTEGER REFERENCES maps (id),
    revision_id TEXT,                      -- the revision whose wgs84_bounds was the area
    created_at  TEXT    NOT NULL,          -- RFC 3339, UTC
    document    TEXT    NOT NULL           -- the bundle as JSON, as the tool returned it
) STRICT;
CREATE INDEX bundles_by_map ON bundles (map, id);

INSERT INTO counts (kind, n) VALUES ('bundles', 0);
CREATE TRIGGER bundles_counted AFTER INSERT ON bundles BEGIN
    UPDATE counts SET n = n + 1 WHERE kind = 'bundles';
END;

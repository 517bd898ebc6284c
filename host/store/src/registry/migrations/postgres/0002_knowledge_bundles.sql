-- Registry schema 2 (PostgreSQL): knowledge bundles, as SQLite's schema 2.

CREATE TABLE bundles (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bundle_id   TEXT   NOT NULL UNIQUE,   -- kb_ + 20 random hex
    map         BIGINT REFERENCES maps (id),
    revision_id TEXT,                     -- the revision whose wgs84_bounds was the area
    created_at  TEXT   NOT NULL,          -- RFC 3339, UTC
    document    TEXT   NOT NULL           -- the bundle as JSON, as the tool returned it
);
CREATE INDEX bundles_by_map ON bundles (map, id);

INSERT INTO counts (kind, n) VALUES ('bundles', 0);
CREATE TRIGGER bundles_counted AFTER INSERT ON bundles FOR EACH ROW EXECUTE FUNCTION registry_counted('bundles');

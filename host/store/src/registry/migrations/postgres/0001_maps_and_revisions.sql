-- Registry schema 1 (PostgreSQL): maps, their revisions and the files each revision wrote.
-- The same tables as SQLite's schema 1. Rows are never rewritten except maps.modified_ns; ids
-- come from identity columns and, since every write holds the registry's advisory lock, grow in
-- commit order, so they order listings and keep pagination cursors stable.

CREATE TABLE maps (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    map_id        TEXT   NOT NULL UNIQUE,  -- map_ + 20 hex of SHA-256(root, relative_path, sha256)
    root          TEXT   NOT NULL,         -- canonical map root (server-side only)
    relative_path TEXT   NOT NULL,         -- canonical path inside the root
    media_type    TEXT   NOT NULL,         -- sniffed MIME type
    width         BIGINT NOT NULL,
    height        BIGINT NOT NULL,
    bytes         BIGINT NOT NULL,
    sha256        TEXT   NOT NULL,
    modified_ns   BIGINT NOT NULL,         -- file mtime when last registered, ns since the epoch
    registered_at TEXT   NOT NULL          -- RFC 3339, UTC
);

-- One georeference of a map. `document` is the revision as JSON
-- (georef::Revision without its artifacts, which have their own rows).
CREATE TABLE revisions (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    revision_id TEXT   NOT NULL UNIQUE,
    map         BIGINT NOT NULL REFERENCES maps (id),
    document    TEXT   NOT NULL
);
CREATE INDEX revisions_by_map ON revisions (map, id);

-- Files a revision wrote under <artifact root>/<map_id>/<revision_id>/.
CREATE TABLE artifacts (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    revision   BIGINT NOT NULL REFERENCES revisions (id),
    name       TEXT   NOT NULL,
    media_type TEXT   NOT NULL,
    bytes      BIGINT NOT NULL,
    UNIQUE (revision, name)
);

-- Row counts kept by triggers, so capabilities never counts a growing table.
CREATE TABLE counts (
    kind TEXT   PRIMARY KEY,
    n    BIGINT NOT NULL
);
INSERT INTO counts (kind, n) VALUES ('maps', 0), ('revisions', 0);
CREATE FUNCTION registry_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE counts SET n = n + 1 WHERE kind = TG_ARGV[0];
    RETURN NULL;
END
$$;
CREATE TRIGGER maps_counted AFTER INSERT ON maps FOR EACH ROW EXECUTE FUNCTION registry_counted('maps');
CREATE TRIGGER revisions_counted AFTER INSERT ON revisions FOR EACH ROW EXECUTE FUNCTION registry_counted('revisions');

-- Registry schema 1: maps, their revisions and the files each revision wrote.
-- Rows are never rewritten except maps.modified_ns; integer ids grow with
-- every insert and are never reused (AUTOINCREMENT), so they order listings
-- and make pagination cursors stable under concurrent inserts.

CREATE TABLE maps (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    map_id        TEXT    NOT NULL UNIQUE,  -- map_ + 20 hex of SHA-256(root, relative_path, sha256)
    root          TEXT    NOT NULL,         -- canonical map root (server-side only)
    relative_path TEXT    NOT NULL,         -- canonical path inside the root
    media_type    TEXT    NOT NULL,         -- sniffed MIME type
    width         INTEGER NOT NULL,
    height        INTEGER NOT NULL,
    bytes         INTEGER NOT NULL,
    sha256        TEXT    NOT NULL,
    modified_ns   INTEGER NOT NULL,         -- file mtime when last registered, ns since the epoch
    registered_at TEXT    NOT NULL          -- RFC 3339, UTC
) STRICT;

-- One georeference of a map. `document` is the revision as JSON
-- (georef::Revision without its artifacts, which have their own rows).
CREATE TABLE revisions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    revision_id TEXT    NOT NULL UNIQUE,
    map         INTEGER NOT NULL REFERENCES maps (id),
    document    TEXT    NOT NULL
) STRICT;
CREATE INDEX revisions_by_map ON revisions (map, id);

-- Files a revision wrote under <data root>/artifacts/<map_id>/<revision_id>/.
CREATE TABLE artifacts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    revision   INTEGER NOT NULL REFERENCES revisions (id),
    name       TEXT    NOT NULL,
    media_type TEXT    NOT NULL,
    bytes      INTEGER NOT NULL,
    UNIQUE (revision, name)
) STRICT;

-- Row counts kept by triggers, so capabilities never counts a growing table.
CREATE TABLE counts (
    kind TEXT    PRIMARY KEY,
    n    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO counts (kind, n) VALUES ('maps', 0), ('revisions', 0);
CREATE TRIGGER maps_counted AFTER INSERT ON maps BEGIN
    UPDATE counts SET n = n + 1 WHERE kind = 'maps';
END;
CREATE TRIGGER revisions_counted AFTER INSERT ON revisions BEGIN
    UPDATE counts SET n = n + 1 WHERE kind = 'revisions';
END;

-- Registry schema 4: text readings get a table of their own. Every geomap_read_text call writes
-- one row, never rewritten: the geomap-text/v1 document, whose `files` name what lies in
-- <data root>/artifacts/<map_id>/layouts/<reading_id>/. Schema 3 kept them in `layouts`, told
-- apart by their `txt_` prefix; they move here once.

CREATE TABLE readings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    reading_id TEXT    NOT NULL UNIQUE,   -- txt_ + 20 random hex
    map        INTEGER NOT NULL REFERENCES maps (id),
    created_at TEXT    NOT NULL,          -- RFC 3339, UTC
    document   TEXT    NOT NULL           -- the reading as JSON (geomap-text/v1)
) STRICT;
CREATE INDEX readings_by_map ON readings (map, id);

INSERT INTO readings (reading_id, map, created_at, document)
    SELECT layout_id, map, created_at, document FROM layouts WHERE layout_id LIKE 'txt\_%' ESCAPE '\' ORDER BY id;
DELETE FROM layouts WHERE layout_id LIKE 'txt\_%' ESCAPE '\';

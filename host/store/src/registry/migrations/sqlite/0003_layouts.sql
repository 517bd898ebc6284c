-- Registry schema 3: layouts. Every geomap_process_image call that runs the
-- detectors writes one row, never rewritten: the geomap-layout/v1 document,
-- whose `files` name what lies in <data root>/artifacts/<map_id>/layouts/<layout_id>/.

CREATE TABLE layouts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    layout_id  TEXT    NOT NULL UNIQUE,   -- lay_ + 20 random hex
    map        INTEGER NOT NULL REFERENCES maps (id),
    created_at TEXT    NOT NULL,          -- RFC 3339, UTC
    document   TEXT    NOT NULL           -- the layout as JSON (geomap-layout/v1)
) STRICT;
CREATE INDEX layouts_by_map ON layouts (map, id);

//! Every setting an operator can make, in one list: README's settings table and
//! `--help` are both made from [`VARIABLES`], and tests fail when README or the
//! settings parser drift from it.

/// One setting as operators read about it.
#[derive(Debug, Clone, Copy)]
pub struct Variable {
    /// The environment variable (the config file's key is this without `GEOMAP_`, in lower case).
    pub name: &'static str,
    /// What it sets, in Markdown (backticks for literals).
    pub meaning: &'static str,
    /// What holds when it is unset, in Markdown.
    pub default: &'static str,
}

/// Every setting, in README's order.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "GEOMAP_CONFIG",
        meaning: "a TOML file with the same settings (keys in lower case without `GEOMAP_`), per-provider limits, custom asset paths and sources, assets declared for the operator's own providers",
        default: "unset",
    },
    Variable { name: "GEOMAP_DATA_ROOT", meaning: "registry, artifacts, assets, caches", default: "platform data dir + `stratigraphic-amenity`" },
    Variable {
        name: "GEOMAP_ARTIFACT_ROOT",
        meaning: "where revision and layout folders (`artifacts/`) and the pixel store (`cache/pixels/`) are written: give every replica the same shared folder (see Replicas)",
        default: "`$GEOMAP_DATA_ROOT`",
    },
    Variable {
        name: "GEOMAP_REGISTRY_URL",
        meaning: "keep the registry in PostgreSQL (`postgres://user@host:port/database?sslmode=…`; what the URL leaves out comes from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`), shared by every server given the same URL",
        default: "unset: SQLite, `$GEOMAP_DATA_ROOT/registry.sqlite`",
    },
    Variable {
        name: "GEOMAP_MAP_ROOTS",
        meaning: "allowed folders for map files (`:`-separated; the first resolves relative paths; must exist)",
        default: "`$GEOMAP_DATA_ROOT/maps` (created)",
    },
    Variable {
        name: "GEOMAP_PROVIDER_ROOTS",
        meaning: "allowed folders for provider components (`:`-separated), beside the first-party ones",
        default: "`$GEOMAP_DATA_ROOT/providers`",
    },
    Variable { name: "GEOMAP_PROVIDERS", meaning: "providers to enable (comma-separated names)", default: "all found" },
    Variable { name: "GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION", meaning: "`false` withholds `geomap_prepare_detectors`", default: "enabled" },
    Variable { name: "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", meaning: "`false` withholds `geomap_prepare_knowledge`", default: "enabled" },
    Variable { name: "GEOMAP_MAX_IMAGE_BYTES", meaning: "largest map file (`KiB`/`MiB`/`GiB` suffixes allowed)", default: "1 GiB" },
    Variable { name: "GEOMAP_MAX_IMAGE_PIXELS", meaning: "largest map, width × height", default: "150,000,000" },
    Variable {
        name: "GEOMAP_ASSET_MIRROR",
        meaning: "base URL to fetch approved assets from instead of upstream: every file is fetched from `<mirror>/<file name>` \
                  (a flat folder of the files served over HTTP is a mirror)",
        default: "unset",
    },
    Variable { name: "GEOMAP_ASSET_TIMEOUT", meaning: "how long a download may receive nothing before it fails with `timeout`", default: "`30s`" },
    Variable {
        name: "GEOMAP_CONSENT_TIMEOUT",
        meaning: "how long a preparation tool waits for the user's answer to its download question; no answer by then counts as not given",
        default: "`10m`",
    },
    Variable { name: "GEOMAP_LOG", meaning: "tracing filter; the log goes to stderr", default: "`info`" },
    Variable { name: "GEOMAP_HTTP_LISTEN", meaning: "serve streamable HTTP on `ADDR:PORT` instead of stdio (as `serve --http`)", default: "unset (stdio)" },
    Variable { name: "GEOMAP_HTTP_TOKENS_FILE", meaning: "bearer tokens, one per line; required off loopback", default: "unset" },
    Variable {
        name: "GEOMAP_REPLICA_ID",
        meaning: "this replica's name behind a load balancer (letters, digits, `-`, `_`): 2025-11-25 session IDs start with `<name>.`, which the load balancer routes by (see Replicas)",
        default: "unset",
    },
    Variable { name: "GEOMAP_HTTP_ALLOWED_HOSTS", meaning: "host names (or `host:port`) clients may use besides loopback, comma-separated", default: "none" },
    Variable {
        name: "GEOMAP_MAX_HEAVY_CALLS",
        meaning: "detection, reading, unit_at, georeference and download calls running at once",
        default: "number of cores",
    },
    Variable { name: "GEOMAP_SHUTDOWN_GRACE", meaning: "how long calls in flight may finish after SIGTERM or SIGINT", default: "`30s`" },
    Variable {
        name: "GEOMAP_WORKER_THREADS",
        meaning: "threads one georeference warps, compresses and builds overviews on and one unit extraction simplifies its polygons and compresses its raster on (with two or more, one more thread traces its structure meanwhile); also the threads detection and OCR models may use at once, shared by all calls",
        default: "number of cores",
    },
    Variable {
        name: "GEOMAP_GEOREF_COMPRESSION",
        meaning: "georeferenced images: `deflate` (with predictor, lossless), `jpeg` or `webp` (quality 90: files about a tenth the size, lossy)",
        default: "`deflate`",
    },
    Variable {
        name: "GEOMAP_GEOREF_MEMORY",
        meaning: "the most one georeference's warp buffers, and GDAL's block cache, may each take (sized from the scan below that; byte suffixes allowed)",
        default: "1 GiB",
    },
    Variable {
        name: "GEOMAP_PIXEL_CACHE",
        meaning: "the most the pixel store (each registered scan decoded once into tiles, under `$GEOMAP_ARTIFACT_ROOT/cache/pixels`) may take on disk; the scans used longest ago go first (byte suffixes allowed)",
        default: "4 GiB",
    },
    Variable {
        name: "GEOMAP_OCR_MODELS",
        meaning: "the PP-OCR models that read the maps' words: `ppocr-v4` or `ppocr-v5` (each the approved asset of that name, installed by `geomap_prepare_detectors`; see Assets for how they compare)",
        default: "`ppocr-v4`",
    },
];

/// README's settings table, in Markdown.
pub fn markdown_table() -> String {
    let mut table = String::from("| variable | meaning | default |\n|---|---|---|\n");
    for variable in VARIABLES {
        table.push_str(&format!("| `{}` | {} | {} |\n", variable.name, variable.meaning, variable.default));
    }
    table
}

/// The settings part of `--help`: one line each, in plain text.
pub fn help_text() -> String {
    let plain = |text: &str| text.replace('`', "");
    let width = VARIABLES.iter().map(|variable| variable.name.len()).max().unwrap_or(0);
    VARIABLES.iter().map(|variable| format!("    {:<width$}  {} (default: {})\n", variable.name, plain(variable.meaning), plain(variable.default))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_holds_the_settings_table_made_from_the_list() {
        let readme = include_str!("../../../../README.md");
        assert!(readme.contains(&markdown_table()), "README's settings table drifted from settings::VARIABLES; it should read:\n{}", markdown_table());
    }

    #[test]
    fn every_variable_the_parser_reads_is_listed_and_every_listed_one_is_read() {
        let parser = include_str!("mod.rs");
        let read: std::collections::BTreeSet<&str> = parser
            .split('"')
            .filter(|word| word.starts_with("GEOMAP_") && word.len() > 7 && word.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .collect();
        let listed: std::collections::BTreeSet<&str> = VARIABLES.iter().map(|variable| variable.name).collect();
        assert_eq!(read, listed);
    }
}

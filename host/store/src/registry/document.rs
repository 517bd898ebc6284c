//! The registry as one JSON document: the `registry.json` of earlier versions
//! (schema 1, and 2 with revisions), and what `registry export` writes and
//! `registry import` reads (schema 2), so an export is also a file the
//! migration takes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CorruptProblem, MapRecord, RegistryError};

/// The document version `export` writes. Version 2 added map revisions.
pub const DOCUMENT_VERSION: u32 = 2;
/// Versions `import` and the migration read.
const READABLE_VERSIONS: [u32; 2] = [1, DOCUMENT_VERSION];

/// The whole registry as one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistryDocument {
    /// One of the readable versions.
    pub schema_version: u32,
    /// Registered maps by ID, each with its revisions (oldest first).
    #[serde(default)]
    pub maps: BTreeMap<String, MapRecord>,
}

impl RegistryDocument {
    /// Reads and checks the document at `path`; a file that is not one (or of
    /// a version this server does not know) is [`RegistryError::Corrupt`].
    pub fn read(path: &Path) -> Result<RegistryDocument, RegistryError> {
        let corrupt = |problem| RegistryError::Corrupt { path: path.to_owned(), problem };
        let text = std::fs::read(path).map_err(|source| RegistryError::Io { action: "read", path: path.to_owned(), source })?;
        #[derive(Deserialize)]
        struct VersionOnly {
            schema_version: u32,
        }
        let invalid = |error: serde_json::Error| corrupt(CorruptProblem::InvalidJson(error.to_string()));
        let version: VersionOnly = serde_json::from_slice(&text).map_err(invalid)?;
        if !READABLE_VERSIONS.contains(&version.schema_version) {
            return Err(corrupt(CorruptProblem::UnknownSchema(version.schema_version)));
        }
        serde_json::from_slice(&text).map_err(invalid)
    }
}

/// Writes a document one map at a time, so exporting never holds the whole
/// registry in memory: `{"schema_version": 2, "maps": {` then one line per map.
pub struct DocumentWriter<W: Write> {
    out: W,
    maps: usize,
}

impl<W: Write> DocumentWriter<W> {
    /// Starts the document.
    pub fn start(mut out: W) -> io::Result<DocumentWriter<W>> {
        write!(out, "{{\"schema_version\": {DOCUMENT_VERSION}, \"maps\": {{")?;
        Ok(DocumentWriter { out, maps: 0 })
    }

    /// Adds one map with its revisions.
    pub fn map(&mut self, record: &MapRecord) -> io::Result<()> {
        let separator = if self.maps == 0 { "\n" } else { ",\n" };
        self.out.write_all(separator.as_bytes())?;
        serde_json::to_writer(&mut self.out, &record.map_id)?;
        self.out.write_all(b": ")?;
        serde_json::to_writer(&mut self.out, record)?;
        self.maps += 1;
        Ok(())
    }

    /// Closes the document; returns the writer and how many maps it holds.
    pub fn finish(mut self) -> io::Result<(W, usize)> {
        self.out.write_all(b"\n}}\n")?;
        self.out.flush()?;
        Ok((self.out, self.maps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tests::record;

    #[test]
    fn a_written_document_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.json");
        let mut writer = DocumentWriter::start(std::fs::File::create(&path).unwrap()).unwrap();
        for id in ["map_a", "map_b"] {
            writer.map(&record(id)).unwrap();
        }
        assert_eq!(writer.finish().unwrap().1, 2);
        let document = RegistryDocument::read(&path).unwrap();
        assert_eq!(document.schema_version, DOCUMENT_VERSION);
        assert_eq!(document.maps.keys().collect::<Vec<_>>(), ["map_a", "map_b"]);
        assert_eq!(document.maps["map_a"], record("map_a"));
    }

    #[test]
    fn an_unknown_version_or_a_broken_file_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.json");
        for (content, expected) in [
            ("{\"schema_version\": 9, \"maps\": {}}", CorruptProblem::UnknownSchema(9)),
            ("{not json", CorruptProblem::InvalidJson("key must be a string at line 1 column 2".into())),
        ] {
            std::fs::write(&path, content).unwrap();
            let Err(RegistryError::Corrupt { problem, .. }) = RegistryDocument::read(&path) else { panic!() };
            assert_eq!(problem, expected);
        }
    }

    #[test]
    fn a_version_1_document_has_maps_without_revisions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.json");
        let mut v1 = serde_json::json!({ "schema_version": 1, "maps": { "map_a": record("map_a") } });
        v1["maps"]["map_a"].as_object_mut().unwrap().remove("revisions");
        std::fs::write(&path, v1.to_string()).unwrap();
        assert!(RegistryDocument::read(&path).unwrap().maps["map_a"].revisions.is_empty());
    }
}

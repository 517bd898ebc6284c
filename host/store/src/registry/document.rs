//! The registry as one JSON document: the `registry.json` of earlier versions
//! (schema 1, and 2 with revisions), and what `registry export` writes and
//! `registry import` reads (schema 3, with knowledge bundles, layouts,
//! readings and unit extractions: all a registry holds, on either backend),
//! so an export is also a file the migration takes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CorruptProblem, Document, Location, MapRecord, RegistryError};

/// The document version `export` writes. Version 2 added map revisions; 3, bundles and documents.
pub const DOCUMENT_VERSION: u32 = 3;
/// Versions `import` and the migration read.
const READABLE_VERSIONS: [u32; 3] = [1, 2, DOCUMENT_VERSION];

/// The whole registry as one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistryDocument {
    /// One of the readable versions.
    pub schema_version: u32,
    /// Registered maps by ID, each with its revisions (oldest first).
    #[serde(default)]
    pub maps: BTreeMap<String, MapRecord>,
    /// Knowledge bundles, oldest first.
    #[serde(default)]
    pub bundles: Vec<StoredBundle>,
    /// Layouts, readings and unit extractions, oldest first.
    #[serde(default)]
    pub documents: Vec<StoredDocument>,
}

/// A knowledge bundle as the registry keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredBundle {
    /// Its ID (`kb_…`).
    pub bundle_id: String,
    /// The map its area came from, if any.
    pub map_id: Option<String>,
    /// The revision whose bounds were the area, if any.
    pub revision_id: Option<String>,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The bundle's JSON, exactly as recorded.
    pub document: String,
}

/// A layout, reading or unit extraction as the registry keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDocument {
    /// Which kind.
    pub kind: Document,
    /// Its ID (`lay_…`, `txt_…`, `unt_…`).
    pub id: String,
    /// The map it belongs to.
    pub map_id: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// Its JSON, exactly as recorded.
    pub document: String,
}

impl RegistryDocument {
    /// Reads and checks the document at `path`; a file that is not one (or of
    /// a version this server does not know) is [`RegistryError::Corrupt`].
    pub fn read(path: &Path) -> Result<RegistryDocument, RegistryError> {
        let corrupt = |problem| RegistryError::Corrupt { location: Location::File(path.to_owned()), problem };
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

/// Writes a document one entry at a time, so exporting never holds the whole
/// registry in memory: `{"schema_version": 3, "maps": {` then one line per map,
/// then the bundles and the documents, one line each.
pub struct DocumentWriter<W: Write> {
    out: W,
    maps: usize,
    /// The section being written (`maps`, `bundles`, `documents`) and how many entries it has.
    section: (&'static str, usize),
}

impl<W: Write> DocumentWriter<W> {
    /// Starts the document.
    pub fn start(mut out: W) -> io::Result<DocumentWriter<W>> {
        write!(out, "{{\"schema_version\": {DOCUMENT_VERSION}, \"maps\": {{")?;
        Ok(DocumentWriter { out, maps: 0, section: ("maps", 0) })
    }

    /// Adds one map with its revisions (before any bundle or document).
    pub fn map(&mut self, record: &MapRecord) -> io::Result<()> {
        self.entry("maps")?;
        serde_json::to_writer(&mut self.out, &record.map_id)?;
        self.out.write_all(b": ")?;
        serde_json::to_writer(&mut self.out, record)?;
        self.maps += 1;
        Ok(())
    }

    /// Adds one knowledge bundle (after the maps, before any document).
    pub fn bundle(&mut self, bundle: &StoredBundle) -> io::Result<()> {
        self.entry("bundles")?;
        Ok(serde_json::to_writer(&mut self.out, bundle)?)
    }

    /// Adds one layout, reading or unit extraction (after the maps and bundles).
    pub fn document(&mut self, document: &StoredDocument) -> io::Result<()> {
        self.entry("documents")?;
        Ok(serde_json::to_writer(&mut self.out, document)?)
    }

    /// Closes the document (every section present, empty or not); returns the writer and how
    /// many maps it holds.
    pub fn finish(mut self) -> io::Result<(W, usize)> {
        self.advance_to("documents")?;
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok((self.out, self.maps))
    }

    /// Begins one entry of `section`.
    fn entry(&mut self, section: &'static str) -> io::Result<()> {
        self.advance_to(section)?;
        self.out.write_all(if self.section.1 == 0 { b"\n" } else { b",\n" })?;
        self.section.1 += 1;
        Ok(())
    }

    /// Closes sections and opens the ones after them, in [`SECTIONS`]' order, up to `section`.
    fn advance_to(&mut self, section: &'static str) -> io::Result<()> {
        while self.section.0 != section {
            let at = SECTIONS.iter().position(|name| *name == self.section.0).expect("a known section");
            let next = *SECTIONS.get(at + 1).expect("sections are written in order");
            self.out.write_all(if at == 0 { b"\n}" } else { b"\n]" })?;
            write!(self.out, ", \"{next}\": [")?;
            self.section = (next, 0);
        }
        Ok(())
    }
}

/// The document's sections, in the order they are written: maps (an object), bundles and
/// documents (arrays).
const SECTIONS: [&str; 3] = ["maps", "bundles", "documents"];

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
        let bundle = |id: &str, map_id: Option<&str>| StoredBundle {
            bundle_id: id.into(),
            map_id: map_id.map(str::to_owned),
            revision_id: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            document: "{\"n\": 1}".into(),
        };
        let bundles = [bundle("kb_1", Some("map_a")), bundle("kb_2", None)];
        for bundle in &bundles {
            writer.bundle(bundle).unwrap();
        }
        let layout = StoredDocument {
            kind: Document::Layout,
            id: "lay_1".into(),
            map_id: "map_b".into(),
            created_at: "2026-01-01T00:00:01Z".into(),
            document: "{}".into(),
        };
        writer.document(&layout).unwrap();
        assert_eq!(writer.finish().unwrap().1, 2);
        let document = RegistryDocument::read(&path).unwrap();
        assert_eq!(document.schema_version, DOCUMENT_VERSION);
        assert_eq!(document.maps.keys().collect::<Vec<_>>(), ["map_a", "map_b"]);
        assert_eq!(document.maps["map_a"], record("map_a"));
        assert_eq!((document.bundles, document.documents), (bundles.to_vec(), vec![layout]));

        let only_maps = dir.path().join("maps.json");
        let mut writer = DocumentWriter::start(std::fs::File::create(&only_maps).unwrap()).unwrap();
        writer.map(&record("map_a")).unwrap();
        writer.finish().unwrap();
        let document = RegistryDocument::read(&only_maps).unwrap();
        assert!(document.bundles.is_empty() && document.documents.is_empty() && document.maps.len() == 1);
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

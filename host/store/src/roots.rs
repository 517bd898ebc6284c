//! Allowed map roots, resolved through `cap-std` directory handles.
//!
//! Invariants: every file this module hands out was opened through the handle
//! of an allowed root, so `..`, symlinks that lead out and absolute symlink
//! targets are refused by the kernel-backed resolution, not by comparing
//! strings. Absolute arguments are only matched to a root component by
//! component (so `/maps_evil` is not inside `/maps`); the open itself is the check.

use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

/// Why a requested path was refused or could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RootsError {
    /// The path contains a NUL byte.
    #[error("the path contains a NUL byte")]
    NulByte,
    /// An absolute path lies under none of the allowed roots.
    #[error("the path is not inside any allowed map root")]
    OutsideRoots,
    /// Resolving the path (through `..` or a symlink) would leave the root.
    #[error("the path leads outside its map root (through '..' or a symbolic link)")]
    EscapesRoot,
    /// The resolved file name is not valid UTF-8, so it cannot be recorded.
    #[error("the resolved file name is not valid UTF-8")]
    NonUtf8Name,
    /// No file exists at the path.
    #[error("no file exists at this path inside the map root")]
    NotFound,
    /// The path names a folder or another non-regular file.
    #[error("the path is not a regular file")]
    NotAFile,
    /// The file exists but the server may not read it.
    #[error("the server cannot read the file ({0})")]
    Unreadable(io::Error),
}

/// One allowed root: the folder as configured and an open handle to it.
#[derive(Debug)]
struct MapRoot {
    configured: PathBuf,
    canonical: PathBuf,
    dir: Dir,
}

/// The allowed map roots, opened once at start.
#[derive(Debug)]
pub struct MapRoots {
    roots: Vec<MapRoot>,
}

/// A map file opened inside a root.
#[derive(Debug)]
pub struct OpenedMapFile {
    /// Index of the root in the configured list.
    pub root_index: usize,
    /// The root's canonical absolute path (server-side only; never sent to agents).
    pub root: PathBuf,
    /// The file's canonical path relative to the root, all symlinks resolved.
    pub relative_path: String,
    /// The open file.
    pub file: std::fs::File,
}

impl MapRoots {
    /// Opens every root; a root that cannot be opened is an error naming it.
    pub fn open(paths: &[PathBuf]) -> Result<MapRoots, (PathBuf, io::Error)> {
        let roots = paths
            .iter()
            .map(|path| {
                let dir = Dir::open_ambient_dir(path, ambient_authority()).map_err(|e| (path.clone(), e))?;
                let canonical = std::fs::canonicalize(path).map_err(|e| (path.clone(), e))?;
                Ok(MapRoot { configured: path.clone(), canonical, dir })
            })
            .collect::<Result<_, _>>()?;
        Ok(MapRoots { roots })
    }

    /// The roots as configured, in order.
    pub fn configured(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|root| root.configured.as_path())
    }

    /// Resolves `requested` (absolute, or relative to the first root) and opens it.
    pub fn open_map(&self, requested: &str) -> Result<OpenedMapFile, RootsError> {
        if requested.contains('\0') {
            return Err(RootsError::NulByte);
        }
        let requested = Path::new(requested);
        let (root_index, inside) = if requested.is_absolute() {
            self.roots
                .iter()
                .enumerate()
                .find_map(|(index, root)| {
                    let rest = requested.strip_prefix(&root.configured).or_else(|_| requested.strip_prefix(&root.canonical));
                    rest.ok().map(|rest| (index, rest.to_path_buf()))
                })
                .ok_or(RootsError::OutsideRoots)?
        } else {
            (0, requested.to_path_buf())
        };
        let root = self.roots.get(root_index).ok_or(RootsError::OutsideRoots)?;
        if inside.components().any(|c| matches!(c, Component::RootDir | Component::Prefix(_))) {
            return Err(RootsError::EscapesRoot);
        }
        let canonical = root.dir.canonicalize(&inside).map_err(classify)?;
        let relative_path = canonical.to_str().ok_or(RootsError::NonUtf8Name)?.to_owned();
        let file = open_regular_file(&root.dir, &canonical)?;
        Ok(OpenedMapFile { root_index, root: root.canonical.clone(), relative_path, file })
    }

    /// The position of the root whose canonical path is `root`, if still allowed.
    pub fn index_of(&self, root: &Path) -> Option<usize> {
        self.roots.iter().position(|r| r.canonical == root)
    }

    /// Reopens a file recorded earlier, if its root is still allowed.
    pub fn reopen(&self, root: &Path, relative_path: &str) -> Result<std::fs::File, RootsError> {
        let index = self.index_of(root).ok_or(RootsError::OutsideRoots)?;
        open_regular_file(&self.roots[index].dir, Path::new(relative_path))
    }
}

fn open_regular_file(dir: &Dir, relative: &Path) -> Result<std::fs::File, RootsError> {
    let file = dir.open(relative).map_err(classify)?;
    let metadata = file.metadata().map_err(RootsError::Unreadable)?;
    if !metadata.is_file() {
        return Err(RootsError::NotAFile);
    }
    Ok(file.into_std())
}

fn classify(error: io::Error) -> RootsError {
    match error.kind() {
        io::ErrorKind::NotFound => RootsError::NotFound,
        // cap-std reports every attempt to leave the directory as PermissionDenied.
        io::ErrorKind::PermissionDenied if error.to_string().contains("outside of the filesystem") => RootsError::EscapesRoot,
        io::ErrorKind::NotADirectory | io::ErrorKind::IsADirectory => RootsError::NotAFile,
        _ => RootsError::Unreadable(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        base: PathBuf,
        roots: MapRoots,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for folder in ["maps/sub", "maps_evil", "outside"] {
            std::fs::create_dir_all(base.join(folder)).unwrap();
        }
        std::fs::write(base.join("maps/sub/a.png"), b"x").unwrap();
        std::fs::write(base.join("maps_evil/b.png"), b"x").unwrap();
        std::fs::write(base.join("outside/secret.png"), b"x").unwrap();
        let roots = MapRoots::open(&[base.join("maps")]).unwrap();
        Fixture { _dir: dir, base, roots }
    }

    fn refused(f: &Fixture, path: &str) -> RootsError {
        f.roots.open_map(path).expect_err(path)
    }

    #[test]
    fn relative_and_absolute_paths_inside_the_root_open() {
        let f = fixture();
        let opened = f.roots.open_map("sub/a.png").unwrap();
        assert_eq!((opened.root_index, opened.relative_path.as_str()), (0, "sub/a.png"));
        let absolute = f.base.join("maps/sub/./a.png");
        assert_eq!(f.roots.open_map(absolute.to_str().unwrap()).unwrap().relative_path, "sub/a.png");
    }

    #[test]
    fn a_sibling_with_the_root_as_string_prefix_is_outside() {
        let f = fixture();
        assert!(matches!(refused(&f, f.base.join("maps_evil/b.png").to_str().unwrap()), RootsError::OutsideRoots));
    }

    #[test]
    fn dot_dot_and_symlinks_that_leave_the_root_are_refused() {
        let f = fixture();
        symlink(f.base.join("outside/secret.png"), f.base.join("maps/abs_link.png")).unwrap();
        symlink("../outside/secret.png", f.base.join("maps/rel_link.png")).unwrap();
        symlink(f.base.join("outside/none.png"), f.base.join("maps/dangling_out.png")).unwrap();
        symlink(f.base.join("outside"), f.base.join("maps/dir_link")).unwrap();
        for path in ["../outside/secret.png", "sub/../../outside/secret.png", "abs_link.png", "rel_link.png", "dangling_out.png", "dir_link/secret.png"] {
            assert!(matches!(refused(&f, path), RootsError::EscapesRoot), "{path}: {:?}", refused(&f, path));
        }
        let absolute_escape = format!("{}/maps/../outside/secret.png", f.base.display());
        assert!(matches!(refused(&f, &absolute_escape), RootsError::EscapesRoot));
    }

    #[test]
    fn symlinks_inside_the_root_resolve_to_the_real_file() {
        let f = fixture();
        symlink("sub/a.png", f.base.join("maps/inner_link.png")).unwrap();
        assert_eq!(f.roots.open_map("inner_link.png").unwrap().relative_path, "sub/a.png");
    }

    #[test]
    fn nul_bytes_non_utf8_names_folders_and_missing_files() {
        use std::os::unix::ffi::OsStrExt;
        let f = fixture();
        assert!(matches!(refused(&f, "sub/a.png\0.jpg"), RootsError::NulByte));
        let odd = f.base.join("maps").join(std::ffi::OsStr::from_bytes(b"caf\xe9.png"));
        std::fs::write(&odd, b"x").unwrap();
        symlink(std::ffi::OsStr::from_bytes(b"caf\xe9.png"), f.base.join("maps/plain.png")).unwrap();
        assert!(matches!(refused(&f, "plain.png"), RootsError::NonUtf8Name));
        assert!(matches!(refused(&f, "sub"), RootsError::NotAFile));
        assert!(matches!(refused(&f, "sub/none.png"), RootsError::NotFound));
    }

    #[test]
    fn reopen_requires_the_root_to_still_be_allowed() {
        let f = fixture();
        let opened = f.roots.open_map("sub/a.png").unwrap();
        assert!(f.roots.reopen(&opened.root, &opened.relative_path).is_ok());
        assert!(matches!(f.roots.reopen(&f.base.join("outside"), "secret.png"), Err(RootsError::OutsideRoots)));
    }
}

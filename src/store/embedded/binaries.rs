//! Finding the PostgreSQL server binaries (`initdb`, `postgres`) on this machine.
//!
//! Order: every directory of `PATH`, then `/usr/lib/postgresql/<version>/bin` with the newest
//! version first (Debian and Ubuntu install the server there, outside `PATH`).

use super::EmbeddedError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The programs a cluster needs; a directory is only used if it has all of them.
const REQUIRED: [&str; 2] = ["initdb", "postgres"];

/// Where to look for the server binaries. [`BinarySearch::from_env`] is what the service uses;
/// tests inject their own.
#[derive(Debug, Clone)]
pub struct BinarySearch {
    /// A `PATH`-style list of directories searched first.
    pub path: Option<OsString>,
    /// A directory of versioned installs, `<versioned_root>/<version>/bin`.
    pub versioned_root: PathBuf,
}

/// A directory holding `initdb` and `postgres`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBinaries {
    pub bin_dir: PathBuf,
}

impl PgBinaries {
    pub fn initdb(&self) -> PathBuf {
        self.bin_dir.join("initdb")
    }

    pub fn postgres(&self) -> PathBuf {
        self.bin_dir.join("postgres")
    }
}

impl BinarySearch {
    /// `PATH`, then `/usr/lib/postgresql/*/bin`.
    pub fn from_env() -> BinarySearch {
        BinarySearch {
            path: std::env::var_os("PATH"),
            versioned_root: PathBuf::from("/usr/lib/postgresql"),
        }
    }

    /// The first directory with every required program, or an error saying how to get them.
    pub fn locate(&self) -> Result<PgBinaries, EmbeddedError> {
        let from_path = self
            .path
            .iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| !dir.as_os_str().is_empty());
        let versioned = versioned_bin_dirs(&self.versioned_root);
        from_path
            .chain(versioned)
            .find(|dir| has_server_binaries(dir))
            .map(|bin_dir| PgBinaries { bin_dir })
            .ok_or_else(|| EmbeddedError::NoBinaries {
                versioned_root: self.versioned_root.clone(),
            })
    }
}

fn has_server_binaries(dir: &Path) -> bool {
    REQUIRED.iter().all(|name| is_executable(&dir.join(name)))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `<root>/<version>/bin` for every version directory, newest first. Versions compare
/// numerically part by part, so 16 is newer than 9.6 (a string sort would say otherwise).
fn versioned_bin_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u64>, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name
                .split('.')
                .map(|part| part.parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

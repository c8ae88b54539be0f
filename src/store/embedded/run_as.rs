//! Which user runs `initdb` and the server, and how commands are started as that user.
//!
//! Postgres refuses to run as root, so as root we switch to an unprivileged user with `setpriv`
//! (util-linux, present on every Debian-like system). `setpriv` is also what sets the server's
//! parent-death signal, after the switch of user (a change of credentials clears that signal, so
//! the order matters and `setpriv` gets it right).

use super::EmbeddedError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Users tried, in order, when running as root: the Debian package's own user, then the user that
/// exists everywhere.
const CANDIDATES: [&str; 2] = ["postgres", "nobody"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RunAs {
    /// Not root: run everything directly.
    CurrentUser,
    /// Root: run as this unprivileged user.
    User { name: String, uid: u32, gid: u32 },
}

impl RunAs {
    pub(super) fn detect() -> Result<RunAs, EmbeddedError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(RunAs::CurrentUser);
        }
        CANDIDATES
            .iter()
            .find_map(|name| {
                let uid = id_number(name, "-u")?;
                let gid = id_number(name, "-g")?;
                (uid != 0).then(|| RunAs::User {
                    name: (*name).to_string(),
                    uid,
                    gid,
                })
            })
            .ok_or_else(|| EmbeddedError::NoUnprivilegedUser {
                candidates: CANDIDATES.join(", "),
            })
    }

    /// A command running `program` as this user; with `parent_death_signal`, the program gets
    /// SIGINT (Postgres's fast shutdown) when the thread that spawned it ends.
    pub(super) fn command(&self, program: &Path, parent_death_signal: bool) -> Command {
        if *self == RunAs::CurrentUser && !parent_death_signal {
            return Command::new(program);
        }
        let mut command = Command::new("setpriv");
        if let RunAs::User { uid, gid, .. } = self {
            command
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--init-groups");
        }
        if parent_death_signal {
            command.arg("--pdeathsig=INT");
        }
        command.arg("--").arg(program);
        command
    }

    /// Hands `dir` and everything in it to this user (nothing to do when not root).
    pub(super) fn take_ownership(&self, dir: &Path) -> Result<(), EmbeddedError> {
        let RunAs::User { uid, gid, .. } = self else {
            return Ok(());
        };
        chown_recursive(dir, *uid, *gid).map_err(EmbeddedError::io(format!(
            "changing owner of {}",
            dir.display()
        )))
    }

    /// Fails with a clear message when this user cannot enter and write `dir`, typically because a
    /// parent directory has no search permission for it (e.g. a data directory under `/root`).
    pub(super) fn check_reachable(&self, dir: &Path) -> Result<(), EmbeddedError> {
        let RunAs::User { name, .. } = self else {
            return Ok(());
        };
        // Asking the kernel as that user is exact (ACLs, groups, mounts) where reading mode bits
        // would not be.
        let status = self
            .command(Path::new("test"), false)
            .arg("-w")
            .arg(dir)
            .arg("-a")
            .arg("-x")
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .status()
            .map_err(EmbeddedError::io("running setpriv (from util-linux)"))?;
        if status.success() {
            Ok(())
        } else {
            Err(EmbeddedError::DirectoryNotReachable {
                user: name.clone(),
                dir: PathBuf::from(dir),
            })
        }
    }
}

/// `id -u NAME` / `id -g NAME`: goes through NSS like every other tool, unlike parsing
/// /etc/passwd.
fn id_number(name: &str, flag: &str) -> Option<u32> {
    let output = Command::new("id").arg(flag).arg(name).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()?.trim().parse().ok()
}

fn chown_recursive(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    // lchown: never follow a symlink out of the cluster directory.
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if std::fs::symlink_metadata(path)?.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_recursive(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

//! The files of one cluster directory: creating the cluster once, its password, port and log, and
//! clearing what a killed run left behind.

use super::run_as::RunAs;
use super::{EmbeddedError, PgBinaries};
use rand::Rng;
use rand::distr::Alphanumeric;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// 32 alphanumeric characters: about 190 bits, and nothing to escape in a URL.
const PASSWORD_LEN: usize = 32;
/// The log is rotated (one old generation kept) when a start finds it larger than this.
const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;
/// How much of the log an error message quotes.
const LOG_TAIL_BYTES: u64 = 4096;
/// How long to wait for a server of a killed run to finish its own shutdown.
const PREVIOUS_SERVER_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone)]
pub(super) struct ClusterPaths {
    pub root: PathBuf,
    pub data: PathBuf,
    pub password: PathBuf,
    pub service_password: PathBuf,
    pub port: PathBuf,
    pub log: PathBuf,
    /// Held (flock) by the one process using the cluster, and holding that process's pid.
    pub lock: PathBuf,
}

impl ClusterPaths {
    pub(super) fn new(root: PathBuf) -> ClusterPaths {
        ClusterPaths {
            data: root.join("data"),
            password: root.join("password"),
            service_password: root.join("service_password"),
            port: root.join("port"),
            log: root.join("server.log"),
            lock: root.join("joust.lock"),
            root,
        }
    }

    /// Creates the cluster directory, private to its owner (0700) however it was made before:
    /// it holds the password file, the server's log (which names users, databases and failed
    /// statements) and the data.
    pub(super) fn create_root(&self) -> Result<(), EmbeddedError> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&self.root)
            .and_then(|()| {
                std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o700))
            })
            .map_err(EmbeddedError::io(format!(
                "creating {}",
                self.root.display()
            )))
    }

    /// Takes the cluster for this process: an exclusive `flock` on `joust.lock`, released by the
    /// kernel when the returned file is closed or the process dies (so a killed run never leaves
    /// it behind). Refused, naming the holder's pid, while another process holds it: two
    /// processes starting servers on one cluster would each see the other's server as stale.
    pub(super) fn lock(&self) -> Result<File, EmbeddedError> {
        use std::os::fd::AsRawFd;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.lock)
            .map_err(EmbeddedError::io(format!(
                "opening {}",
                self.lock.display()
            )))?;
        // SAFETY: flock takes a descriptor we own for the duration of the call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(EmbeddedError::io(format!(
                    "locking {}",
                    self.lock.display()
                ))(err));
            }
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(EmbeddedError::InUse {
                pid: holder.trim().to_string(),
                data_dir: self
                    .root
                    .parent()
                    .map_or_else(|| self.root.clone(), Path::to_path_buf),
            });
        }
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            writeln!(file, "{}", std::process::id())?;
            file.flush()
        };
        write(&mut file).map_err(EmbeddedError::io(format!(
            "writing {}",
            self.lock.display()
        )))?;
        Ok(file)
    }

    /// `PG_VERSION` is written by `initdb`; the data directory only gets its final name once
    /// `initdb` has succeeded (see [`initialise`]).
    pub(super) fn is_initialised(&self) -> bool {
        self.data.join("PG_VERSION").is_file()
    }

    pub(super) fn read_password(&self) -> Result<String, EmbeddedError> {
        std::fs::read_to_string(&self.password)
            .map(|s| s.trim().to_string())
            .map_err(EmbeddedError::io(format!(
                "reading {}",
                self.password.display()
            )))
    }

    /// The service role's password, generated (0600) on the first start that needs it: clusters
    /// made before the role existed get one too.
    pub(super) fn service_password(&self) -> Result<String, EmbeddedError> {
        if !self.service_password.is_file() {
            write_password(&self.service_password, &generate_password())?;
        }
        std::fs::read_to_string(&self.service_password)
            .map(|s| s.trim().to_string())
            .map_err(EmbeddedError::io(format!(
                "reading {}",
                self.service_password.display()
            )))
    }

    pub(super) fn read_port(&self) -> Option<u16> {
        std::fs::read_to_string(&self.port)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub(super) fn write_port(&self, port: u16) -> Result<(), EmbeddedError> {
        std::fs::write(&self.port, format!("{port}\n")).map_err(EmbeddedError::io(format!(
            "writing {}",
            self.port.display()
        )))
    }

    /// The server's log, readable by its owner only (0600), also when an earlier version made it
    /// readable by all.
    pub(super) fn open_log(&self) -> Result<File, EmbeddedError> {
        use std::os::unix::fs::PermissionsExt;
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.log)
            .and_then(|file| {
                file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
                Ok(file)
            })
            .map_err(EmbeddedError::io(format!("opening {}", self.log.display())))
    }

    pub(super) fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    pub(super) fn rotate_log(&self) -> Result<(), EmbeddedError> {
        if self.log_len() > LOG_ROTATE_BYTES {
            std::fs::rename(&self.log, self.root.join("server.log.1")).map_err(
                EmbeddedError::io(format!("rotating {}", self.log.display())),
            )?;
        }
        Ok(())
    }

    /// The end of what the server logged since byte `from` (at most a few kilobytes).
    pub(super) fn log_tail(&self, from: u64) -> String {
        let read = || -> std::io::Result<String> {
            let mut file = File::open(&self.log)?;
            let len = file.metadata()?.len();
            file.seek(SeekFrom::Start(
                from.max(len.saturating_sub(LOG_TAIL_BYTES)),
            ))?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        };
        read().unwrap_or_else(|e| format!("(could not read the log: {e})"))
    }
}

/// Creates the cluster: a fresh password (0600), then `initdb` into a temporary directory that is
/// renamed to `data` only once it succeeded.
pub(super) async fn initialise(
    paths: &ClusterPaths,
    binaries: &PgBinaries,
    run_as: &RunAs,
    superuser: &str,
) -> Result<(), EmbeddedError> {
    let staging = paths.root.join("data.initdb");
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(EmbeddedError::io(format!(
            "removing the unfinished {}",
            staging.display()
        )))?;
    }
    write_password(&paths.password, &generate_password())?;
    run_as.take_ownership(&paths.password)?;

    let mut command = run_as.command(&binaries.initdb(), false);
    command
        .arg("--pgdata")
        .arg(&staging)
        .arg(format!("--username={superuser}"))
        .arg("--pwfile")
        .arg(&paths.password)
        // Password authentication for every connection, local ones included.
        .args(["--auth-host=scram-sha-256", "--auth-local=scram-sha-256"])
        .args(["--encoding=UTF8", "--locale=C"])
        // The server's user may not be able to enter our working directory (e.g. /root).
        .current_dir(&paths.root)
        .stdin(std::process::Stdio::null());
    let output = tokio::process::Command::from(command)
        .output()
        .await
        .map_err(EmbeddedError::io("running initdb"))?;
    if !output.status.success() {
        return Err(EmbeddedError::Command {
            command: format!("initdb --pgdata {}", staging.display()),
            status: output.status.to_string(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        });
    }
    std::fs::rename(&staging, &paths.data).map_err(EmbeddedError::io(format!(
        "moving the new cluster to {}",
        paths.data.display()
    )))?;
    tracing::info!(data = %paths.data.display(), "created the embedded postgres cluster");
    Ok(())
}

fn generate_password() -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(PASSWORD_LEN)
        .map(char::from)
        .collect()
}

fn write_password(path: &Path, password: &str) -> Result<(), EmbeddedError> {
    let write = || -> std::io::Result<()> {
        // Created 0600 from the start: the password is never readable by others, not even briefly.
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        writeln!(file, "{password}")?;
        file.sync_all()
    };
    write().map_err(EmbeddedError::io(format!("writing {}", path.display())))
}

/// Makes sure a `postmaster.pid` from a killed run does not block the start. Postgres itself
/// refuses to start when the pid in that file belongs to any live process (pids are reused, in
/// containers often), so the file is removed when that process is not a live `postgres`. A live
/// `postgres` is usually the previous server still finishing the fast shutdown its parent's death
/// triggered; backends can also outlive a killed postmaster, each finishing the statement it runs
/// (a commit included). Postgres refuses to start beside them by the shared memory the file
/// names; without the file nothing would stop a second server writing the cluster, and a commit
/// of the old one's could be lost. So the file stays while either runs, for a few seconds, after
/// which the start fails.
pub(super) async fn clear_stale_pid_file(data: &Path) -> Result<(), EmbeddedError> {
    let pid_file = data.join("postmaster.pid");
    let deadline = Instant::now() + PREVIOUS_SERVER_TIMEOUT;
    let mut logged = false;
    loop {
        let Ok(contents) = std::fs::read_to_string(&pid_file) else {
            return Ok(());
        };
        let postmaster = contents
            .lines()
            .next()
            .and_then(|line| line.trim().parse::<u32>().ok())
            .filter(|&pid| is_live_postgres(pid));
        let Some(running) = postmaster.or_else(|| orphans_of(data).first().copied()) else {
            tracing::warn!(file = %pid_file.display(), "removing a stale postmaster.pid");
            return match std::fs::remove_file(&pid_file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(EmbeddedError::Io {
                    context: format!("removing {}", pid_file.display()),
                    source: e,
                }),
                _ => Ok(()),
            };
        };
        if Instant::now() >= deadline {
            return Err(EmbeddedError::AlreadyRunning {
                pid: running,
                data_dir: data.to_path_buf(),
            });
        }
        if postmaster.is_none() && !logged {
            tracing::warn!(data_dir = %data.display(), "waiting for the backends of a killed Postgres server to exit");
            logged = true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Live `postgres` processes working in `data`: every server process changes into its data
/// directory, so a backend left running by a killed postmaster is found by its working directory.
/// A process whose directory cannot be read (another user's, without the right to look) is not
/// counted.
fn orphans_of(data: &Path) -> Vec<u32> {
    let Ok(data) = data.canonicalize() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| is_live_postgres(pid))
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == data))
        .collect()
}

/// Whether `pid` is a running (not zombie) process named `postgres`, from /proc.
fn is_live_postgres(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The format is `pid (comm) state ...`; comm may contain spaces and parentheses, so split at
    // the last ')'.
    let Some((head, tail)) = stat.rsplit_once(')') else {
        return false;
    };
    let comm = head.split_once('(').map_or("", |(_, comm)| comm);
    let state = tail.trim_start().chars().next();
    comm == "postgres" && !matches!(state, Some('Z') | Some('X'))
}

/// Fast-shuts-down a server running on `data` that this process did not start (its pid from
/// `postmaster.pid`), and waits for it to exit.
pub(super) async fn stop_foreign_server(data: &Path, timeout: Duration) {
    let Some(pid) = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|c| c.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
        .filter(|&pid| is_live_postgres(pid))
    else {
        return;
    };
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return;
    };
    tracing::info!(
        pid,
        "stopping the PostgreSQL server started on this cluster by someone else"
    );
    // SAFETY: kill has no memory-safety preconditions; the pid was a live postgres a moment ago.
    unsafe {
        libc::kill(raw, libc::SIGINT);
    }
    let deadline = Instant::now() + timeout;
    while is_live_postgres(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if is_live_postgres(pid) {
        tracing::warn!(pid, "the PostgreSQL server did not stop within {timeout:?}");
    } else {
        tracing::info!(pid, "embedded postgres stopped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process named `postgres` working in `dir`, as a backend of a killed postmaster is (a
    /// copy of `sleep`, which exits after `seconds`).
    fn fake_backend(bin: &Path, dir: &Path, seconds: &str) -> std::process::Child {
        let postgres = bin.join("postgres");
        if !postgres.exists() {
            std::fs::copy("/bin/sleep", &postgres).unwrap();
        }
        std::process::Command::new(&postgres)
            .arg(seconds)
            .current_dir(dir)
            .spawn()
            .unwrap()
    }

    #[tokio::test]
    async fn a_stale_pid_file_stays_until_the_killed_servers_backends_are_gone() {
        let root = std::env::temp_dir().join(format!("joust-orphans-{}", std::process::id()));
        let (bin, data) = (root.join("bin"), root.join("data"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        // A pid that is not running: a process that has exited and been reaped.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        std::fs::write(data.join("postmaster.pid"), format!("{gone_pid}\n")).unwrap();

        let mut backend = fake_backend(&bin, &data, "0.6");
        assert_eq!(orphans_of(&data), vec![backend.id()]);
        assert!(
            orphans_of(&bin).is_empty(),
            "only processes working in the directory"
        );
        let started = Instant::now();
        clear_stale_pid_file(&data).await.unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(400),
            "the file was removed while a backend still ran ({:?})",
            started.elapsed()
        );
        assert!(!data.join("postmaster.pid").exists());
        backend.wait().unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}

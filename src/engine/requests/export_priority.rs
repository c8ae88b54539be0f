//! An export's share of the CPU: its thread, and its Postgres backend where that backend is a
//! process of this machine that this service started (the embedded database), run at a lower
//! scheduling priority than request handling. An export takes every idle cycle and steps aside
//! for duels and outcomes when they want the cores; without this, a page's `COPY` backend
//! competes with the backends serving requests on equal terms.

/// How much less CPU an export gets than request handling when both want it (Linux nice 10:
/// about a tenth of a nice-0 thread's share).
const EXPORT_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux; elsewhere nothing).
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid takes no arguments.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
        lower_to_export_nice(tid);
    }
}

/// Lowers the priority of the Postgres backend serving `conn`, if it is a backend of the
/// embedded database: a process whose parent (the postmaster) is a child of this process. A
/// backend of any other server is left alone: its process id names a process of another
/// machine, or a stranger here. The backend exits when the connection closes, so the lower
/// priority never outlives the export's connection. A failure leaves the priority as it is.
pub async fn lower_backend_priority(conn: &mut sqlx::PgConnection) {
    if let Ok(pid) = sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()")
        .fetch_one(conn)
        .await
    {
        lower_child_backend(pid);
    }
}

#[cfg(target_os = "linux")]
fn lower_child_backend(pid: i32) -> bool {
    let Some(postmaster) = parent_of(pid) else {
        return false;
    };
    if parent_of(postmaster) != Some(std::process::id() as i32) {
        return false;
    }
    lower_to_export_nice(pid as libc::id_t)
}

/// Sets `id`'s nice value to [`EXPORT_NICE`] unless it is already at least that (an unprivileged
/// process may not raise a priority).
#[cfg(target_os = "linux")]
fn lower_to_export_nice(id: libc::id_t) -> bool {
    // SAFETY: getpriority and setpriority take no pointers; on Linux, PRIO_PROCESS with a thread
    // id names that thread only.
    unsafe {
        if libc::getpriority(libc::PRIO_PROCESS, id) >= EXPORT_NICE {
            return true;
        }
        libc::setpriority(libc::PRIO_PROCESS, id, EXPORT_NICE) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_child_backend(_pid: i32) -> bool {
    false
}

/// The parent process id of `pid`.
#[cfg(target_os = "linux")]
fn parent_of(pid: i32) -> Option<i32> {
    stat_field(pid, 4)
}

/// Field `n` (counted from 1, as proc(5) numbers them) of `/proc/{pid}/stat`, from the fourth
/// on: the second, the command name, is in parentheses and may hold spaces, so the fields are
/// read after its closing one.
#[cfg(target_os = "linux")]
fn stat_field(pid: i32, n: usize) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(n - 3)?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_parent_is_read_from_proc() {
        let child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let pid = child.id() as i32;
        assert_eq!(parent_of(pid), Some(std::process::id() as i32));
        let mut child = child;
        child.kill().ok();
        child.wait().ok();
    }

    /// The nice value of `pid` (field 19 of its stat line).
    fn nice_of(pid: i32) -> i32 {
        stat_field(pid, 19).expect("a live process has a nice value")
    }

    #[test]
    fn a_grandchild_is_lowered() {
        use std::io::BufRead;
        // A shell (the child, standing for the postmaster) that starts a sleep (the grandchild,
        // standing for a backend) and prints its pid.
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut line = String::new();
        std::io::BufReader::new(shell.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let before = nice_of(grandchild);
        assert!(lower_child_backend(grandchild));
        assert_eq!(nice_of(grandchild), EXPORT_NICE.max(before));
        shell.kill().ok();
        std::process::Command::new("kill")
            .arg(grandchild.to_string())
            .status()
            .ok();
        shell.wait().ok();
    }

    #[test]
    fn a_process_that_is_not_a_grandchild_is_left_alone() {
        // This process's own parent is not a child of this process, and neither is pid 1's.
        let own = std::process::id() as i32;
        assert!(!lower_child_backend(own));
        assert!(!lower_child_backend(1));
        assert_eq!(parent_of(i32::MAX), None);
    }
}

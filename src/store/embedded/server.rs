//! The server process: spawned and reaped by a dedicated supervisor thread, stopped by signal.
//!
//! The supervisor thread exists because the parent-death signal fires when the thread that forked
//! the child ends (see the module docs of `embedded`): it forks the server, then waits for it, so
//! it lives exactly as long as the server does.

use std::net::{Ipv4Addr, TcpListener};
use std::process::{Command, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// After a fast shutdown has timed out, how long an immediate shutdown may take before SIGKILL.
const IMMEDIATE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub(super) struct ServerProcess {
    pid: u32,
    exits: Receiver<std::io::Result<ExitStatus>>,
    /// Set once the supervisor has reaped the process; from then on the pid may belong to someone
    /// else and must never be signalled.
    exit: Option<String>,
}

impl ServerProcess {
    pub(super) fn spawn(mut command: Command) -> std::io::Result<ServerProcess> {
        let (pid_tx, pid_rx) = mpsc::channel();
        let (exit_tx, exits) = mpsc::channel();
        std::thread::Builder::new()
            .name("postgres-supervisor".into())
            .spawn(move || match command.spawn() {
                Err(e) => {
                    let _ = pid_tx.send(Err(e));
                }
                Ok(mut child) => {
                    let _ = pid_tx.send(Ok(child.id()));
                    let _ = exit_tx.send(child.wait());
                }
            })?;
        let pid = pid_rx
            .recv()
            .map_err(|_| std::io::Error::other("the supervisor thread died"))??;
        Ok(ServerProcess {
            pid,
            exits,
            exit: None,
        })
    }

    /// How the process ended, if it has.
    pub(super) fn exit_status(&mut self) -> Option<String> {
        if self.exit.is_none() {
            match self.exits.try_recv() {
                Ok(status) => self.exit = Some(describe(status)),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => self.exit = Some("unknown exit".into()),
            }
        }
        self.exit.clone()
    }

    pub(super) fn has_exited(&mut self) -> bool {
        self.exit_status().is_some()
    }

    /// Fast shutdown, then immediate shutdown, then SIGKILL, each given its time. Returns whether
    /// the fast shutdown sufficed.
    pub(super) async fn shut_down(&mut self, timeout: Duration) -> bool {
        let escalation = [
            (libc::SIGINT, timeout),
            (libc::SIGQUIT, IMMEDIATE_TIMEOUT),
            (libc::SIGKILL, IMMEDIATE_TIMEOUT),
        ];
        for (signal, wait) in escalation {
            self.signal(signal);
            let deadline = Instant::now() + wait;
            // Polling keeps this usable from any runtime and from `Drop` alike; 20 ms is nothing
            // next to a checkpoint.
            while !self.has_exited() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if self.has_exited() {
                return signal == libc::SIGINT;
            }
        }
        false
    }

    /// The same as [`shut_down`](Self::shut_down), blocking the calling thread (for `Drop`).
    pub(super) fn shut_down_blocking(&mut self, timeout: Duration) -> bool {
        let escalation = [
            (libc::SIGINT, timeout),
            (libc::SIGQUIT, IMMEDIATE_TIMEOUT),
            (libc::SIGKILL, IMMEDIATE_TIMEOUT),
        ];
        for (signal, wait) in escalation {
            if self.has_exited() {
                return true;
            }
            self.signal(signal);
            match self.exits.recv_timeout(wait) {
                Ok(status) => {
                    self.exit = Some(describe(status));
                    return signal == libc::SIGINT;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.exit = Some("unknown exit".into());
                    return false;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        false
    }

    fn signal(&mut self, signal: libc::c_int) {
        if self.has_exited() {
            return;
        }
        let Ok(pid) = libc::pid_t::try_from(self.pid) else {
            return;
        };
        // SAFETY: kill has no memory-safety preconditions. The pid is our own child and was not
        // reaped a moment ago (checked just above); a pid is only reused after the kernel has
        // cycled through all of pid_max, so that moment cannot hit another process in practice.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

impl Drop for ServerProcess {
    /// A server is never left running by accident: not when its owner is dropped, and not when a
    /// `stop` future is cancelled half-way.
    fn drop(&mut self) {
        if !self.has_exited() {
            self.shut_down_blocking(super::STOP_TIMEOUT);
        }
    }
}

fn describe(status: std::io::Result<ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("could not wait for it: {e}"),
    }
}

/// Whether nothing listens on `port` of 127.0.0.1 right now.
pub(super) fn port_is_free(port: u16) -> bool {
    port != 0 && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
}

/// A port of 127.0.0.1 that was free a moment ago (the kernel picks it). Someone may take it before
/// the server binds it; the caller retries then.
pub(super) fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

//! Sleeps shorter than the runtime timer's 1 ms tick. The outcome writer lingers for a fraction
//! of a commit ([`super::pace`]), which on a quiet machine is a fraction of a millisecond.
//! On Linux this is a timerfd watched by the runtime's I/O driver: arming it is one system call
//! and wakes no thread (a sleep on the blocking pool woke one of its threads twice per linger,
//! and thread wake-ups were the largest share of the acknowledgement path's CPU). Elsewhere, and
//! if the timerfd cannot be made, the sleep runs on a thread of the blocking pool.

use std::time::Duration;

/// One timer, used by one task at a time.
pub struct FineTimer {
    #[cfg(target_os = "linux")]
    fd: Option<linux::TimerFd>,
}

impl FineTimer {
    /// Makes the timer; must run inside the runtime (its I/O driver watches the timerfd).
    pub fn new() -> Self {
        FineTimer {
            #[cfg(target_os = "linux")]
            fd: linux::TimerFd::new()
                .inspect_err(
                    |e| tracing::debug!(error = %e, "no timerfd: short sleeps use a thread"),
                )
                .ok(),
        }
    }

    /// Sleeps for `d`. Cancelling it (dropping the future) disarms the timer.
    pub async fn sleep(&self, d: Duration) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            match fd.sleep(d).await {
                Ok(()) => return,
                Err(e) => tracing::debug!(error = %e, "timerfd failed: sleeping on a thread"),
            }
        }
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(d)).await;
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::time::Duration;

    use rustix::time::{
        Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
        timerfd_settime,
    };
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    pub struct TimerFd(AsyncFd<OwnedFd>);

    impl TimerFd {
        pub fn new() -> io::Result<Self> {
            let fd = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )?;
            // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, which keeps it open and never
            // hands it out, so its descriptor stays the same open timerfd for its whole life.
            let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
            Ok(TimerFd(fd))
        }

        /// Arms the timer to expire once after `d`; a zero `d` disarms it. Either way the count
        /// of expirations not read yet is reset, so a sleep never ends on an earlier one's.
        fn set(&self, d: Duration) -> io::Result<()> {
            let spec = Itimerspec {
                it_interval: Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: Timespec {
                    tv_sec: d.as_secs() as _,
                    tv_nsec: d.subsec_nanos() as _,
                },
            };
            timerfd_settime(self.0.get_ref(), TimerfdTimerFlags::empty(), &spec)?;
            Ok(())
        }

        pub async fn sleep(&self, d: Duration) -> io::Result<()> {
            // A zero value would disarm instead.
            self.set(d.max(Duration::from_nanos(1)))?;
            let _disarm = Disarm(self);
            loop {
                let mut ready = self.0.readable().await?;
                // The expiration count: 8 bytes, read to reset the readiness.
                let read = ready.try_io(|fd| {
                    let mut expirations = [0u8; 8];
                    rustix::io::read(fd.get_ref(), &mut expirations)?;
                    Ok(())
                });
                match read {
                    Ok(result) => return result,
                    // Readiness from before the timer was armed: wait for the expiry.
                    Err(_would_block) => continue,
                }
            }
        }
    }

    /// Disarms the timer when a sleep ends or is cancelled.
    struct Disarm<'a>(&'a TimerFd);

    impl Drop for Disarm<'_> {
        fn drop(&mut self) {
            let _ = self.0.set(Duration::ZERO);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn sleeps_at_least_as_long_as_asked_also_after_a_cancelled_sleep() {
        let timer = FineTimer::new();
        // On Linux the timerfd, not the thread fallback, is what is tested.
        #[cfg(target_os = "linux")]
        assert!(timer.fd.is_some());
        let d = Duration::from_micros(300);
        let started = Instant::now();
        timer.sleep(d).await;
        assert!(started.elapsed() >= d);
        // A sleep armed, left to expire unread and then cancelled: the next sleep must not end
        // on that expiry.
        {
            let mut cancelled = std::pin::pin!(timer.sleep(Duration::from_micros(100)));
            std::future::poll_fn(|cx| {
                let _ = cancelled.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
            std::thread::sleep(Duration::from_millis(2));
        }
        let started = Instant::now();
        timer.sleep(d).await;
        assert!(started.elapsed() >= d);
    }
}

//! Thread CPU time, for `steps_per_second`: the machine running a simulation is often shared,
//! and wall-clock time would count the time other processes held the core. On platforms without
//! a per-thread CPU clock this falls back to wall-clock time.

/// A point in the current thread's CPU time.
#[derive(Debug, Clone, Copy)]
pub struct ThreadClock {
    #[cfg(unix)]
    nanos: u64,
    #[cfg(not(unix))]
    instant: std::time::Instant,
}

impl ThreadClock {
    #[cfg(unix)]
    pub fn now() -> Self {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on every
        // unix Rust supports. On failure `ts` stays zero and the timing reads zero.
        unsafe {
            libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        }
        ThreadClock {
            nanos: ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64,
        }
    }

    #[cfg(not(unix))]
    pub fn now() -> Self {
        ThreadClock {
            instant: std::time::Instant::now(),
        }
    }

    /// Nanoseconds of this thread's CPU time since `self` (read on the same thread).
    pub fn elapsed_nanos(&self) -> u64 {
        #[cfg(unix)]
        {
            ThreadClock::now().nanos.saturating_sub(self.nanos)
        }
        #[cfg(not(unix))]
        {
            self.instant.elapsed().as_nanos() as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_takes_cpu_time_and_sleep_does_not() {
        let start = ThreadClock::now();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        let busy = start.elapsed_nanos();
        assert!(busy > 0, "{x}");
        #[cfg(unix)]
        {
            let start = ThreadClock::now();
            std::thread::sleep(std::time::Duration::from_millis(200));
            // Sleeping uses (almost) no CPU: far less than the 200 ms of wall time.
            assert!(start.elapsed_nanos() < 50_000_000);
        }
    }
}

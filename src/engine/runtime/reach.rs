//! The projects a request may reach. The HTTP layer learns it from the request's key before the
//! request is routed and runs the whole request within it; the engine asks it wherever a request
//! names an experiment (`Engine::snapshot`, which every path from an id or a token to an
//! experiment takes, and the list), and answers an experiment of another project as it answers
//! one that does not exist. So a handler cannot forget the check, and an experiment's id tells a
//! key of another project nothing. Work the engine runs on its own tasks (refresh, owners,
//! webhooks) runs outside any request and reaches every project.

use std::future::Future;
use tokio::task::futures::TaskLocalFuture;

tokio::task_local! {
    static REACH: Reach;
}

/// Which experiments a request reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every project's: a global key, an open server, or the engine's own work.
    All,
    /// One project's.
    Project(i64),
}

impl Reach {
    /// The reach of the request being handled; [`Reach::All`] outside any request.
    pub fn current() -> Reach {
        REACH.try_with(|r| *r).unwrap_or(Reach::All)
    }

    /// The one project reached, if only one.
    pub fn project(self) -> Option<i64> {
        match self {
            Reach::All => None,
            Reach::Project(p) => Some(p),
        }
    }

    pub fn covers(self, project: i64) -> bool {
        match self {
            Reach::All => true,
            Reach::Project(p) => p == project,
        }
    }

    /// Runs `future` with this reach.
    pub fn within<F: Future>(self, future: F) -> TaskLocalFuture<Reach, F> {
        REACH.scope(self, future)
    }
}

//! Why an engine operation was refused. The HTTP layer maps each to one status and error code.

use std::sync::Arc;

use crate::api::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request is well-formed but a value is not acceptable (422).
    #[error("{message}")]
    Invalid { code: ErrorCode, message: String },
    #[error("experiment {0} does not exist")]
    UnknownExperiment(i64),
    /// Something other than an experiment that does not exist or is out of the caller's reach
    /// (404).
    #[error("{message}")]
    Missing { code: ErrorCode, message: String },
    /// The caller's key may not do this (403).
    #[error("{0}")]
    Forbidden(String),
    #[error("experiment has no ranker named `{0}`")]
    UnknownRanker(String),
    /// The request conflicts with the experiment's current state (409).
    #[error("{message}")]
    Conflict { code: ErrorCode, message: String },
    #[error("the token is not valid: it was not issued by this service or was altered")]
    InvalidToken,
    #[error("the duel's attribution window has passed; its outcome can no longer be recorded")]
    ExpiredToken,
    #[error("this duel already has a different outcome recorded (winner: {recorded})")]
    OutcomeConflict { recorded: String },
    /// A multi-ranker query already has different pair results on record (409, as above).
    #[error("this query already has different pair results recorded; an outcome is recorded once")]
    PairResultsConflict,
    #[error("the database is unavailable; nothing was recorded, retry later")]
    Unavailable,
    /// A bug or an unexpected answer from the database. The text, with every cause, is for the
    /// log; a client is only told to look there.
    #[error("internal error: {0}")]
    Internal(InternalError),
}

impl EngineError {
    pub fn invalid(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError::Invalid {
            code,
            message: message.into(),
        }
    }

    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError::Conflict {
            code,
            message: message.into(),
        }
    }

    /// An internal error caused by `cause` (an error, or `anyhow::anyhow!` of a description).
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        EngineError::Internal(InternalError(Arc::new(cause.into())))
    }

    /// This error again, for each of several callers that one failed operation answers (a
    /// group's write, a read for many experiments): an outage stays an outage and an internal
    /// error keeps its cause; anything else becomes an internal error of `doing`.
    pub fn for_another_caller(&self, doing: &str) -> Self {
        match self {
            EngineError::Unavailable => EngineError::Unavailable,
            EngineError::Internal(cause) => EngineError::Internal(cause.clone()),
            other => EngineError::internal(anyhow::anyhow!("{doing}: {other}")),
        }
    }
}

/// The cause of an internal error with its whole chain. Shared (one failed group write answers
/// every request in the group), so it is reference-counted.
#[derive(Debug, Clone)]
pub struct InternalError(Arc<anyhow::Error>);

impl std::fmt::Display for InternalError {
    /// The message and every cause, `outer: inner: ...`, for the log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl From<crate::store::StoreError> for EngineError {
    fn from(e: crate::store::StoreError) -> Self {
        let crate::store::StoreError::Database(err) = &e;
        match err {
            // Anything that means "could not talk to the database" is an outage, not a bug.
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => EngineError::Unavailable,
            sqlx::Error::Database(db)
                if db
                    .code()
                    .is_some_and(|c| c.starts_with("57") || c.starts_with("08")) =>
            {
                EngineError::Unavailable
            }
            _ => EngineError::internal(e),
        }
    }
}

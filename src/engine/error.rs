//! Why an engine operation was refused. The HTTP layer maps each to one status and error code.

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request is well-formed but a value is not acceptable (422).
    #[error("{message}")]
    Invalid { code: &'static str, message: String },
    #[error("experiment {0} does not exist")]
    UnknownExperiment(i64),
    #[error("experiment has no ranker named `{0}`")]
    UnknownRanker(String),
    /// The request conflicts with the experiment's current state (409).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
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
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngineError {
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        EngineError::Invalid {
            code,
            message: message.into(),
        }
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        EngineError::Conflict {
            code,
            message: message.into(),
        }
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
            _ => {
                tracing::error!(error = %e, "database error");
                EngineError::Internal(e.to_string())
            }
        }
    }
}

//! Every error code the service sends, with its wire name and, where it always goes with one, its
//! HTTP status. Clients branch on these names, so a name never changes once published; the list
//! is checked against `openapi.yaml` by the test suite.

/// Declares [`ErrorCode`] from one table, so that the variants, their wire names, their statuses
/// and [`ErrorCode::ALL`] cannot drift apart.
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $wire:literal, $status:expr;)*) => {
        /// An error code: the `code` of `{"error": {"code": ..., "message": ...}}`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The name clients see.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                }
            }

            /// The HTTP status this code is always sent with; `None` for a code whose status
            /// depends on where it arises.
            pub const fn status(self) -> Option<u16> {
                match self {
                    $(ErrorCode::$variant => $status,)*
                }
            }
        }
    };
}

error_codes! {
    // The request itself.
    /// The body is not JSON.
    InvalidJson = "invalid_json", Some(400);
    /// The body is JSON of the wrong shape (422), or could not be read (400).
    InvalidBody = "invalid_body", None;
    InvalidQuery = "invalid_query", Some(400);
    UnsupportedMediaType = "unsupported_media_type", Some(415);
    BodyTooLarge = "body_too_large", Some(413);
    /// The body did not arrive whole within the body timeout.
    RequestTimeout = "request_timeout", Some(408);
    NotFound = "not_found", Some(404);
    MethodNotAllowed = "method_not_allowed", Some(405);
    Unauthorized = "unauthorized", Some(401);
    Forbidden = "forbidden", Some(403);

    // Projects and keys.
    /// A project that does not exist, or that the key does not reach.
    UnknownProject = "unknown_project", Some(404);
    /// A project name already taken.
    ProjectExists = "project_exists", Some(409);
    /// A key id that does not exist, or that the key does not reach.
    UnknownKey = "unknown_key", Some(404);
    /// A key request out of range: an expiry in the past, a name too long.
    InvalidKey = "invalid_key", Some(422);

    // Experiments and rankers.
    UnknownExperiment = "unknown_experiment", Some(404);
    UnknownRanker = "unknown_ranker", Some(422);
    InvalidName = "invalid_name", Some(422);
    ReservedName = "reserved_name", Some(422);
    InvalidRankers = "invalid_rankers", Some(422);
    /// Listed twice when creating (422), or already in the experiment when adding (409).
    DuplicateRanker = "duplicate_ranker", None;
    InvalidAttributionWindow = "invalid_attribution_window", Some(422);
    InvalidRankersPerQuery = "invalid_rankers_per_query", Some(422);
    InvalidSeed = "invalid_seed", Some(422);
    InvalidPolicy = "invalid_policy", Some(422);
    InvalidInterleaving = "invalid_interleaving", Some(422);
    MemoryBudgetExceeded = "memory_budget_exceeded", Some(422);
    ExperimentConcluded = "experiment_concluded", Some(409);
    ExperimentPaused = "experiment_paused", Some(409);
    TooManyRankers = "too_many_rankers", Some(409);
    TooFewRankers = "too_few_rankers", Some(409);
    RankerRetired = "ranker_retired", Some(409);
    MatrixTooLarge = "matrix_too_large", Some(422);
    /// A `browser_clicks` origin that is not `scheme://host[:port]` as browsers send it.
    InvalidOrigin = "invalid_origin", Some(422);
    /// `decision` settings out of range (delta, epsilon, the confirmation share).
    InvalidDecisionSettings = "invalid_decision_settings", Some(422);
    /// A `stop_rule` out of range.
    InvalidStopRule = "invalid_stop_rule", Some(422);
    /// A `webhook` whose URL cannot be posted to or whose secret is too short.
    InvalidWebhook = "invalid_webhook", Some(422);

    // Duels, interleavings, clicks and outcomes.
    InvalidToken = "invalid_token", Some(400);
    DuelExpired = "duel_expired", Some(410);
    InvalidList = "invalid_list", Some(422);
    ListsMismatch = "lists_mismatch", Some(422);
    InvalidClicks = "invalid_clicks", Some(422);
    ClickNotShown = "click_not_shown", Some(422);
    InvalidOutcome = "invalid_outcome", Some(422);
    WinnerNotInDuel = "winner_not_in_duel", Some(422);
    RankersMismatch = "rankers_mismatch", Some(422);
    InvalidCredits = "invalid_credits", Some(422);
    InvalidBatch = "invalid_batch", Some(422);
    OutcomeConflict = "outcome_conflict", Some(409);
    /// Clicks posted without a key from a page whose origin the experiment does not list.
    OriginNotAllowed = "origin_not_allowed", Some(403);

    // The service.
    DatabaseUnavailable = "database_unavailable", Some(503);
    NotReady = "not_ready", Some(503);
    Internal = "internal", Some(500);

    // Metrics and conversions.
    /// `metrics` or `primary_metric` out of range or malformed.
    InvalidMetrics = "invalid_metrics", Some(422);
    /// A metric the experiment does not declare.
    UnknownMetric = "unknown_metric", Some(422);
    /// A conversion with a missing or malformed field (event id, value).
    InvalidConversion = "invalid_conversion", Some(422);
    /// A conversion on a document the interleaving did not show.
    ConversionNotShown = "conversion_not_shown", Some(422);
    /// A conversion after its metric's attribution window closed.
    ConversionWindowClosed = "conversion_window_closed", Some(422);
    /// The same (duel, metric, event id) posted before with a different document or value.
    ConversionConflict = "conversion_conflict", Some(409);
    /// A duel that has the most conversions one duel may have.
    ConversionLimit = "conversion_limit_reached", Some(409);
    /// A test-clock offset out of range.
    InvalidClock = "invalid_clock", Some(422);
    // Units and segments.
    /// `units` settings out of range.
    InvalidUnits = "invalid_units", Some(422);
    /// A duel request's `unit` or `query` that is empty, too long, or a query without a unit.
    InvalidUnit = "invalid_unit", Some(422);
    /// `segments` settings out of range.
    InvalidSegments = "invalid_segments", Some(422);
    /// A segment label that is empty, too long or has control characters.
    InvalidSegment = "invalid_segment", Some(422);
    /// A new segment label beyond the experiment's `max_segments`.
    SegmentLimit = "segment_limit_reached", Some(409);
    /// `offset` or `page` with an interleaving method whose pages would not continue one list.
    PagingUnsupported = "paging_unsupported", Some(422);
    // Exports.
    /// An export's `after` that this service did not sign, or that belongs to another
    /// experiment's export or to the other kind of rows.
    InvalidCursor = "invalid_cursor", Some(400);
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn wire_names_are_distinct_snake_case() {
        let names: HashSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for name in names {
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
        }
    }
}

//! `"segments": {"max_segments": N}` of an experiment, and the segment label a duel request may
//! carry. The label names a kind of query (a locale, a device, navigational or not); the
//! experiment accepts at most `max_segments` distinct labels, so the per-segment counts stay
//! bounded, and refuses a new label beyond them ([`ErrorCode::SegmentLimit`]).

use crate::api::{DEFAULT_MAX_SEGMENTS, ErrorCode, SegmentSettings};
use crate::engine::EngineError;

/// Most segments an experiment may declare: each keeps its own win matrix.
pub const MAX_MAX_SEGMENTS: i32 = 1000;
/// Longest segment label, in bytes.
pub const MAX_LABEL_LEN: usize = 100;

impl Default for SegmentSettings {
    fn default() -> Self {
        SegmentSettings {
            max_segments: DEFAULT_MAX_SEGMENTS,
        }
    }
}

impl SegmentSettings {
    pub fn validate(&self) -> Result<(), EngineError> {
        if !(1..=MAX_MAX_SEGMENTS).contains(&self.max_segments) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidSegments,
                format!(
                    "segments.max_segments must be in 1..={MAX_MAX_SEGMENTS}, got {}",
                    self.max_segments
                ),
            ));
        }
        Ok(())
    }
}

/// Checks a request's segment label: 1 to [`MAX_LABEL_LEN`] bytes, no control characters.
pub fn check_label(label: &str) -> Result<(), EngineError> {
    if label.is_empty() || label.len() > MAX_LABEL_LEN || label.chars().any(char::is_control) {
        return Err(EngineError::invalid(
            ErrorCode::InvalidSegment,
            format!(
                "`segment` must be 1 to {MAX_LABEL_LEN} bytes without control characters, got {label:?}"
            ),
        ));
    }
    Ok(())
}

/// The refusal of a label beyond the experiment's limit.
pub fn limit_reached(label: &str, max: i32) -> EngineError {
    EngineError::conflict(
        ErrorCode::SegmentLimit,
        format!(
            "the experiment already has its {max} segments (segments.max_segments); \
             segment {label:?} is not one of them"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_limits_are_checked() {
        assert!(check_label("mobile").is_ok());
        assert!(check_label("").is_err());
        assert!(check_label("a\nb").is_err());
        assert!(check_label(&"x".repeat(MAX_LABEL_LEN + 1)).is_err());
        assert!(SegmentSettings { max_segments: 0 }.validate().is_err());
        assert!(SegmentSettings::default().validate().is_ok());
    }
}

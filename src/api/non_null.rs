//! Optional request fields that may be left out but not sent as `null`. The OpenAPI document types
//! them without null, so a body with `"ordering": null` breaks the schema; without this serde would
//! read the null as "absent", and a batch would accept the body and refuse its items one by one
//! instead of refusing the body.

use serde::{Deserialize, Deserializer};

/// `#[serde(default, deserialize_with = "non_null")]`: absent is `None`, `null` is an error.
pub fn non_null<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(default, deserialize_with = "non_null")]
        field: Option<Vec<u32>>,
    }

    #[test]
    fn absent_is_none_present_is_some_and_null_is_refused() {
        let absent: Body = serde_json::from_str("{}").unwrap();
        assert_eq!(absent.field, None);
        let present: Body = serde_json::from_str(r#"{"field": [1]}"#).unwrap();
        assert_eq!(present.field, Some(vec![1]));
        let null = serde_json::from_str::<Body>(r#"{"field": null}"#).unwrap_err();
        assert!(null.to_string().contains("invalid type: null"), "{null}");
    }
}

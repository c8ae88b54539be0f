//! Extractors that turn every malformed request into the one JSON error shape, never axum's
//! plain-text rejections.

use axum::body::Bytes;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::connections::BodyDeadline;
use super::error::ApiError;
use crate::api::ErrorCode;
use crate::api::Object;
use crate::api::in_json_words;

/// A JSON body. Malformed JSON is 400 `invalid_json`; JSON of the wrong shape is 422
/// `invalid_body`; a missing or non-JSON content type is 415; an oversized body 413; a body not
/// read whole by its [`BodyDeadline`] 408.
///
/// JSON has one number type, so an integral float such as `55.0` is accepted where an integer is
/// expected (generated clients and JavaScript's `JSON.stringify` of computed values send them).
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json_content_type(req.headers()) {
            return Err(unsupported_media_type());
        }
        read_json(req, state).await.map(Json)
    }
}

/// A JSON body that may be left out: no body at all (or an empty one, with any content type)
/// reads as `T::default()`; otherwise as [`Json`].
pub struct OptionalJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let empty = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() == "0")
            || (req.headers().get(header::CONTENT_LENGTH).is_none()
                && req.headers().get(header::TRANSFER_ENCODING).is_none());
        if empty {
            return Ok(OptionalJson(T::default()));
        }
        if !is_json_content_type(req.headers()) {
            return Err(unsupported_media_type());
        }
        // `read_json` refuses an array too, which a struct whose fields are all optional would
        // otherwise read as all defaults (see api::json_object).
        read_json(req, state).await.map(OptionalJson)
    }
}

/// A JSON body sent as JSON or as `text/plain`, which is what `navigator.sendBeacon` sends for a
/// string (`text/plain;charset=UTF-8`): a browser can post it cross-origin without a preflight.
/// Otherwise as [`Json`].
pub struct JsonOrText<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonOrText<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json_content_type(req.headers()) && !is_text_plain(req.headers()) {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "expected a JSON body with `Content-Type: application/json` (or `text/plain`)",
            ));
        }
        read_json(req, state).await.map(JsonOrText)
    }
}

/// Reads the body and parses it as JSON, whatever its content type says.
async fn read_json<S: Send + Sync, T: DeserializeOwned>(
    req: Request,
    state: &S,
) -> Result<T, ApiError> {
    // The body's deadline (the server's --body-timeout-secs, stamped on the request by the
    // connection loop): a client trickling its body gets a 408 instead of holding a connection.
    let deadline = req.extensions().get::<BodyDeadline>().map(|d| d.0);
    let read = Bytes::from_request(req, state);
    let read = match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, read)
            .await
            .map_err(|_| request_timeout())?,
        None => read.await,
    };
    let bytes = read.map_err(|r| body_rejection(r.status(), r.body_text()))?;
    // The common case, a well-formed body, is parsed straight into `T`. axum's own parse tracks
    // the path of every field and list item (serde_path_to_error) for its error message: with
    // it, parsing took 8% of the server's time on interleavings (docs/benchmarks.md). A body
    // that fails here is parsed again that way below, so errors read exactly as before. Both
    // parses run the same serde_json deserializer and reject trailing bytes, so they accept the
    // same bodies.
    //
    // Every documented body is an object: `Object` refuses the array a derived struct would
    // also take (see api::json_object).
    if let Ok(Object(value)) = serde_json::from_slice::<Object<T>>(&bytes) {
        return Ok(value);
    }
    match axum::Json::<Object<T>>::from_bytes(&bytes) {
        Ok(axum::Json(Object(v))) => Ok(v),
        // The common case is answered above without building a tree; only a body of the
        // wrong shape is looked at again for integral floats.
        Err(rejection @ JsonRejection::JsonDataError(_)) => from_integral_floats(&bytes)
            .map(|Object(v)| v)
            .ok_or_else(|| json_rejection(rejection)),
        Err(rejection) => Err(json_rejection(rejection)),
    }
}

/// The essence of the content type (`text/plain` of `text/plain;charset=UTF-8`), in the case it
/// was sent in: compared without regard to case, with no copy on every request.
fn content_type_essence(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::CONTENT_TYPE)?.as_bytes();
    let essence = value.split(|b| *b == b';').next().unwrap_or_default();
    Some(essence.trim_ascii())
}

fn is_text_plain(headers: &HeaderMap) -> bool {
    content_type_essence(headers).is_some_and(|e| e.eq_ignore_ascii_case(b"text/plain"))
}

/// 408: the body did not arrive whole before the body timeout. The connection is closed after
/// the answer (hyper closes a connection whose request body was left unread; `Connection: close`
/// says so).
fn request_timeout() -> ApiError {
    ApiError::new(
        ErrorCode::RequestTimeout,
        "the request body did not arrive in time (--body-timeout-secs)",
    )
}

/// `application/json` or `application/*+json`, as axum's own extractor accepts.
fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(essence) = content_type_essence(headers) else {
        return false;
    };
    const APPLICATION: &[u8] = b"application/";
    const SUFFIX: &[u8] = b"+json";
    essence.eq_ignore_ascii_case(b"application/json")
        || (essence.len() >= APPLICATION.len() + SUFFIX.len()
            && essence[..APPLICATION.len()].eq_ignore_ascii_case(APPLICATION)
            && essence[essence.len() - SUFFIX.len()..].eq_ignore_ascii_case(SUFFIX))
}

/// Deserialises `bytes` once every integral float in them is an integer, if that changes anything.
fn from_integral_floats<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    let mut value: Value = serde_json::from_slice(bytes).ok()?;
    if !integral_floats_to_integers(&mut value) {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// Turns each float with no fractional part that fits an i64 or u64 into that integer; says
/// whether any was turned.
fn integral_floats_to_integers(value: &mut Value) -> bool {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // 2^63 and 2^64 are exact in f64; the ranges are half-open so the casts are exact.
            let integer = if f.fract() != 0.0 {
                None
            } else if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
                Some(serde_json::Number::from(f as i64))
            } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                Some(serde_json::Number::from(f as u64))
            } else {
                None
            };
            integer.map(|i| *n = i).is_some()
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        _ => false,
    }
}

fn unsupported_media_type() -> ApiError {
    ApiError::new(
        ErrorCode::UnsupportedMediaType,
        "expected a JSON body with `Content-Type: application/json`",
    )
}

fn body_rejection(status: StatusCode, text: String) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(ErrorCode::BodyTooLarge, "the request body is too large")
    } else {
        ApiError::with_status(StatusCode::BAD_REQUEST, ErrorCode::InvalidBody, text)
    }
}

fn json_rejection(r: JsonRejection) -> ApiError {
    let text = in_json_words(&r.body_text());
    match r {
        JsonRejection::JsonDataError(_) => ApiError::with_status(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidBody,
            text,
        ),
        JsonRejection::JsonSyntaxError(_) => ApiError::new(ErrorCode::InvalidJson, text),
        JsonRejection::MissingJsonContentType(_) => unsupported_media_type(),
        _ => body_rejection(r.status(), text),
    }
}

/// Declares an extractor of request parts that wraps axum's own and answers its rejections with
/// the one JSON error shape.
macro_rules! parts_extractor {
    ($(#[doc = $doc:literal])* $name:ident, $axum:ident, $rejection:ident) => {
        $(#[doc = $doc])*
        pub struct $name<T>(pub T);

        impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for $name<T> {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
                axum::extract::$axum::<T>::from_request_parts(parts, state)
                    .await
                    .map(|axum::extract::$axum(v)| $name(v))
                    .map_err($rejection)
            }
        }
    };
}

parts_extractor!(
    /// A path parameter; a malformed one (e.g. a non-numeric id) is a 404, as no such resource
    /// exists.
    Path,
    Path,
    path_rejection
);

parts_extractor!(
    /// Query parameters; bad ones are 400 `invalid_query`.
    Query,
    Query,
    query_rejection
);

fn path_rejection(r: PathRejection) -> ApiError {
    let detail = match &r {
        PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
            ErrorKind::ParseErrorAtKey { key, value, .. } => {
                format!(": `{value}` is not a valid `{key}`")
            }
            ErrorKind::ParseErrorAtIndex { value, .. } | ErrorKind::ParseError { value, .. } => {
                format!(": `{value}` is not a valid path segment")
            }
            _ => String::new(),
        },
        _ => String::new(),
    };
    ApiError::not_found(format!("no such resource{detail}"))
}

fn query_rejection(r: QueryRejection) -> ApiError {
    ApiError::new(ErrorCode::InvalidQuery, in_json_words(&r.body_text()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_become_integers_and_others_stay() {
        let mut v: Value = serde_json::from_str(
            r#"{"a": 55.0, "b": [1.5, -3.0, 1e300], "c": 18446744073709549568.0, "d": 7}"#,
        )
        .unwrap();
        assert!(integral_floats_to_integers(&mut v));
        assert_eq!(
            v,
            json!({"a": 55, "b": [1.5, -3, 1e300], "c": 18446744073709549568u64, "d": 7})
        );
        let mut plain = json!({"a": 1, "b": [2.5]});
        assert!(!integral_floats_to_integers(&mut plain));
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Lists {
        lists: std::collections::HashMap<String, Vec<String>>,
    }

    async fn parse(body: &'static str) -> Result<Lists, ApiError> {
        let req = Request::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(body))
            .unwrap();
        Json::<Lists>::from_request(req, &()).await.map(|Json(v)| v)
    }

    /// Bodies parsed without path tracking read as before, and a body that fails still gets
    /// the message with the path of what was wrong.
    #[tokio::test]
    async fn the_fast_parse_keeps_every_answer() {
        let ok = parse(r#"{"lists": {"a": ["d1", "d2"]}}"#).await.unwrap();
        assert_eq!(ok.lists["a"], vec!["d1".to_string(), "d2".to_string()]);

        let wrong = parse(r#"{"lists": {"a": ["d1", 7]}}"#).await.unwrap_err();
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(wrong.code, ErrorCode::InvalidBody);
        assert!(wrong.message.contains("lists.a[1]"), "{}", wrong.message);

        let unknown = parse(r#"{"lists": {}, "extra": 1}"#).await.unwrap_err();
        assert_eq!(unknown.code, ErrorCode::InvalidBody);
        assert!(unknown.message.contains("extra"), "{}", unknown.message);

        let trailing = parse(r#"{"lists": {}} x"#).await.unwrap_err();
        assert_eq!(trailing.code, ErrorCode::InvalidJson);
    }

    #[test]
    fn json_content_types() {
        let typed = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, v.parse().unwrap());
            h
        };
        let with = |v| is_json_content_type(&typed(v));
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(with("application/problem+json"));
        assert!(!with("text/plain"));
        assert!(!with("application/jsonx"));
        assert!(!is_json_content_type(&HeaderMap::new()));
        let text = |v| is_text_plain(&typed(v));
        assert!(text("text/plain;charset=UTF-8"));
        assert!(text("Text/Plain"));
        assert!(!text("text/html"));
    }
}

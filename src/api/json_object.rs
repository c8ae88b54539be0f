//! Request fields whose documented type is a JSON object. serde's derived `Deserialize` for a
//! struct also takes a JSON array (its sequence form: the fields in order, trailing ones with
//! defaults left out), so without these `"decision": []` would read as "all defaults" and an
//! outcome could be sent as `["token", "a"]`. Each helper reads the value as a map only, so an
//! array is refused with the field's path, like any other wrong type.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A `T` that was given as a JSON object.
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }

        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

/// `#[serde(default, deserialize_with = "non_null_object")]`: absent is `None`; an object is
/// `Some`; `null`, an array or any other type is an error.
pub fn non_null_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Object::deserialize(deserializer).map(|Object(v)| Some(v))
}

/// `#[serde(default, deserialize_with = "nullable_object")]`: absent is `None`, `null` is
/// `Some(None)` (the setting turned off), an object is `Some(Some(..))`; anything else is an
/// error.
pub fn nullable_object<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Object<T>>::deserialize(deserializer).map(|v| Some(v.map(|Object(v)| v)))
}

/// `#[serde(deserialize_with = "objects")]`: a list whose items are each an object.
pub fn objects<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Vec::<Object<T>>::deserialize(deserializer)
        .map(|items| items.into_iter().map(|Object(v)| v).collect())
}

/// `#[serde(default, deserialize_with = "non_null_objects")]`: absent is `None`; a list of
/// objects is `Some`; `null` or any item that is not an object is an error.
pub fn non_null_objects<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    objects(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Inner {
        a: u32,
        b: bool,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(default, deserialize_with = "non_null_object")]
        one: Option<Inner>,
        #[serde(default, deserialize_with = "nullable_object")]
        off: Option<Option<Inner>>,
        #[serde(default, deserialize_with = "non_null_objects")]
        many: Option<Vec<Inner>>,
    }

    fn parse(text: &str) -> Result<Body, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_derived_struct_alone_takes_an_array_which_is_why_these_exist() {
        let inner: Inner = serde_json::from_str("[]").unwrap();
        assert_eq!(inner, Inner::default());
    }

    #[test]
    fn objects_are_read_and_absent_fields_are_none() {
        let body = parse(r#"{"one": {"a": 3}, "off": null, "many": [{"b": true}]}"#).unwrap();
        assert_eq!(body.one, Some(Inner { a: 3, b: false }));
        assert_eq!(body.off, Some(None));
        assert_eq!(body.many, Some(vec![Inner { a: 0, b: true }]));
        let empty = parse("{}").unwrap();
        assert!(empty.one.is_none() && empty.off.is_none() && empty.many.is_none());
        let on = parse(r#"{"off": {"a": 1}}"#).unwrap();
        assert_eq!(on.off, Some(Some(Inner { a: 1, b: false })));
    }

    #[test]
    fn arrays_nulls_and_scalars_are_refused_where_an_object_belongs() {
        for text in [
            r#"{"one": []}"#,
            r#"{"one": [3, true]}"#,
            r#"{"one": null}"#,
            r#"{"one": 3}"#,
            r#"{"off": []}"#,
            r#"{"off": "x"}"#,
            r#"{"many": [[]]}"#,
            r#"{"many": null}"#,
            r#"{"many": {}}"#,
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.contains("invalid type"), "{text}: {err}");
        }
    }

    #[test]
    fn the_inner_struct_still_refuses_unknown_fields_and_wrong_types() {
        let err = parse(r#"{"one": {"c": 1}}"#).unwrap_err();
        assert!(err.contains("unknown field `c`"), "{err}");
        let err = parse(r#"{"one": {"a": "x"}}"#).unwrap_err();
        assert!(err.contains("invalid type"), "{err}");
    }
}

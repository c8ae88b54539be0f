//! Deserialisation messages in the API's words. serde describes what it expected by the Rust
//! type it was building (`expected struct PolicySpec`, `expected u64`), which means nothing to a
//! client; these are replaced by the JSON that would have been accepted.

/// `message` with every Rust type name after `expected` (and in serde's untagged-enum message)
/// replaced by a description of the JSON expected.
pub fn in_json_words(message: &str) -> String {
    const UNTAGGED: &str = "any variant of untagged enum ";
    let mut message = message.to_string();
    while let Some(at) = message.find(UNTAGGED) {
        let rest = &message[at + UNTAGGED.len()..];
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        message.replace_range(
            at..at + UNTAGGED.len() + name_len,
            "any of the accepted forms",
        );
    }
    let words: Vec<&str> = message.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        out.push(words[i].to_string());
        let after = &words[i + 1..];
        let replaced = match words[i] {
            "expected" => expected(after),
            "type:" => after
                .first()
                .and_then(|w| kind_word(w).map(|json| (1, format!("{json}{}", tail(w))))),
            _ => None,
        };
        i += 1;
        if let Some((consumed, json)) = replaced {
            out.push(json);
            i += consumed;
        }
    }
    out.join(" ")
}

/// What serde's description starting `words` means in JSON: how many words it takes and the
/// JSON words for them.
fn expected(words: &[&str]) -> Option<(usize, String)> {
    const NAMED: [(&[&str], &str); 7] = [
        (&["internally", "tagged", "enum"], "an object"),
        (&["adjacently", "tagged", "enum"], "an object"),
        (&["untagged", "enum"], "one of the accepted forms"),
        (&["tuple", "struct"], "an array"),
        (&["unit", "struct"], "null"),
        (&["struct"], "an object"),
        (&["enum"], "one of the accepted values"),
    ];
    for (lead, json) in NAMED {
        if words.len() > lead.len() && words[..lead.len()] == *lead {
            let name = words[lead.len()];
            return Some((lead.len() + 1, format!("{json}{}", tail(name))));
        }
    }
    let first = words.first()?;
    if let Some(json) = primitive_word(ident(first)) {
        return Some((1, format!("{json}{}", tail(first))));
    }
    match words {
        ["a", kind, ..] => kind_word(kind).map(|json| (2, format!("{json}{}", tail(kind)))),
        _ => None,
    }
}

/// The JSON for a Rust primitive type's name.
fn primitive_word(name: &str) -> Option<&'static str> {
    Some(match name {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "bool" => "true or false",
        "char" => "a single character",
        "String" => "a string",
        "option" => "a value or null",
        _ => return None,
    })
}

/// serde's words for JSON kinds, in JSON's own: a sequence is an array, a map an object.
fn kind_word(word: &str) -> Option<&'static str> {
    match ident(word) {
        "sequence" => Some("an array"),
        "map" => Some("an object"),
        _ => None,
    }
}

/// The identifier at the start of `word` (a word may end in punctuation: `PolicySpec,`).
fn ident(word: &str) -> &str {
    let end = word
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(word.len());
    &word[..end]
}

/// What follows the identifier at the start of `word`.
fn tail(word: &str) -> &str {
    &word[ident(word).len()..]
}

#[cfg(test)]
mod tests {
    use super::in_json_words;

    #[test]
    fn rust_type_names_become_json_words() {
        let cases = [
            (
                "policy: invalid type: string \"rucb\", expected struct PolicySpec at line 1 column 40",
                "policy: invalid type: string \"rucb\", expected an object at line 1 column 40",
            ),
            (
                "rankers_per_query: invalid type: string \"3\", expected usize",
                "rankers_per_query: invalid type: string \"3\", expected a non-negative integer",
            ),
            (
                "tie_rule: invalid type: integer `3`, expected enum TieRule",
                "tie_rule: invalid type: integer `3`, expected one of the accepted values",
            ),
            (
                "ordering[0]: data did not match any variant of untagged enum Rank at line 1",
                "ordering[0]: data did not match any of the accepted forms at line 1",
            ),
            (
                "invalid type: map, expected a sequence",
                "invalid type: an object, expected an array",
            ),
            (
                "tau: invalid type: string \"x\", expected f64",
                "tau: invalid type: string \"x\", expected a number",
            ),
        ];
        for (serde, json) in cases {
            assert_eq!(in_json_words(serde), json);
        }
    }

    #[test]
    fn other_messages_are_kept() {
        for kept in [
            "missing field `name`",
            "unknown variant `x`, expected one of `ignore`, `half_win`",
            "unknown field `u64`, expected `after` or `limit`",
        ] {
            assert_eq!(in_json_words(kept), kept);
        }
    }
}

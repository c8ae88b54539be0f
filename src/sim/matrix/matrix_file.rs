//! Reading preference matrices from text files.
//!
//! Format (`data/mslr-navigational.txt` and `data/mslr-perfect.txt` are the plain case):
//! - one row of the matrix per line; values separated by whitespace, commas, or both;
//! - blank lines and lines starting with `#` are ignored;
//! - optional ranker names, either
//!   - a header line of K names (recognised because its last field is not a number), optionally
//!     preceded by one corner field when the rows also carry names, or
//!   - a first column of names (recognised because a row's first field is not a number); then
//!     every row must have one;
//!
//!   when both are given they must agree. Without names, rankers are called `r0`, `r1`, ...
//! - validation as [`PrefMatrix::from_rows`]: square, p_ij + p_ji = 1 and p_ii = 1/2 within
//!   [`TOLERANCE`], values in [0, 1]; every error names the file line.

use std::collections::HashSet;
use std::path::Path;

use super::preference_matrix::{PrefMatrix, TOLERANCE};

/// Reads and validates a matrix file.
pub fn load(path: &Path) -> Result<PrefMatrix, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read matrix file {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn fields(line: &str) -> Vec<&str> {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|f| !f.is_empty())
        .collect()
}

fn is_number(field: &str) -> bool {
    field.parse::<f64>().is_ok()
}

/// Parses the text of a matrix file (see the module documentation).
pub fn parse(text: &str) -> Result<PrefMatrix, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, fields(l)))
        .filter(|(_, f)| !f.is_empty() && !f[0].starts_with('#'))
        .peekable();

    let header = match lines.peek() {
        Some((_, f)) if !is_number(f.last().unwrap()) => lines.next(),
        _ => None,
    };

    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut row_lines: Vec<usize> = Vec::new();
    let mut row_names: Vec<Option<String>> = Vec::new();
    for (line, f) in lines {
        let (name, values) = if is_number(f[0]) {
            (None, &f[..])
        } else {
            (Some(f[0].to_string()), &f[1..])
        };
        let mut row = Vec::with_capacity(values.len());
        for (col, v) in values.iter().enumerate() {
            let x: f64 = v
                .parse()
                .map_err(|_| format!("line {line}: value {} `{v}` is not a number", col + 1))?;
            row.push(x);
        }
        rows.push(row);
        row_lines.push(line);
        row_names.push(name);
    }

    let k = rows.len();
    if k < 2 {
        return Err(format!(
            "a preference matrix needs at least 2 rows, found {k}"
        ));
    }
    for (row, &line) in rows.iter().zip(&row_lines) {
        if row.len() != k {
            return Err(format!(
                "line {line}: {} values, but the matrix has {k} rows (it must be square)",
                row.len()
            ));
        }
    }

    let named_rows = row_names.iter().filter(|n| n.is_some()).count();
    if named_rows != 0 && named_rows != k {
        let line = row_names
            .iter()
            .zip(&row_lines)
            .find(|(n, _)| n.is_none())
            .map(|(_, l)| *l)
            .unwrap();
        return Err(format!(
            "line {line}: this row has no name, but other rows start with a name"
        ));
    }
    let column_names: Option<Vec<String>> =
        (named_rows == k).then(|| row_names.into_iter().flatten().collect());

    let header_names = match header {
        None => None,
        Some((line, f)) => {
            let names: &[&str] = if f.len() == k + 1 && column_names.is_some() {
                &f[1..]
            } else {
                &f[..]
            };
            if names.len() != k {
                return Err(format!(
                    "line {line}: header has {} names for a {k} x {k} matrix",
                    names.len()
                ));
            }
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            if let Some(cols) = &column_names
                && cols != &names
            {
                return Err(format!(
                    "line {line}: header names differ from the names that start the rows"
                ));
            }
            Some(names)
        }
    };
    let names = header_names.or(column_names);
    if let Some(names) = &names {
        let mut seen = HashSet::new();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(format!("ranker name `{dup}` appears twice"));
        }
    }

    for (i, row) in rows.iter().enumerate() {
        let line = row_lines[i];
        if (row[i] - 0.5).abs() > TOLERANCE {
            return Err(format!(
                "line {line}: diagonal value {} (row {}, column {}) must be 1/2",
                row[i],
                i + 1,
                i + 1
            ));
        }
        for (j, &v) in row.iter().enumerate() {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "line {line}: value {v} in column {} is outside [0, 1]",
                    j + 1
                ));
            }
            let sum = v + rows[j][i];
            if (sum - 1.0).abs() > TOLERANCE {
                return Err(format!(
                    "line {line}: p({0},{1}) = {v} and p({1},{0}) = {2} (line {3}) sum to {sum}, \
                     must sum to 1",
                    i + 1,
                    j + 1,
                    rows[j][i],
                    row_lines[j]
                ));
            }
        }
    }
    PrefMatrix::from_rows(rows, names)
}

/// The matrix as `joust simulate --matrix` reads it: `#` comment lines (here, how it was made),
/// a header line of ranker names, then whitespace-separated rows of p_ij in the same order.
pub fn matrix_text(rows: &[Vec<f64>], names: &[String], comments: &[String]) -> String {
    let mut out = String::new();
    for c in comments {
        out.push_str("# ");
        out.push_str(c);
        out.push('\n');
    }
    out.push_str(&names.join(" "));
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = row.iter().map(|p| format!("{p:e}")).collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_whitespace_rows() {
        let m = parse("0.5 0.6\n0.4 0.5\n").unwrap();
        assert_eq!(m.k(), 2);
        assert_eq!(m.p(0, 1), 0.6);
        assert_eq!(m.names(), ["r0", "r1"]);
    }

    #[test]
    fn commas_comments_and_blank_lines() {
        let m = parse("# a comment\n\n0.5, 0.6\n0.4,0.5\n").unwrap();
        assert_eq!(m.p(1, 0), 0.4);
    }
}

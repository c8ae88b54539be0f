//! Learning-to-rank data in LETOR format, one ranker per feature, and NDCG@10.
//!
//! Format (as MSLR-WEB10K/30K and LETOR 4.0 ship it), one document per line:
//! `rel qid:Q 1:v1 2:v2 ... # optional comment`. `rel` is a non-negative integer grade, `Q` any
//! token, features are `id:value` with id >= 1. Features a line leaves out are 0 (the sparse
//! convention). Lines of the same query need not be contiguous. Empty lines and lines starting
//! with `#` are skipped.
//!
//! A feature ranker ranks a query's documents by that feature, highest first; equal values keep
//! file order (lower document index first), so rankings are deterministic.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::BufRead;

/// Length of a feature ranker's result list in the literature (and of NDCG@10).
pub const LIST_LEN: usize = 10;

/// A parsed data set.
#[derive(Debug, Clone, PartialEq)]
pub struct LetorData {
    /// Feature ids that occur in the data, ascending: the rankers.
    pub feature_ids: Vec<u32>,
    /// Columns per document in [`Query::features`]: the highest feature id (column = id - 1).
    pub stride: usize,
    pub queries: Vec<Query>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub qid: String,
    /// Relevance grade per document, in file order.
    pub relevance: Vec<u8>,
    /// Row-major, `stride` values per document.
    pub features: Vec<f32>,
}

impl Query {
    pub fn docs(&self) -> usize {
        self.relevance.len()
    }
}

/// A parse error, with the 1-based line it happened on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LetorError {
    pub line: usize,
    pub message: String,
}

#[derive(Default)]
struct Builder {
    stride: usize,
    seen: Vec<bool>,
    queries: Vec<Query>,
    by_qid: HashMap<String, usize>,
    values: Vec<(usize, f32)>,
}

impl Builder {
    fn line(&mut self, line: &str) -> Result<(), String> {
        let data = line.split('#').next().unwrap_or("").trim();
        if data.is_empty() {
            return Ok(());
        }
        let mut tokens = data.split_whitespace();
        let rel = tokens.next().expect("non-empty line has a token");
        let rel: u8 = rel
            .parse()
            .map_err(|_| format!("relevance '{rel}' is not a grade 0..=255"))?;
        let qid = tokens
            .next()
            .and_then(|t| t.strip_prefix("qid:"))
            .filter(|q| !q.is_empty())
            .ok_or("expected 'qid:Q' after the relevance grade")?;
        self.values.clear();
        for token in tokens {
            let (id, value) = token
                .split_once(':')
                .ok_or_else(|| format!("feature '{token}' is not 'id:value'"))?;
            let id: usize = id
                .parse()
                .ok()
                .filter(|&id| id >= 1)
                .ok_or_else(|| format!("feature id '{id}' is not an integer >= 1"))?;
            let value: f32 = value
                .parse()
                .ok()
                .filter(|v: &f32| v.is_finite())
                .ok_or_else(|| format!("feature {id} has value '{value}', not a finite number"))?;
            self.values.push((id, value));
        }
        let widest = self.values.iter().map(|v| v.0).max().unwrap_or(0);
        if widest > self.stride {
            self.widen(widest);
        }
        let q = match self.by_qid.get(qid) {
            Some(&q) => q,
            None => {
                self.by_qid.insert(qid.to_string(), self.queries.len());
                self.queries.push(Query {
                    qid: qid.to_string(),
                    relevance: Vec::new(),
                    features: Vec::new(),
                });
                self.queries.len() - 1
            }
        };
        let query = &mut self.queries[q];
        let start = query.features.len();
        query.relevance.push(rel);
        query.features.resize(start + self.stride, 0.0);
        for &(id, value) in &self.values {
            query.features[start + id - 1] = value;
            self.seen[id - 1] = true;
        }
        Ok(())
    }

    /// Re-lays every stored row out with more columns (rare: the widest id usually comes first).
    fn widen(&mut self, stride: usize) {
        for q in &mut self.queries {
            let mut wide = vec![0.0; q.docs() * stride];
            for (d, row) in q.features.chunks(self.stride.max(1)).enumerate() {
                wide[d * stride..d * stride + row.len()].copy_from_slice(row);
            }
            q.features = wide;
        }
        self.stride = stride;
        self.seen.resize(stride, false);
    }

    fn finish(self) -> Result<LetorData, LetorError> {
        let feature_ids = (0..self.stride)
            .filter(|&c| self.seen[c])
            .map(|c| c as u32 + 1)
            .collect();
        Ok(LetorData {
            feature_ids,
            stride: self.stride,
            queries: self.queries,
        })
    }
}

impl LetorData {
    /// Parses LETOR text.
    pub fn parse(text: &str) -> Result<LetorData, LetorError> {
        Self::from_reader(text.as_bytes())
    }

    /// Parses LETOR data from a reader, line by line (MSLR files are gigabytes).
    pub fn from_reader<R: BufRead>(reader: R) -> Result<LetorData, LetorError> {
        let mut builder = Builder::default();
        for (i, line) in reader.lines().enumerate() {
            let err = |message: String| LetorError {
                line: i + 1,
                message,
            };
            let line = line.map_err(|e| err(format!("cannot read: {e}")))?;
            builder.line(&line).map_err(err)?;
        }
        builder.finish()
    }

    /// Value of feature `id` for document `doc` of query `q`.
    pub fn feature(&self, q: usize, doc: usize, id: u32) -> f32 {
        self.queries[q].features[doc * self.stride + id as usize - 1]
    }

    /// The documents of query `q` ranked by feature `id` (highest first, file order on equal
    /// values), cut to `len`.
    pub fn rank_by_feature(&self, q: usize, id: u32, len: usize) -> Vec<u32> {
        let mut docs: Vec<u32> = (0..self.queries[q].docs() as u32).collect();
        let value = |d: u32| self.feature(q, d as usize, id);
        // Values are finite (checked when parsing), so total_cmp orders them as numbers.
        docs.sort_by(|&x, &y| value(y).total_cmp(&value(x)).then(x.cmp(&y)));
        docs.truncate(len);
        docs
    }

    /// Mean NDCG@`k` of feature `id`'s ranker over the queries that have a relevant document.
    pub fn feature_ndcg(&self, id: u32, k: usize) -> f64 {
        let scores: Vec<f64> = (0..self.queries.len())
            .filter_map(|q| {
                ndcg(
                    &self.queries[q].relevance,
                    &self.rank_by_feature(q, id, k),
                    k,
                )
            })
            .collect();
        if scores.is_empty() {
            0.0
        } else {
            scores.iter().sum::<f64>() / scores.len() as f64
        }
    }

    /// The data as LETOR text, features written densely for the ids in `feature_ids`.
    pub fn to_letor_text(&self) -> String {
        let mut out = String::new();
        for (q, query) in self.queries.iter().enumerate() {
            for d in 0..query.docs() {
                write!(out, "{} qid:{}", query.relevance[d], query.qid).unwrap();
                for &id in &self.feature_ids {
                    write!(out, " {id}:{}", self.feature(q, d, id)).unwrap();
                }
                out.push('\n');
            }
        }
        out
    }
}

/// NDCG@k of `ranking` (document indices into `relevance`), with gain 2^rel - 1 and discount
/// 1 / log2(position + 1). `None` when the query has no relevant document (the ideal DCG is 0,
/// so every ranking is equally good and the query says nothing about the ranker).
pub fn ndcg(relevance: &[u8], ranking: &[u32], k: usize) -> Option<f64> {
    let dcg = |grades: &mut dyn Iterator<Item = u8>| -> f64 {
        grades
            .take(k)
            .enumerate()
            .map(|(i, g)| (2f64.powi(g as i32) - 1.0) / (i as f64 + 2.0).log2())
            .sum()
    };
    let mut ideal: Vec<u8> = relevance.to_vec();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let best = dcg(&mut ideal.into_iter());
    if best <= 0.0 {
        return None;
    }
    Some(dcg(&mut ranking.iter().map(|&d| relevance[d as usize])) / best)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
2 qid:10 1:0.5 2:3 3:1 # doc a
0 qid:10 1:0.9 3:1
1 qid:10 1:0.1 2:7
# a comment line

0 qid:11 1:1 2:1 3:1
";

    #[test]
    fn parses_grades_queries_and_sparse_features() {
        let data = LetorData::parse(SAMPLE).unwrap();
        assert_eq!(data.feature_ids, [1, 2, 3]);
        assert_eq!(data.queries.len(), 2);
        assert_eq!(data.queries[0].qid, "10");
        assert_eq!(data.queries[0].relevance, [2, 0, 1]);
        assert_eq!(data.feature(0, 1, 2), 0.0, "missing feature reads as 0");
        assert_eq!(data.feature(0, 2, 2), 7.0);
    }

    #[test]
    fn widening_keeps_earlier_rows() {
        let data = LetorData::parse("1 qid:1 1:5\n0 qid:1 1:2 4:9\n").unwrap();
        assert_eq!(data.feature_ids, [1, 4]);
        assert_eq!(data.feature(0, 0, 1), 5.0);
        assert_eq!(data.feature(0, 0, 4), 0.0);
        assert_eq!(data.feature(0, 1, 4), 9.0);
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("x qid:1 1:2", "line 1: relevance 'x'"),
            ("1 qid:1 1:2\n1 1:2", "line 2: expected 'qid:Q'"),
            (
                "1 qid:1 1:2\n\n1 qid:1 12",
                "line 3: feature '12' is not 'id:value'",
            ),
            ("1 qid:1 0:2", "line 1: feature id '0'"),
            ("1 qid:1 3:abc", "line 1: feature 3 has value 'abc'"),
            ("1 qid:1 3:NaN", "line 1: feature 3 has value 'NaN'"),
        ];
        for (text, expected) in cases {
            let e = LetorData::parse(text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{e}");
        }
    }

    #[test]
    fn feature_ranker_sorts_descending_with_file_order_ties() {
        let data = LetorData::parse(SAMPLE).unwrap();
        assert_eq!(data.rank_by_feature(0, 1, 10), [1, 0, 2]);
        assert_eq!(
            data.rank_by_feature(0, 3, 10),
            [0, 1, 2],
            "ties keep file order"
        );
        assert_eq!(data.rank_by_feature(0, 2, 2), [2, 0]);
    }

    #[test]
    fn ndcg_matches_a_hand_computation() {
        // Grades by document: [2, 0, 1]. Ranking (1, 0, 2): DCG = 0 + 3/log2(3) + 1/log2(4)
        // = 1.8928 + 0.5; ideal (0, 2, 1): 3 + 1/log2(3) = 3.6309.
        let got = ndcg(&[2, 0, 1], &[1, 0, 2], 10).unwrap();
        let want = (3.0 / 3f64.log2() + 0.5) / (3.0 + 1.0 / 3f64.log2());
        assert!((got - want).abs() < 1e-12);
        assert_eq!(ndcg(&[2, 0, 1], &[0, 2, 1], 10), Some(1.0));
        assert_eq!(ndcg(&[0, 0], &[0, 1], 10), None);
        // Only the top k count.
        assert_eq!(ndcg(&[0, 1], &[0, 1], 1), Some(0.0));
    }

    #[test]
    fn text_round_trips() {
        let data = LetorData::parse(SAMPLE).unwrap();
        assert_eq!(LetorData::parse(&data.to_letor_text()).unwrap(), data);
    }
}

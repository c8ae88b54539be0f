//! Feature rankers: every feature of a learning-to-rank data set as a ranker that orders each
//! query's documents by that feature (its top `list_len`), built once and shared by the click
//! simulation and the matrix estimate.

use super::letor_data::LetorData;
use rayon::prelude::*;

/// Every feature ranker's list for every query, with the documents' grades.
#[derive(Debug, Clone)]
pub struct FeatureRankers {
    pub feature_ids: Vec<u32>,
    /// `lists[r][q]`: ranker r's list for query q (document indices).
    pub lists: Vec<Vec<Vec<u32>>>,
    /// `grades[q][d]`: relevance grade of document d of query q.
    pub grades: Vec<Vec<u8>>,
}

impl FeatureRankers {
    /// One ranker per feature id of `data`, in ascending id order; queries without documents
    /// are left out.
    pub fn from_letor(data: &LetorData, list_len: usize) -> FeatureRankers {
        let queries: Vec<usize> = (0..data.queries.len())
            .filter(|&q| data.queries[q].docs() > 0)
            .collect();
        let lists = data
            .feature_ids
            .par_iter()
            .map(|&f| {
                queries
                    .iter()
                    .map(|&q| data.rank_by_feature(q, f, list_len))
                    .collect()
            })
            .collect();
        FeatureRankers {
            feature_ids: data.feature_ids.clone(),
            lists,
            grades: queries
                .iter()
                .map(|&q| data.queries[q].relevance.clone())
                .collect(),
        }
    }
}

/// Ranker names for the matrix file: `f` and the feature id (a bare number would read as a
/// matrix value).
pub fn ranker_names(feature_ids: &[u32]) -> Vec<String> {
    feature_ids.iter().map(|f| format!("f{f}")).collect()
}

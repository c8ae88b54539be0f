//! Interleaving a duel's two result lists, and turning the clicks on the shown list into the
//! duel's outcome.
//!
//! Neither step reads or writes the database on its own: the interleave call is answered from the
//! cached experiment and returns a signed interleaving token carrying the duel and the shown
//! interleaving (documents and what crediting them needs); the clicks call verifies that token,
//! credits the clicks with the experiment's method and hands the outcome to the same durable,
//! exactly-once pipeline as `POST /v1/outcomes`.

use rand::SeedableRng;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::outcomes::{Answer, count_rejection, pending, pending_set, posted};
use crate::api::{ClickRecord, ClicksInput, ErrorCode, InterleaveInput, ShownDocument};
use crate::bandit::BanditRng;
use crate::engine::ingest::Posting;
use crate::engine::model::{DuelClaims, DuelRankers, InterleavingClaims, SetResult, Snapshot};
use crate::engine::settings::Credit;
use crate::engine::{Engine, EngineError};
use crate::interleave::{Interleaving, Outcome, Team, interleave};
use crate::store::outcomes::PostedAs;

/// Longest result list accepted per ranker.
pub const MAX_LIST_LEN: usize = 1000;
/// Longest document id accepted, in bytes.
pub const MAX_DOC_ID_LEN: usize = 512;
/// Most clicks accepted for one shown list.
pub const MAX_CLICKS: usize = 1000;

/// Largest `offset` accepted: no list is longer.
pub const MAX_OFFSET: usize = MAX_LIST_LEN;

impl InterleaveInput {
    /// The position of the page's first document in the whole interleaving.
    fn offset(&self, page_len: usize) -> Result<usize, EngineError> {
        let offset = match (self.offset, self.page) {
            (None, None) => 0,
            (Some(o), None) => o,
            (None, Some(p)) if p >= 1 => (p - 1).saturating_mul(page_len),
            (None, Some(_)) => {
                return Err(EngineError::invalid(
                    ErrorCode::InvalidBody,
                    "`page` counts from 1",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(EngineError::invalid(
                    ErrorCode::InvalidBody,
                    "give at most one of `offset` and `page`",
                ));
            }
        };
        if offset > MAX_OFFSET {
            return Err(EngineError::invalid(
                ErrorCode::InvalidBody,
                format!("a page starts at most at position {MAX_OFFSET}, got {offset}"),
            ));
        }
        Ok(offset)
    }
}

#[derive(Debug, Clone)]
pub struct IssuedInterleaving {
    pub token: String,
    pub duel_id: String,
    pub experiment_id: i64,
    pub method: &'static str,
    pub documents: Vec<ShownDocument>,
    /// The position of `documents[0]` in the whole interleaving (0 for the first page).
    pub offset: usize,
    pub expires_at_ms: i64,
}

/// The duel's generator for one use (`stream`): seeded by the duel, so interleaving the same
/// duel's lists again (a retried request) shows the same list, and crediting the same clicks again
/// records the same outcome (a duplicate, not a conflict).
fn duel_rng(claims: &DuelClaims, stream: u64) -> BanditRng {
    let (hi, lo) = claims.nonce.split_at(8);
    let hi = u64::from_le_bytes(hi.try_into().expect("8 bytes"));
    let lo = u64::from_le_bytes(lo.try_into().expect("8 bytes"));
    BanditRng::seed_from_u64(hi ^ lo.rotate_left(17) ^ stream)
}

/// Streams of [`duel_rng`]: one shows the list, the other draws a spread outcome, so the draw is
/// independent of how the list was built.
const INTERLEAVE_STREAM: u64 = 0;
const OUTCOME_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

fn check_list(ranker: &str, list: &[String]) -> Result<(), EngineError> {
    if list.len() > MAX_LIST_LEN {
        return Err(EngineError::invalid(
            ErrorCode::InvalidList,
            format!(
                "the list of `{ranker}` has {} documents; at most {MAX_LIST_LEN} are accepted",
                list.len()
            ),
        ));
    }
    if let Some(bad) = list
        .iter()
        .find(|d| d.is_empty() || d.len() > MAX_DOC_ID_LEN)
    {
        return Err(EngineError::invalid(
            ErrorCode::InvalidList,
            format!(
                "document ids must be 1 to {MAX_DOC_ID_LEN} bytes; `{ranker}` lists one of {} bytes",
                bad.len()
            ),
        ));
    }
    Ok(())
}

impl Engine {
    /// The experiment an interleaving token was issued for, if the token is genuine and the
    /// experiment live: what decides whether clicks may come without a key. Checks only the
    /// signature; [`Engine::record_clicks`] checks the rest.
    pub async fn click_experiment(
        &self,
        token: &str,
    ) -> Result<Option<Arc<Snapshot>>, EngineError> {
        let Some(claims) = self.signer.verify_interleaving(token) else {
            return Ok(None);
        };
        match self.snapshot(claims.duel.experiment_id).await {
            Ok(snap) => Ok(Some(snap)),
            Err(EngineError::UnknownExperiment(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Interleaves the duel's lists with the experiment's method.
    pub async fn interleave_duel(
        &self,
        input: InterleaveInput,
    ) -> Result<IssuedInterleaving, EngineError> {
        let duel = self
            .signer
            .verify(&input.duel_token)
            .ok_or(EngineError::InvalidToken)?;
        let snap = self.duel_snapshot(&duel).await?;
        let names: Vec<&str> = duel
            .ranker_indices()
            .iter()
            .map(|&r| snap.names[r as usize].as_str())
            .collect();
        let mut distinct = names.clone();
        distinct.dedup();
        if input.lists.len() != distinct.len()
            || names.iter().any(|n| !input.lists.contains_key(*n))
        {
            let mut got: Vec<&str> = input.lists.keys().map(String::as_str).collect();
            got.sort_unstable();
            return Err(EngineError::invalid(
                ErrorCode::ListsMismatch,
                format!(
                    "`lists` must hold exactly this duel's rankers ({}), got [{}]",
                    distinct.join(", "),
                    got.join(", ")
                ),
            ));
        }
        for (ranker, list) in &input.lists {
            check_list(ranker, list)?;
        }
        // A ranker alone (a self-duel, or a one-ranker query) is interleaved with itself, which
        // shows its own list: every method shows one list merged with itself as that list.
        // The interleaving is built over the posted ids as `&str`: the methods copy documents
        // (deduplicated lists, the shown list), and a `&str` is copied without an allocation.
        let ids: Vec<Vec<&str>> = names
            .iter()
            .map(|n| input.lists[*n].iter().map(String::as_str).collect())
            .collect();
        let mut lists: Vec<&[&str]> = ids.iter().map(Vec::as_slice).collect();
        if lists.len() == 1 {
            lists.push(lists[0]);
        }
        let config = &snap.interleaving;
        let offset = input.offset(config.max_length)?;
        if offset > 0 && !config.method.info().pages {
            return Err(EngineError::invalid(
                ErrorCode::PagingUnsupported,
                format!(
                    "{} draws each list whole for its length, so a later page would not continue \
                     the first: show a longer first page (interleaving.max_length) instead",
                    config.method.name()
                ),
            ));
        }
        // A later page is the same interleaving (the duel's generator) built longer: the
        // methods that page build their lists front to back, so the first pages are the same.
        // The token carries the whole list from the top, so clicks of every page shown so far
        // are credited together.
        let interleaving = interleave(
            &config.method,
            &lists,
            offset + config.max_length,
            &mut duel_rng(&duel, INTERLEAVE_STREAM),
        )
        .map_err(|e| EngineError::invalid(ErrorCode::InvalidList, e.to_string()))?;
        let documents = shown_documents(&interleaving, &names, offset);
        metrics::counter!("joust_interleavings_total").increment(1);
        Ok(IssuedInterleaving {
            token: self.signer.seal_interleaving(&duel, &interleaving),
            duel_id: duel.duel_id(),
            experiment_id: duel.experiment_id,
            method: config.method.name(),
            documents,
            offset,
            expires_at_ms: duel.expires_at_ms,
        })
    }

    /// Credits the clicks on an interleaving and records the duel's outcome (a multi-ranker
    /// query's result for every pair, in one write); answers once it is durable. Exactly once
    /// per duel, like any outcome: a retry with the same result is a duplicate, a different
    /// result for the same duel is a conflict.
    pub async fn record_clicks(&self, input: ClicksInput) -> Result<ClickRecord, EngineError> {
        let result = self.credit_clicks(&input).await;
        let (claims, mut positions, snap) = result.inspect_err(count_rejection)?;
        // The clicks as posted (as positions of the shown list), and the method that built it.
        let posting = Posting {
            method: Some(claims.interleaving.method_name()),
            ..posted(PostedAs::Clicks, &positions)
        };
        // A `click` metric credited by the first event counts the first click posted only.
        if snap.metrics.click().credit == Credit::First {
            positions.truncate(1);
        }
        let InterleavingClaims { duel, interleaving } = &claims;
        let indices = duel.ranker_indices();
        // Probabilistic methods' judgements are spread over win, loss and tie: recording the
        // likelier side would not keep their fairness (which holds on average), so each pair's
        // result is drawn from its judgement instead, and averages to it.
        let mut rng = duel_rng(duel, OUTCOME_STREAM);
        let (pending, answer) = match &duel.rankers {
            DuelRankers::Pair { first, second } => {
                let soft = interleaving.soft_outcome(&positions);
                let winner = match soft.sample(&mut rng) {
                    Outcome::A => Some(*first as usize),
                    Outcome::B => Some(*second as usize),
                    Outcome::Tie => None,
                };
                let (pending, name) = pending(duel, &snap, winner, posting);
                (pending, Answer::Winner(name))
            }
            DuelRankers::Set(set) => {
                let preferences = interleaving.preferences(&positions).sample(&mut rng);
                let arms = set.iter().map(|&r| r as usize).collect();
                pending_set(
                    duel,
                    &snap,
                    SetResult::from_preferences(arms, &preferences),
                    posting,
                )
            }
        };
        let credit_values = interleaving.ranker_credit(&positions);
        let mut credit = BTreeMap::new();
        // A ranker interleaved with itself holds both lists' credit.
        let owners = indices
            .iter()
            .chain(indices.first())
            .take(credit_values.len());
        for (&arm, value) in owners.zip(credit_values) {
            *credit
                .entry(snap.names[arm as usize].clone())
                .or_insert(0.0) += value;
        }
        let written = self.write(vec![pending.clone()]).await?;
        let outcome = self.finish(
            &pending,
            answer,
            written.into_iter().next().expect("one result per outcome"),
        )?;
        metrics::counter!("joust_clicks_credited_total").increment(1);
        Ok(ClickRecord {
            outcome,
            method: interleaving.method_name(),
            credit,
        })
    }

    /// Verifies the token and resolves the clicks to positions of the shown list.
    async fn credit_clicks(
        &self,
        input: &ClicksInput,
    ) -> Result<(InterleavingClaims, Vec<usize>, Arc<Snapshot>), EngineError> {
        let claims = self
            .signer
            .verify_interleaving(&input.interleaving_token)
            .ok_or(EngineError::InvalidToken)?;
        let snap = self.duel_snapshot(&claims.duel).await?;
        let shown = claims.interleaving.shown();
        let positions = match (&input.clicks, &input.click_positions) {
            (Some(docs), None) => {
                check_click_count(docs.len())?;
                docs.iter()
                    .map(|d| {
                        shown.iter().position(|s| s == d).ok_or_else(|| {
                            EngineError::invalid(
                                ErrorCode::ClickNotShown,
                                format!("document `{d}` was not shown in this interleaving"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?
            }
            (None, Some(positions)) => {
                check_click_count(positions.len())?;
                claims
                    .interleaving
                    .check_clicks(positions)
                    .map_err(|e| EngineError::invalid(ErrorCode::ClickNotShown, e))?;
                positions.clone()
            }
            _ => {
                return Err(EngineError::invalid(
                    ErrorCode::InvalidClicks,
                    "give exactly one of `clicks` (document ids) and `click_positions` \
                     (0-based positions in the shown list); an empty list means no clicks",
                ));
            }
        };
        Ok((claims, positions, snap))
    }
}

fn check_click_count(n: usize) -> Result<(), EngineError> {
    if n > MAX_CLICKS {
        return Err(EngineError::invalid(
            ErrorCode::InvalidClicks,
            format!("at most {MAX_CLICKS} clicks are accepted, got {n}"),
        ));
    }
    Ok(())
}

/// The shown list with the team of each document where the method drafts teams (Team-Draft and
/// Team-Draft Multileave); the other methods credit clicks by rank, so no position belongs to one
/// ranker. `names` are the duel's rankers in token order (a lone ranker was interleaved with
/// itself and owns both teams). From position `offset` of the shown list (a later page).
fn shown_documents(
    interleaving: &Interleaving<&str>,
    names: &[&str],
    offset: usize,
) -> Vec<ShownDocument> {
    let name = |r: usize| names.get(r).unwrap_or(&names[0]).to_string();
    let team = |i: usize| match interleaving {
        Interleaving::TeamDraft(t) => match t.teams[i] {
            Team::A => Some(name(0)),
            Team::B => Some(name(1)),
            Team::Nobody => None,
        },
        Interleaving::TeamDraftMultileave(t) => t.teams.get(i).copied().map(name),
        _ => None,
    };
    interleaving
        .shown()
        .iter()
        .enumerate()
        .skip(offset)
        .map(|(i, d)| ShownDocument {
            id: (*d).to_owned(),
            ranker: team(i),
        })
        .collect()
}

//! Creating and changing experiments. Every change runs in a transaction that locks the state
//! row, then bumps the version so that every replica reloads.

use rand::{Rng, SeedableRng};
use std::collections::HashSet;

use crate::bandit::{BanditRng, BanditState, DecisionSettings, PolicySpec, multi_ranker_policies};
use crate::store::{self, experiments};

use crate::api::{CreateExperiment, ErrorCode, PatchExperiment, Status, in_json_words};
use crate::engine::apply::after_patch;
use crate::engine::model::{PersistedPolicy, Snapshot, TIE, tie_rule_str};
use crate::engine::runtime::{Reach, check_memory_budget, offload};
use crate::engine::settings::{InterleavingConfig, Metrics};
use crate::engine::{Engine, EngineError};
use std::sync::Arc;

pub const MAX_RANKERS: usize = 10_000;
/// Longest experiment or ranker name, in characters (as JSON Schema's `maxLength` counts).
pub const MAX_NAME_LEN: usize = 200;
/// Seeds are stored as a Postgres BIGINT, so the documented range is 0..=2^63-1; larger ones are
/// refused rather than coming back changed.
pub const MAX_SEED: u64 = i64::MAX as u64;
/// Most rankers one query may compare: a multileaved list of 64 rankers already yields 2,016
/// pairwise preferences per query.
pub const MAX_RANKERS_PER_QUERY: usize = 64;
/// One hour: long enough for a user's session of clicks to come back.
pub const DEFAULT_ATTRIBUTION_WINDOW_SECS: i64 = 3600;
/// Thirty days.
pub const MAX_ATTRIBUTION_WINDOW_SECS: i64 = 30 * 24 * 3600;

fn check_name(what: &str, name: &str) -> Result<(), EngineError> {
    if name.trim().is_empty()
        || name.chars().count() > MAX_NAME_LEN
        || name.chars().any(char::is_control)
    {
        return Err(EngineError::invalid(
            ErrorCode::InvalidName,
            format!(
                "{what} must be 1 to {MAX_NAME_LEN} characters, not all blank, without control characters, got {name:?}"
            ),
        ));
    }
    if let Some(c) = name.chars().find(|&c| is_invisible_format(c)) {
        return Err(EngineError::invalid(
            ErrorCode::InvalidName,
            format!(
                "{what} may not hold bidirectional, zero-width or other invisible formatting characters (they make one name look like another), got U+{:04X} in {name:?}",
                c as u32
            ),
        ));
    }
    Ok(())
}

/// Characters that change how a name is displayed without being seen: the bidirectional
/// controls (which reorder text: `abc\u{202E}fed` shows as `abcdef`), the zero-width spaces,
/// joiners and invisible operators (which make two different names look alike), the soft
/// hyphen, the byte-order mark and the invisible tag characters: Unicode's format characters
/// (category Cf) that show as nothing. Refusing the joiners (U+200C, U+200D) also refuses emoji
/// sequences and the spellings of a few scripts that use them: a name that is plain to read is
/// worth more than those.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// A ranker name: a name that is not the outcome format's word for a tie, so that a win by every
/// ranker can be posted.
fn check_ranker_name(name: &str) -> Result<(), EngineError> {
    check_name("a ranker name", name)?;
    if name == TIE {
        return Err(EngineError::invalid(
            ErrorCode::ReservedName,
            format!("`{TIE}` is reserved: an outcome with winner `{TIE}` records a tie"),
        ));
    }
    Ok(())
}

/// A concluded experiment is final: its rankers are what its champion was chosen among.
fn refuse_if_concluded(snap: &Snapshot) -> Result<(), EngineError> {
    if snap.status == Status::Concluded {
        return Err(EngineError::conflict(
            ErrorCode::ExperimentConcluded,
            "a concluded experiment's rankers cannot change; create a new experiment",
        ));
    }
    Ok(())
}

impl Engine {
    /// Live experiments with id greater than `after`, of the projects the request reaches.
    pub async fn list(&self, after: i64, limit: i64) -> Result<Vec<Arc<Snapshot>>, EngineError> {
        self.require_db()?;
        let rows = self.observe(
            experiments::list(&self.pool, after, limit, Reach::current().project())
                .await
                .map_err(EngineError::from),
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            match self.snapshot(row.id).await {
                Ok(s) => out.push(s),
                // Deleted between the two reads.
                Err(EngineError::UnknownExperiment(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Duels issued for an experiment: flushed counts of every replica plus this one's unflushed.
    pub async fn duels_issued(&self, id: i64) -> Result<i64, EngineError> {
        self.require_db()?;
        let _reading = self.duel_count_flush.read().await;
        let flushed = self.observe(self.flushed_duels(id).await)?;
        Ok(flushed + self.cache.unflushed_duels(id) as i64)
    }

    async fn flushed_duels(&self, id: i64) -> Result<i64, EngineError> {
        let mut conn = self.pool.acquire().await.map_err(store::StoreError::from)?;
        Ok(store::state::duels_issued(&mut conn, id).await?)
    }

    pub async fn create_experiment(
        &self,
        req: CreateExperiment,
    ) -> Result<std::sync::Arc<Snapshot>, EngineError> {
        check_name("name", &req.name)?;
        let project_id = self.project_for(req.project.as_deref()).await?;
        let k = req.rankers.len();
        if !(2..=MAX_RANKERS).contains(&k) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidRankers,
                format!("an experiment needs 2 to {MAX_RANKERS} rankers, got {k}"),
            ));
        }
        let policy = PolicySpec::recorded(req.policy, req.rankers_per_query.unwrap_or(2));
        // Before anything is built: a state over budget could take gigabytes to build.
        check_memory_budget(&policy, k, self.memory_budget())?;
        let mut seen = HashSet::new();
        for r in &req.rankers {
            check_ranker_name(r)?;
            if !seen.insert(r.as_str()) {
                return Err(EngineError::invalid(
                    ErrorCode::DuplicateRanker,
                    format!("ranker `{r}` is listed twice"),
                ));
            }
        }
        let window = req
            .attribution_window_secs
            .unwrap_or(DEFAULT_ATTRIBUTION_WINDOW_SECS);
        if !(1..=MAX_ATTRIBUTION_WINDOW_SECS).contains(&window) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidAttributionWindow,
                format!(
                    "attribution_window_secs must be in 1..={MAX_ATTRIBUTION_WINDOW_SECS}, got {window}"
                ),
            ));
        }
        let rankers_per_query = req.rankers_per_query.unwrap_or(2);
        if !(2..=MAX_RANKERS_PER_QUERY).contains(&rankers_per_query) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidRankersPerQuery,
                format!(
                    "rankers_per_query must be in 2..={MAX_RANKERS_PER_QUERY}, got {rankers_per_query}"
                ),
            ));
        }
        let interleaving = match &req.interleaving {
            Some(spec) => InterleavingConfig::from_spec(spec)?,
            None => InterleavingConfig::default_for(rankers_per_query),
        };
        interleaving.check_rankers(rankers_per_query)?;
        if let Some(seed) = req.seed.filter(|&s| s > MAX_SEED) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidSeed,
                format!("seed must be in 0..={MAX_SEED}, got {seed}"),
            ));
        }
        if let Some(browser) = &req.browser_clicks {
            browser.validate()?;
        }
        let decision = req
            .decision
            .clone()
            .unwrap_or_default()
            .apply_to(DecisionSettings::default())?;
        if let Some(rule) = &req.stop_rule {
            rule.validate()?;
        }
        if let Some(hook) = &req.webhook {
            hook.validate(&self.options.webhook_egress)?;
            hook.check_resolved(&self.options.webhook_egress).await?;
        }
        let (metrics, primary_metric) = Metrics::from_request(
            req.metrics.as_deref(),
            req.primary_metric.as_deref(),
            rankers_per_query,
        )?
        .to_stored();
        if let Some(units) = &req.units {
            units.validate()?;
        }
        let segments = req.segments.unwrap_or_default();
        segments.validate()?;
        let seed = req.seed.unwrap_or_else(|| rand::rng().random::<u64>() >> 1);
        let tie_rule = req.tie_rule.unwrap_or_default();
        let mut rng = BanditRng::seed_from_u64(seed);
        let mut state = BanditState::new(&policy, k, tie_rule, &mut rng).map_err(|e| {
            EngineError::invalid(ErrorCode::InvalidPolicy, in_json_words(&e.to_string()))
        })?;
        state.set_decision_settings(decision);
        if rankers_per_query > state.max_rankers_per_query() {
            return Err(EngineError::invalid(
                ErrorCode::InvalidRankersPerQuery,
                format!(
                    "policy `{}` compares at most {} rankers per query, and rankers_per_query is \
                     {rankers_per_query}; multi-ranker policies: {}",
                    policy.name,
                    state.max_rankers_per_query(),
                    multi_ranker_policies().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let id = experiments::insert(
            &self.pool,
            experiments::NewExperiment {
                project_id,
                name: &req.name,
                rankers: &req.rankers,
                policy: serde_json::to_value(&policy).expect("spec serialises"),
                tie_rule: tie_rule_str(tie_rule),
                interleaving: interleaving.to_json(),
                rankers_per_query: rankers_per_query as i32,
                attribution_window_secs: window,
                seed: seed as i64,
                policy_state: PersistedPolicy::to_json(&state),
                browser_click_origins: req.browser_clicks.as_ref().map(|b| &b.origins[..]),
                decision: serde_json::to_value(decision).expect("settings serialise"),
                stop_rule: req
                    .stop_rule
                    .map(|r| serde_json::to_value(r).expect("a stop rule serialises")),
                webhook: req
                    .webhook
                    .as_ref()
                    .map(|w| (w.url.as_str(), w.secret.as_str())),
                metrics,
                primary_metric,
                units: req
                    .units
                    .map(|u| serde_json::to_value(u).expect("unit settings serialise")),
                max_segments: segments.max_segments,
            },
        )
        .await?;
        self.reload(id).await
    }

    /// Changes any of an experiment's status, browser-click origins, decision settings, stop rule
    /// and webhook, in one transaction: everything is checked before anything is written, and a
    /// refusal changes nothing.
    pub async fn patch_experiment(
        &self,
        id: i64,
        patch: PatchExperiment,
    ) -> Result<std::sync::Arc<Snapshot>, EngineError> {
        if patch.is_empty() {
            return Err(EngineError::invalid(
                ErrorCode::InvalidBody,
                "give at least one of `status`, `browser_clicks`, `decision`, `stop_rule` and `webhook`",
            ));
        }
        if let Some(Some(browser)) = &patch.browser_clicks {
            browser.validate()?;
        }
        if let Some(Some(rule)) = &patch.stop_rule {
            rule.validate()?;
        }
        if let Some(Some(hook)) = &patch.webhook {
            hook.validate(&self.options.webhook_egress)?;
            hook.check_resolved(&self.options.webhook_egress).await?;
        }
        let mut tx = self.pool.begin().await.map_err(store::StoreError::from)?;
        experiments::lock_state(&mut tx, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        let stored = store::state::load(&mut tx, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        let k = stored.rankers.len();
        let mut snap = offload(k, move || Snapshot::from_stored(stored)).await?;
        let was = snap.status;
        if let Some(status) = patch.status {
            if was == Status::Concluded && status != Status::Concluded {
                return Err(EngineError::conflict(
                    ErrorCode::ExperimentConcluded,
                    "a concluded experiment cannot be resumed; create a new experiment",
                ));
            }
            experiments::set_status(&mut tx, id, status.as_str()).await?;
            snap.status = status;
        }
        if let Some(browser) = &patch.browser_clicks {
            let origins = browser.as_ref().map(|b| &b.origins[..]);
            experiments::set_browser_click_origins(&mut tx, id, origins).await?;
        }
        let mut policy_state = None;
        if let Some(input) = &patch.decision {
            let settings = input.apply_to(snap.decision_settings)?;
            if was == Status::Concluded && settings != snap.decision_settings {
                return Err(EngineError::conflict(
                    ErrorCode::ExperimentConcluded,
                    "a concluded experiment's decision settings cannot change: its decision is final",
                ));
            }
            let value = serde_json::to_value(settings).expect("settings serialise");
            experiments::set_decision(&mut tx, id, &value).await?;
            snap.state.set_decision_settings(settings);
            snap.decision_settings = settings;
            policy_state = Some(PersistedPolicy::to_json(&snap.state));
        }
        if let Some(rule) = &patch.stop_rule {
            let value = rule.map(|r| serde_json::to_value(r).expect("a stop rule serialises"));
            experiments::set_stop_rule(&mut tx, id, value.as_ref()).await?;
            snap.stop_rule = *rule;
        }
        if let Some(hook) = &patch.webhook {
            let target = hook.as_ref().map(|w| (w.url.as_str(), w.secret.as_str()));
            experiments::set_webhook(&mut tx, id, target).await?;
            snap.webhook_url = hook.as_ref().map(|w| w.url.clone());
        }
        after_patch(&mut tx, was, &mut snap).await?;
        experiments::bump_version(&mut tx, id, policy_state.as_ref()).await?;
        tx.commit().await.map_err(store::StoreError::from)?;
        self.reload(id).await
    }

    pub async fn delete_experiment(&self, id: i64) -> Result<(), EngineError> {
        let mut tx = self.pool.begin().await.map_err(store::StoreError::from)?;
        experiments::lock_state(&mut tx, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        experiments::mark_deleted(&mut tx, id).await?;
        store::history::delete(&mut tx, id).await?;
        let version = experiments::bump_version(&mut tx, id, None).await?;
        tx.commit().await.map_err(store::StoreError::from)?;
        self.cache.remove(id);
        self.origins.forget(id, version);
        Ok(())
    }

    /// Adds a ranker; it starts with no comparisons.
    pub async fn add_ranker(
        &self,
        id: i64,
        name: &str,
    ) -> Result<std::sync::Arc<Snapshot>, EngineError> {
        check_ranker_name(name)?;
        let budget = self.memory_budget();
        self.change_state(id, |snap| {
            refuse_if_concluded(snap)?;
            if snap.by_name.contains_key(name) {
                return Err(EngineError::conflict(
                    ErrorCode::DuplicateRanker,
                    format!("ranker `{name}` already exists in this experiment (names of retired rankers are not reused)"),
                ));
            }
            if snap.names.len() >= MAX_RANKERS {
                return Err(EngineError::conflict(ErrorCode::TooManyRankers, format!("an experiment holds at most {MAX_RANKERS} rankers")));
            }
            check_memory_budget(&snap.policy, snap.names.len() + 1, budget)?;
            let idx = snap.state.add_arm();
            Ok(Some((idx as i32, name.to_string())))
        })
        .await
    }

    /// Retires a ranker: it is never selected again; its index and name are never reused.
    pub async fn retire_ranker(
        &self,
        id: i64,
        name: &str,
    ) -> Result<std::sync::Arc<Snapshot>, EngineError> {
        self.change_state(id, |snap| {
            refuse_if_concluded(snap)?;
            let arm = snap.arm(name)?;
            snap.state.retire_arm(arm).map_err(|e| match e {
                crate::bandit::StateError::RetiredArm(_) => EngineError::conflict(
                    ErrorCode::RankerRetired,
                    format!("ranker `{name}` is already retired"),
                ),
                // The bandit counts arms; the API calls them rankers.
                crate::bandit::StateError::TooFewArms(least) => EngineError::conflict(
                    ErrorCode::TooFewRankers,
                    format!("an experiment needs at least {least} active rankers"),
                ),
                // The ranker was found by name, so it exists: anything else is a bug.
                other => EngineError::internal(other),
            })?;
            Ok(None)
        })
        .await
    }

    /// Loads the current state inside a locked transaction, lets `change` modify it, and writes
    /// it back. `change` may return a new ranker to insert; a retirement is detected from the
    /// active flags.
    async fn change_state(
        &self,
        id: i64,
        change: impl FnOnce(&mut Snapshot) -> Result<Option<(i32, String)>, EngineError>,
    ) -> Result<std::sync::Arc<Snapshot>, EngineError> {
        let mut tx = self.pool.begin().await.map_err(store::StoreError::from)?;
        experiments::lock_state(&mut tx, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        let stored = store::state::load(&mut tx, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        let mut snap = Snapshot::from_stored(stored)?;
        let before: Vec<bool> = snap.state.active.clone();
        let added = change(&mut snap)?;
        if let Some((idx, name)) = added {
            experiments::insert_ranker(&mut tx, id, idx, &name).await?;
        }
        for (idx, (was, is)) in before.iter().zip(&snap.state.active).enumerate() {
            if *was && !*is {
                experiments::retire_ranker(&mut tx, id, idx as i32).await?;
            }
        }
        let policy_state = PersistedPolicy::to_json(&snap.state);
        experiments::bump_version(&mut tx, id, Some(&policy_state)).await?;
        tx.commit().await.map_err(store::StoreError::from)?;
        self.reload(id).await
    }
}

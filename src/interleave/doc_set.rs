//! A set of documents tuned for result lists: a linear scan while small (the common case, ten
//! documents, where hashing costs more than it saves), a hash set once it grows.

use super::Doc;
use std::collections::HashSet;

/// Above this many documents, membership switches from a scan to hashing.
const SCAN_LIMIT: usize = 32;

pub(crate) struct DocSet<'a, D> {
    small: Vec<&'a D>,
    large: Option<HashSet<&'a D>>,
}

impl<'a, D: Doc> DocSet<'a, D> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        DocSet {
            small: Vec::with_capacity(n.min(SCAN_LIMIT)),
            large: None,
        }
    }

    pub(crate) fn contains(&self, d: &D) -> bool {
        match &self.large {
            Some(set) => set.contains(d),
            None => self.small.contains(&d),
        }
    }

    /// Adds `d`; true when it was not there before.
    pub(crate) fn insert(&mut self, d: &'a D) -> bool {
        if let Some(set) = &mut self.large {
            return set.insert(d);
        }
        if self.small.contains(&d) {
            return false;
        }
        self.small.push(d);
        if self.small.len() > SCAN_LIMIT {
            self.large = Some(self.small.drain(..).collect());
        }
        true
    }
}

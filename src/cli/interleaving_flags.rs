//! `--method` and `--tau`, shared by `joust simulate --letor` and `joust prefmatrix`: names,
//! defaults and the accepted range of `tau` come from the interleaving registry.

use crate::interleave::{METHODS, Method, method_names};

/// `--method NAME`, with the method's default options.
pub fn parse_method(s: &str) -> Result<Method, String> {
    Method::from_name(s).ok_or_else(|| {
        let known: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
        format!("unknown method '{s}'; known: {}", known.join(", "))
    })
}

/// Help of a `--method` flag: `lead`, then every method, pairwise ones first; with
/// `rankers_note`, which methods take two rankers per query and which any number.
pub fn method_flag_help(lead: &str, rankers_note: bool) -> String {
    let (pairwise, multi) = (method_names(false), method_names(true));
    if rankers_note {
        format!(
            "{lead}: {} (two rankers per query), {} (any number; see --rankers-per-query)",
            pairwise.join(", "),
            multi.join(", ")
        )
    } else {
        format!("{lead}: {}, {}", pairwise.join(", "), multi.join(", "))
    }
}

/// The method with `--tau` applied (to the methods that have an exponent; the others ignore
/// it), refused when the registry does not accept the value.
pub fn with_tau(method: &Method, tau: Option<f64>) -> anyhow::Result<Method> {
    let method = match tau {
        Some(tau) => method.clone().with_tau(tau),
        None => method.clone(),
    };
    method
        .validate()
        .map_err(|e| anyhow::anyhow!("--tau: {e}"))?;
    Ok(method)
}

//! `joust keygen`: a new random API key.

/// Prints a key of 256 random bits, as stored keys are made: a key for
/// `serve --api-keys scope:KEY`.
pub fn run() -> anyhow::Result<()> {
    println!("{}", crate::engine::new_key());
    Ok(())
}

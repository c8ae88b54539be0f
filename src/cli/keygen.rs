//! `joust keygen`: a new random API key.

use rand::Rng;

/// Prints 24 random bytes as hex: a key for `serve --api-keys scope:KEY`.
pub fn run() -> anyhow::Result<()> {
    let bytes: [u8; 24] = rand::rng().random();
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    println!("{key}");
    Ok(())
}

//! The `joust` binary: the command line lives in the library (`joust::cli`).

fn main() -> anyhow::Result<()> {
    joust::cli::main()
}

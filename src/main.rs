//! The `joust` binary: the command line lives in the library (`joust::cli`).

fn main() -> std::process::ExitCode {
    joust::cli::main()
}

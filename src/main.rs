//! The `joust` binary: the command line lives in the library (`joust::cli`).

// Every request allocates and frees many small buffers (bodies, JSON values, tokens, log fields)
// across the tokio workers; mimalloc's per-thread free lists cost less than glibc malloc's arenas
// there (docs/dependencies.md, docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    joust::cli::main()
}

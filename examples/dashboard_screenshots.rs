//! Screenshots of the dashboard and the experiment page's render time and transfer size, from a
//! running joust (e.g. fed by `scripts/feed-mslr`):
//!
//!     cargo run --release --example dashboard_screenshots -- http://127.0.0.1:8080 EXPERIMENT_ID [RUNS]
//!
//! Writes docs/dashboard-list.png, docs/dashboard-experiment.png (the top of the page) and
//! docs/dashboard-experiment-matrix.png (the heatmap and charts), and prints, per run, the
//! milliseconds from navigation to the first complete render in headless Chromium. Stops if either
//! page logs an error to the browser console.

#[path = "../tests/helpers/browser.rs"]
#[allow(dead_code)]
mod browser;

use browser::Browser;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = args.get(1).expect("base URL");
    let id = args.get(2).expect("experiment id");
    let runs: usize = args.get(3).map_or(5, |r| r.parse().unwrap());
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");

    let b = Browser::start(1400, 900).await;
    b.goto(&format!("{base}/ui/")).await;
    b.wait_for("body[data-loaded]").await;
    assert_eq!(
        b.console_errors().await,
        Vec::<String>::new(),
        "list page console"
    );
    std::fs::write(
        format!("{docs}/dashboard-list.png"),
        b.client.screenshot().await.unwrap(),
    )
    .unwrap();
    b.close().await;

    let mut times = Vec::new();
    for run in 0..runs {
        // A fresh browser each run: nothing cached.
        let b = Browser::start(1400, 3000).await;
        b.goto(&format!("{base}/ui/experiments/{id}")).await;
        b.wait_for("body[data-loaded]").await;
        assert_eq!(
            b.console_errors().await,
            Vec::<String>::new(),
            "experiment page console"
        );
        let ms = b.js("return Number(document.body.dataset.renderMs)").await;
        let bytes = b
            .js("return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
                 .reduce((s, e) => s + e.transferSize, 0)")
            .await;
        let cells = b
            .js("return document.querySelectorAll('#heatmap td').length")
            .await;
        println!(
            "run {run}: rendered in {ms} ms, {bytes} bytes transferred, {cells} heatmap cells"
        );
        times.push(ms.as_f64().unwrap());
        if run == 0 {
            std::fs::write(
                format!("{docs}/dashboard-experiment.png"),
                b.client.screenshot().await.unwrap(),
            )
            .unwrap();
            // Further down: the heatmap and the history charts.
            b.js("document.getElementById('heatmap').scrollIntoView(); return 0")
                .await;
            std::fs::write(
                format!("{docs}/dashboard-experiment-matrix.png"),
                b.client.screenshot().await.unwrap(),
            )
            .unwrap();
        }
        b.close().await;
    }
    times.sort_by(f64::total_cmp);
    println!(
        "render time over {runs} runs: median {} ms, range {}-{} ms",
        times[runs / 2],
        times[0],
        times[runs - 1]
    );
}

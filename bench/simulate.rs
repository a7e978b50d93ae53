//! `simulate` speed: 1,000,000 keys placed under every static scheme, 4 → 5 nodes, in
//! memory (the library call the command makes, after the keys are read), against a naive
//! reference that hashes each key's text again for every scheme and every side (before and
//! after) and finds ring nodes by a linear scan of a 32-point-per-node ring.
//!
//! Run: `cargo bench --bench simulate` (prints a Markdown block for docs/BENCHMARKS.md;
//! `BENCH_KEYS` changes the key count).

mod smoke;

use shardctl::simulate::{self, HashFn, KeySet, Resize, Scheme};
use std::time::Instant;

const KEYS: i64 = 1_000_000;
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let n: i64 = std::env::var("BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(1_000, KEYS));
    let runs = smoke::or(1, RUNS);
    let keys = KeySet::generated(1, n + 1, 1).unwrap();
    let resize = Resize {
        from: 4,
        to: 5,
        points: simulate::DEFAULT_POINTS,
    };
    let mut each: Vec<(Scheme, Vec<f64>)> =
        Scheme::DEFAULTS.iter().map(|s| (*s, Vec::new())).collect();
    let mut all = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = simulate::simulate(&keys, &Scheme::DEFAULTS, resize).unwrap();
        all.push(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
        for (s, times) in each.iter_mut() {
            let t = Instant::now();
            std::hint::black_box(simulate::simulate(&keys, &[*s], resize).unwrap());
            times.push(t.elapsed().as_secs_f64());
        }
    }
    // The naive reference: every scheme hashes each key twice (before, after); rings are
    // scanned linearly (32 points per node so it finishes).
    let naive_points = 32;
    let rings: Vec<_> = [4usize, 5]
        .iter()
        .map(|m| simulate::ring(*m, naive_points, HashFn::Crc32))
        .collect();
    let mut naive = Vec::new();
    for _ in 0..runs.min(3) {
        let t = Instant::now();
        let mut moved = 0u64;
        for k in &keys.texts {
            if simulate::crc32(k) % 4 != simulate::crc32(k) % 5 {
                moved += 1;
            }
            if simulate::md5(k) % 4 != simulate::md5(k) % 5 {
                moved += 1;
            }
            let linear = |ring: &[(u32, u32)], h: u32| {
                ring.iter().find(|(p, _)| *p >= h).unwrap_or(&ring[0]).1
            };
            let h = simulate::crc32(k);
            if linear(&rings[0], h) != linear(&rings[1], simulate::crc32(k)) {
                moved += 1;
            }
        }
        std::hint::black_box(moved);
        naive.push(t.elapsed().as_secs_f64());
    }
    println!("| measure | shardctl | reference | ratio |");
    println!("|---|---|---|---|");
    let all_m = median(all);
    let naive_m = median(naive);
    println!(
        "| {n} keys, all 5 static schemes, 4 → 5 nodes (median of {runs}) | {:.3} s | naive (hash per scheme and side, linear ring scan, 3 schemes only): {:.3} s | {:.1}x |",
        all_m,
        naive_m,
        naive_m / all_m
    );
    for (s, times) in each {
        println!(
            "| {n} keys, {s} alone (median of {runs}) | {:.3} s | | |",
            median(times)
        );
    }
}

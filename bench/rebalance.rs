//! The rebalance planner on synthetic skewed fleets (Zipf-like shard sizes, unequal node
//! capacities, shards placed unevenly), from 100 shards on 5 nodes to 100,000 shards on
//! 1,000 nodes, side by side with the greedy baseline (repeatedly move the largest shard
//! that helps from the most to the least utilised node).
//!
//! Run: `cargo bench --bench rebalance`.

mod smoke;

use shardctl::rebalance::planner::{greedy_baseline, plan, Limits, NodeIn, ShardIn};
use std::time::Instant;

/// A small deterministic generator (xorshift), so every run plans the same fleets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn fleet(shards: usize, nodes: usize, seed: u64) -> (Vec<NodeIn>, Vec<ShardIn>) {
    let mut rng = Rng(seed);
    let nodes_v: Vec<NodeIn> = (0..nodes)
        .map(|i| NodeIn {
            name: format!("n{i:04}"),
            capacity: [1.0, 1.0, 2.0, 4.0][i % 4],
            drain: false,
        })
        .collect();
    // Zipf-like sizes: rank r gets ~ 1/r^0.8, shuffled over the id space.
    let shards_v: Vec<ShardIn> = (0..shards)
        .map(|k| {
            let rank = 1 + (rng.next() % shards as u64);
            let size = (1_000_000_000.0 / (rank as f64).powf(0.8)) as u64 + 1_000_000;
            // Placement skewed towards the first nodes.
            let node = ((rng.unit().powi(2)) * nodes as f64) as usize;
            ShardIn {
                id: k as u32,
                node: format!("n{:04}", node.min(nodes - 1)),
                size,
                excluded: false,
            }
        })
        .collect();
    (nodes_v, shards_v)
}

fn main() {
    println!("| shards / nodes | planner time | planner peak/avg | planner moved / lower bound | planner moves | greedy time | greedy peak/avg | greedy moved / lower bound | greedy moves |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let fleets: &[(usize, usize)] = smoke::or(
        &[(100, 5)],
        &[(100, 5), (1_000, 20), (10_000, 100), (100_000, 1_000)],
    );
    for &(shards, nodes) in fleets {
        let (n, s) = fleet(shards, nodes, 0x5eed + shards as u64);
        let limits = Limits {
            threshold: 0.05,
            max_moves: None,
        };
        let t = Instant::now();
        let p = plan(&n, &s, &limits).unwrap();
        let pt = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let g = greedy_baseline(&n, &s, shards);
        let gt = t.elapsed().as_secs_f64();
        let lb = p.moved_lower_bound.max(1) as f64;
        println!(
            "| {shards} / {nodes} | {pt:.3} s | {:.3} (bound {:.3}) | {:.2} | {} | {gt:.3} s | {:.3} | {:.2} | {} |",
            p.peak_after / p.average,
            p.peak_lower_bound / p.average,
            p.moved as f64 / lb,
            p.moves.len(),
            g.peak_after / g.average,
            g.moved as f64 / lb,
            g.moves.len()
        );
    }
}

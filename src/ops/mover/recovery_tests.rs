//! Recovery's decisions on the fake fleet ([`FakeFleet`]): for every kind of operation and
//! every step boundary a crash can stop it at, the fleet and the journal are set as the
//! steps done so far left them, and `resume`'s reconciliation and `abort`'s rollback run
//! against them exactly as they run live. Each test states the rule it checks; the rules
//! are those of docs/SAFETY.md: before the flip, whatever stood only under a fence that is
//! gone is done again and an abort leaves the shard whole on its source; from the flip on,
//! only forward, and nothing is lowered while the servers cannot be read.

use super::{MoveState, Mover, OperationPlan, Planned};
use crate::config::Inventory;
use crate::copy::SchemaPair;
use crate::directory::journal::{Effect, EffectState, OpState, StepState};
use crate::directory::phase::Phase;
use crate::directory::{Fence, Key, Shard, ShardState, SplitMapping, SplitPlan};
use crate::error::Error;
use crate::ident::Ident;
use crate::ops::effects::{Change, ChannelState, FakeFleet};
use crate::ops::fence::Fenced;
use crate::playbook::{Playbook, Step};
use crate::server::statements::{hidden_table_name, SwitchMode};

const OP: u64 = 42;
const SHARD: u32 = 7;
const NEW_SHARD: u32 = 8;
const SOURCE: &str = "a";
const OTHER: &str = "b";
/// When the source's server started, as the fence journaled it.
const BOOT: i64 = 1_700_000_000;

fn inventory() -> Inventory {
    Inventory::parse(
        std::path::Path::new("inv.yaml"),
        "directory:\n  node: a\nnodes:\n  a:\n    port: 3307\n    user: u\n    password: p\n  b:\n    port: 3308\n    user: u\n    password: p\n",
    )
    .expect("a two-node inventory")
}

fn ident(name: &str) -> Ident {
    Ident::new("schema", name).expect("a plain name")
}

/// The kinds of operation recovery tells apart.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A move to another node under the shard fence.
    Move,
    /// A move to another node under the read-only fence.
    ReadOnlyMove,
    /// A split onto another node.
    Split,
    /// A split onto the shard's own node (its copy made under the fence).
    LocalSplit,
    /// A move to another node under the switch fence.
    SwitchMove,
    /// A split onto another node under the switch fence.
    SwitchSplit,
}

const KINDS: [Kind; 6] = [
    Kind::Move,
    Kind::ReadOnlyMove,
    Kind::Split,
    Kind::LocalSplit,
    Kind::SwitchMove,
    Kind::SwitchSplit,
];

/// The switch this operation's switched guards read (the fake's directory id is 0x5eed).
fn switch_id() -> u64 {
    crate::directory::names::NameScope::of_directory(0x5eed).switch_id(OP)
}

impl Kind {
    fn target(self) -> &'static str {
        match self {
            Kind::LocalSplit => SOURCE,
            _ => OTHER,
        }
    }

    fn is_split(self) -> bool {
        matches!(self, Kind::Split | Kind::LocalSplit | Kind::SwitchSplit)
    }

    fn fence(self) -> Fence {
        match self {
            Kind::ReadOnlyMove => Fence::ReadOnly,
            Kind::SwitchMove | Kind::SwitchSplit => Fence::Switch,
            _ => Fence::Shard,
        }
    }

    fn playbook(self) -> Playbook {
        let mut pb = if self.is_split() {
            Playbook::default_split()
        } else {
            Playbook::default_move()
        };
        for s in &mut pb.steps {
            if let Step::Lock(l) = s {
                l.fence = self.fence();
            }
        }
        pb
    }

    fn pair(self) -> SchemaPair {
        SchemaPair {
            from: ident("shop_7"),
            to: ident(if self.is_split() { "shop_8" } else { "shop_7" }),
        }
    }

    fn plan(self) -> OperationPlan {
        if self.is_split() {
            OperationPlan::Split(SplitPlan {
                old_shard: SHARD,
                new_shard: NEW_SHARD,
                mapping: SplitMapping::LowerBound { key: Key::Int(500) },
            })
        } else {
            OperationPlan::Move
        }
    }
}

fn fenced_tables() -> Vec<Fenced> {
    ["customers", "orders"]
        .iter()
        .enumerate()
        .map(|(i, t)| Fenced {
            schema: ident("shop_7"),
            table: Ident::new("table", t).expect("a plain name"),
            hidden: hidden_table_name(OP, i),
        })
        .collect()
}

/// A mover of `kind` on a fake fleet that a crash stopped after its first `done` steps,
/// the fleet and the journal as those steps left them.
fn crashed_after(inv: &Inventory, kind: Kind, done: usize) -> Mover<'_, FakeFleet> {
    let playbook = kind.playbook();
    let target = kind.target();
    let pair = kind.pair();
    let mut fx = FakeFleet::new(OP, playbook.steps.len());
    fx.started_at.insert(SOURCE.into(), BOOT);
    fx.model.apply(Change::Schemas(
        SOURCE.into(),
        vec![pair.from.to_string()],
        true,
    ));
    fx.tables.insert(
        (SOURCE.into(), pair.from.to_string()),
        vec!["customers".into(), "orders".into()],
    );
    fx.locations
        .insert(SHARD, (SOURCE.into(), ShardState::Moving));
    if kind.is_split() {
        fx.locations
            .insert(NEW_SHARD, (target.into(), ShardState::Offline));
    }
    let plan = kind.plan();
    let shard = Shard {
        id: SHARD,
        func_id: 1,
        node: SOURCE.into(),
        host: "127.0.0.1".into(),
        port: 3307,
        state: ShardState::Moving,
        availability: crate::directory::Availability::Available,
        version: 1,
    };
    let params = plan.params(playbook.journaled());
    let planned = Planned {
        plan,
        shard,
        target: target.into(),
        pairs: vec![pair.clone()],
        playbook: playbook.clone(),
        params,
    };
    let channel = crate::directory::names::NameScope::of_directory(0x5eed).channel(OP);
    let mut state = MoveState::default();
    let mut phase = Phase::Planned;
    let local = kind == Kind::LocalSplit;
    for (i, step) in playbook.steps.iter().take(done).enumerate() {
        let i = i as u32;
        match step {
            Step::Backup(_) => {
                fx.model.apply(Change::Schemas(
                    target.into(),
                    vec![pair.to.to_string()],
                    true,
                ));
                fx.journal_effect(
                    i,
                    Effect::Copy,
                    target,
                    EffectState::Done,
                    serde_json::Value::Null,
                );
                state.target_created = true;
            }
            Step::ChangeMaster(_) if !local => {
                fx.model.apply(Change::Channel(
                    target.into(),
                    channel.to_string(),
                    ChannelState::Stopped,
                ));
                let detail = serde_json::Value::Null;
                fx.journal_effect(i, Effect::PointChannel, target, EffectState::Done, detail);
            }
            Step::StartReplication(_) if local => {
                // On one node the change stream keeps the copy current: its checkpoint.
                let id = format!("shardctl_{:08x}_op{OP}", 0x5eed);
                fx.stream_checkpoints.insert((target.into(), id));
                let detail = serde_json::Value::Null;
                fx.journal_effect(i, Effect::StartStream, target, EffectState::Done, detail);
            }
            Step::Wait(w) if w.until.is_some() && local => {
                let detail = serde_json::Value::Null;
                fx.journal_effect(i, Effect::CreateTriggers, target, EffectState::Done, detail);
            }
            Step::StartReplication(_) if !local => {
                fx.model.apply(Change::Channel(
                    target.into(),
                    channel.to_string(),
                    ChannelState::Running,
                ));
            }
            Step::Wait(w) if w.until.is_some() && !local => {
                fx.model.apply(Change::Channel(
                    target.into(),
                    channel.to_string(),
                    ChannelState::Stopped,
                ));
            }
            Step::Lock(l) => {
                match l.fence {
                    Fence::Shard => {
                        fx.model
                            .apply(Change::Hidden(SOURCE.into(), fenced_tables(), true));
                        state.fenced_tables = fenced_tables();
                        let detail = serde_json::json!({ "fenced_tables": fenced_tables() });
                        fx.journal_effect(i, Effect::RaiseFence, SOURCE, EffectState::Done, detail);
                    }
                    Fence::ReadOnly => {
                        fx.model.apply(Change::ReadOnly(SOURCE.into(), true));
                        fx.read_only_holds.insert(SOURCE.into(), false);
                        state.fenced_server_started_at = Some(BOOT);
                        let detail = serde_json::json!({ "read_only": true });
                        fx.journal_effect(i, Effect::RaiseFence, SOURCE, EffectState::Done, detail);
                    }
                    Fence::Switch => {
                        let guarded = vec![
                            ("shop_7".to_string(), "customers".to_string()),
                            ("shop_7".to_string(), "orders".to_string()),
                        ];
                        fx.model
                            .apply(Change::SwitchGuards(SOURCE.into(), guarded, true));
                        fx.model.apply(Change::Switch(
                            SOURCE.into(),
                            switch_id(),
                            Some(SwitchMode::All),
                        ));
                        let detail = serde_json::json!({ "switch": switch_id() });
                        fx.journal_effect(
                            i,
                            Effect::ArmSwitch,
                            SOURCE,
                            EffectState::Done,
                            detail.clone(),
                        );
                        fx.journal_effect(i, Effect::RaiseFence, SOURCE, EffectState::Done, detail);
                    }
                }
                state.fence = Some(l.fence);
                fx.locations
                    .insert(SHARD, (SOURCE.into(), ShardState::ReadOnly));
            }
            Step::Confirm(_) => state.verified = true,
            Step::Guard(_) if kind.fence() == Fence::Switch => {
                // The switch says `keys`: the given-away keys refused, the fence over.
                fx.model.apply(Change::Switch(
                    SOURCE.into(),
                    switch_id(),
                    Some(SwitchMode::Keys),
                ));
                state.fence = None;
                fx.locations
                    .insert(SHARD, (SOURCE.into(), ShardState::Online));
            }
            Step::Flip(_) => {
                if kind.is_split() {
                    fx.locations
                        .insert(NEW_SHARD, (target.into(), ShardState::Online));
                } else {
                    fx.locations
                        .insert(SHARD, (target.into(), ShardState::ReadOnly));
                }
                state.flipped = true;
            }
            Step::DropSource(_) => {
                // The old copy leaves the clients' reach, its hidden tables with it.
                fx.model.apply(Change::Schemas(
                    SOURCE.into(),
                    vec![pair.from.to_string()],
                    false,
                ));
                fx.model
                    .apply(Change::Hidden(SOURCE.into(), fenced_tables(), false));
                state.source_dropped = true;
            }
            Step::Unlock(_) => {
                if kind.fence() == Fence::Switch {
                    // Settled: literal guards on a split's old shard, the switch gone.
                    fx.model
                        .apply(Change::Switch(SOURCE.into(), switch_id(), None));
                }
                fx.model
                    .apply(Change::Hidden(SOURCE.into(), fenced_tables(), false));
                if fx.read_only_holds.remove(SOURCE).is_some() {
                    fx.model.apply(Change::ReadOnly(SOURCE.into(), false));
                }
                state.fence = None;
                let node = if kind.is_split() { SOURCE } else { target };
                fx.locations
                    .insert(SHARD, (node.into(), ShardState::Online));
            }
            Step::ResetReplication(_) if local => {
                let id = format!("shardctl_{:08x}_op{OP}", 0x5eed);
                fx.stream_checkpoints.remove(&(target.to_string(), id));
            }
            Step::ResetReplication(_) if !local => {
                fx.model.apply(Change::Channel(
                    target.into(),
                    channel.to_string(),
                    ChannelState::Absent,
                ));
            }
            _ => {}
        }
        fx.steps[i as usize] = StepState::Done;
        if let Some(t) = super::phases::reached_by(step) {
            phase = phase
                .advance(t)
                .expect("the playbook's order is the phase machine's");
        }
    }
    let done_flags = (0..playbook.steps.len()).map(|i| i < done).collect();
    let mut m = Mover::construct(inv, fx, planned, state, done_flags, &super::no_events);
    m.phase = phase;
    m
}

/// Every step boundary a crash can stop `kind` at: after its preflight, up to before its
/// last step.
fn boundaries(kind: Kind) -> std::ops::Range<usize> {
    1..kind.playbook().steps.len()
}

fn flip_index(kind: Kind) -> usize {
    kind.playbook()
        .steps
        .iter()
        .position(|s| matches!(s, Step::Flip(_)))
        .expect("every playbook flips")
}

fn step_index(kind: Kind, pred: impl Fn(&Step) -> bool) -> usize {
    kind.playbook()
        .steps
        .iter()
        .position(pred)
        .expect("the step is in the playbook")
}

fn shows_fence(m: &Mover<'_, FakeFleet>) -> bool {
    let fx = &m.fx;
    !fx.model
        .hidden(SOURCE, &fenced_tables())
        .unwrap_or_default()
        .is_empty()
        || fx.read_only_holds.contains_key(SOURCE)
        || fx.model.switch(SOURCE, switch_id()) == Some(Some(SwitchMode::All))
}

#[test]
fn the_fake_fleet_reaches_every_phase_of_every_kind() {
    let inv = inventory();
    for kind in KINDS {
        let reached: std::collections::BTreeSet<Phase> = boundaries(kind)
            .map(|done| crashed_after(&inv, kind, done).phase)
            .collect();
        let mut expected = vec![
            Phase::Planned,
            Phase::Copied,
            Phase::Replicating,
            Phase::Verified,
            Phase::Fenced,
            Phase::Confirmed,
            Phase::Flipped,
        ];
        if !kind.is_split() {
            expected.push(Phase::SourceDropped);
        }
        expected.push(Phase::Unfenced);
        assert_eq!(
            reached.into_iter().collect::<Vec<_>>(),
            expected,
            "{kind:?}"
        );
    }
}

#[test]
fn resume_after_the_flip_only_goes_forward() {
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        for done in boundaries(kind).filter(|d| *d > flip) {
            let mut m = crashed_after(&inv, kind, done);
            let placed = m.fx.locations.clone();
            m.reconcile()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            assert!(m.state.flipped, "{kind:?} after {done}");
            assert!(m.state.verified, "{kind:?} after {done}");
            assert!(m.done[..done].iter().all(|d| *d), "{kind:?} after {done}");
            assert!(m.done[done..].iter().all(|d| !d), "{kind:?} after {done}");
            assert!(
                m.fx.sent.is_empty(),
                "{kind:?} after {done}: {:?}",
                m.fx.sent
            );
            assert_eq!(m.fx.locations, placed, "{kind:?} after {done}");
            assert!(m.phase >= Phase::Flipped, "{kind:?} after {done}");
        }
    }
}

#[test]
fn a_flip_whose_step_was_not_journaled_is_found_in_the_directory_and_kept() {
    // The crash fell between the flip's commit and its step row: the journal says the
    // confirm step was the last one done, the directory says flipped.
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        let mut m = crashed_after(&inv, kind, flip);
        let to = kind.target().to_string();
        if kind.is_split() {
            m.fx.locations.insert(NEW_SHARD, (to, ShardState::Online));
        } else {
            m.fx.locations.insert(SHARD, (to, ShardState::ReadOnly));
        }
        m.reconcile().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert!(m.state.flipped, "{kind:?}");
        assert!(m.done[..flip].iter().all(|d| *d), "{kind:?}");
        assert!(
            !m.done[flip],
            "{kind:?}: the flip step runs again (it flips nothing twice)"
        );
        assert!(m.fx.sent.is_empty(), "{kind:?}: {:?}", m.fx.sent);
        assert!(
            shows_fence(&m),
            "{kind:?}: the fence stays until the old copy is gone"
        );

        let mut a = crashed_after(&inv, kind, flip);
        a.fx.locations = m.fx.locations.clone();
        let refused = a.roll_back().expect_err("no rollback after a flip");
        assert!(matches!(refused, Error::Refused(_)), "{kind:?}: {refused}");
        assert!(a.fx.sent.is_empty(), "{kind:?}: {:?}", a.fx.sent);
        assert!(shows_fence(&a), "{kind:?}");
    }
}

#[test]
fn a_flip_that_committed_after_its_fence_was_forgotten_goes_forward() {
    // Recovery lifted the fence and marked the fenced steps pending while a flip was in
    // flight, and the flip committed after all: the journal shows steps up to the lock
    // pending, the directory shows the flip. Only forward: every step before the flip
    // counts as done.
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
        let mut m = crashed_after(&inv, kind, flip);
        for d in m.done.iter_mut().skip(lock) {
            *d = false;
        }
        let to = kind.target().to_string();
        if kind.is_split() {
            m.fx.locations.insert(NEW_SHARD, (to, ShardState::Online));
        } else {
            m.fx.locations.insert(SHARD, (to, ShardState::ReadOnly));
        }
        m.reconcile().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert!(m.done[..flip].iter().all(|d| *d), "{kind:?}: {:?}", m.done);
        assert!(m.state.verified, "{kind:?}");
        assert!(m.fx.sent.is_empty(), "{kind:?}: {:?}", m.fx.sent);
    }
}

#[test]
fn resume_before_the_flip_keeps_what_still_stands() {
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
        for done in boundaries(kind).filter(|d| *d <= flip) {
            let mut m = crashed_after(&inv, kind, done);
            let phase = m.phase;
            m.reconcile()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            let fenced = done > lock;
            assert_eq!(m.phase, phase, "{kind:?} after {done}: nothing to do again");
            assert!(m.done[..done].iter().all(|d| *d), "{kind:?} after {done}");
            assert!(
                m.fx.sent.is_empty(),
                "{kind:?} after {done}: {:?}",
                m.fx.sent
            );
            assert_eq!(m.state.fence.is_some(), fenced, "{kind:?} after {done}");
            assert_eq!(shows_fence(&m), fenced, "{kind:?} after {done}");
            let expected = if fenced {
                ShardState::ReadOnly
            } else {
                ShardState::Moving
            };
            assert_eq!(
                m.fx.locations.get(&SHARD),
                Some(&(SOURCE.to_string(), expected)),
                "{kind:?} after {done}"
            );
        }
    }
}

#[test]
fn a_fence_gone_while_nobody_ran_sends_the_operation_back_to_catch_up() {
    // Everything established under the fence (the final position, the confirmation) held
    // only while it stood: without it, the channel catches up and the fence goes up again.
    let inv = inventory();
    for kind in [Kind::Move, Kind::Split, Kind::SwitchMove, Kind::SwitchSplit] {
        let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
        let start = step_index(kind, |s| matches!(s, Step::StartReplication(_)));
        for done in (lock + 1)..=flip_index(kind) {
            let mut m = crashed_after(&inv, kind, done);
            m.fx.model
                .apply(Change::Hidden(SOURCE.into(), fenced_tables(), false));
            // Someone switched the guards off (or an earlier rollback began).
            m.fx.model.apply(Change::Switch(
                SOURCE.into(),
                switch_id(),
                Some(SwitchMode::Off),
            ));
            m.reconcile()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            assert!(m.done[..start].iter().all(|d| *d), "{kind:?} after {done}");
            assert!(m.done[start..].iter().all(|d| !d), "{kind:?} after {done}");
            assert_eq!(m.phase, Phase::Copied, "{kind:?} after {done}");
            assert_eq!(
                m.fx.steps[start],
                StepState::Pending,
                "{kind:?} after {done}"
            );
            assert!(!m.state.verified, "{kind:?} after {done}");
            assert!(m.state.final_position.is_none(), "{kind:?} after {done}");
            assert_eq!(
                m.fx.locations.get(&SHARD),
                Some(&(SOURCE.to_string(), ShardState::Moving)),
                "{kind:?} after {done}"
            );
        }
    }
}

#[test]
fn a_read_only_fence_lost_to_a_restart_is_left_and_the_server_not_made_writable() {
    let inv = inventory();
    let kind = Kind::ReadOnlyMove;
    let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
    for done in (lock + 1)..=flip_index(kind) {
        // The server restarted since the fence went up, and came back writable, or
        // read-only by its own configuration: either way the fence the operation raised
        // is gone, and the server's setting is its own.
        for read_only_on_its_own in [false, true] {
            let mut m = crashed_after(&inv, kind, done);
            m.fx.started_at.insert(SOURCE.into(), BOOT + 600);
            m.fx.model
                .apply(Change::ReadOnly(SOURCE.into(), read_only_on_its_own));
            m.reconcile()
                .unwrap_or_else(|e| panic!("after {done}: {e}"));
            let what = format!("after {done}, read-only on its own: {read_only_on_its_own}");
            assert!(m.state.fence.is_none(), "{what}");
            assert!(!m.fx.read_only_holds.contains_key(SOURCE), "{what}");
            assert!(m.fx.sent.is_empty(), "{what}: {:?}", m.fx.sent);
            assert_eq!(
                m.fx.model.read_only(SOURCE),
                Some(read_only_on_its_own),
                "{what}"
            );
            assert!(!m.done[lock], "{what}: the fence goes up again");
        }

        // The same boot, still read-only: the fence stands and nothing is done again.
        let mut m = crashed_after(&inv, kind, done);
        m.reconcile()
            .unwrap_or_else(|e| panic!("after {done}: {e}"));
        assert_eq!(m.state.fence, Some(Fence::ReadOnly), "after {done}");
        assert!(m.done[..done].iter().all(|d| *d), "after {done}");
        assert!(m.fx.sent.is_empty(), "after {done}: {:?}", m.fx.sent);
    }
}

#[test]
fn a_copy_that_cannot_be_trusted_is_made_again() {
    let inv = inventory();
    for kind in [Kind::Move, Kind::ReadOnlyMove, Kind::Split] {
        let backup = step_index(kind, |s| matches!(s, Step::Backup(_)));
        let point = step_index(kind, |s| matches!(s, Step::ChangeMaster(_)));
        let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
        for done in (backup + 1)..=lock {
            // The target's schema dropped behind the operation's back.
            let mut m = crashed_after(&inv, kind, done);
            let to = kind.pair().to.to_string();
            m.fx.model
                .apply(Change::Schemas(kind.target().into(), vec![to], false));
            m.reconcile()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            assert!(m.done[backup..].iter().all(|d| !d), "{kind:?} after {done}");
            assert_eq!(m.phase, Phase::Planned, "{kind:?} after {done}");
            if done <= point {
                continue;
            }
            // The channel removed behind its back: the copy is not kept current.
            let mut m = crashed_after(&inv, kind, done);
            let channel = m.channel.to_string();
            m.fx.model.apply(Change::Channel(
                kind.target().into(),
                channel,
                ChannelState::Absent,
            ));
            m.reconcile()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            assert!(m.done[backup..].iter().all(|d| !d), "{kind:?} after {done}");
            assert_eq!(m.phase, Phase::Planned, "{kind:?} after {done}");
        }
    }
}

#[test]
fn a_journaled_identity_refusal_stops_resume_before_the_flip_only() {
    let inv = inventory();
    for kind in [Kind::Move, Kind::Split] {
        let flip = flip_index(kind);
        for done in boundaries(kind) {
            let mut m = crashed_after(&inv, kind, done);
            m.state.identity_refusal =
                Some("the source a is not the server the copy was made with".into());
            let result = m.reconcile();
            if done > flip {
                result.unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
                assert!(m.state.flipped, "{kind:?} after {done}");
            } else {
                let e = result.expect_err("refused until abort");
                assert!(matches!(e, Error::Refused(_)), "{kind:?} after {done}: {e}");
                assert!(
                    m.fx.sent.is_empty(),
                    "{kind:?} after {done}: {:?}",
                    m.fx.sent
                );
            }
        }
    }
}

#[test]
fn abort_before_the_flip_leaves_the_shard_whole_on_its_source() {
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        for done in boundaries(kind).filter(|d| *d <= flip) {
            let mut m = crashed_after(&inv, kind, done);
            let journaled = m.fx.effects.len();
            m.roll_back()
                .unwrap_or_else(|e| panic!("{kind:?} after {done}: {e}"));
            let fx = &m.fx;
            let what = format!("{kind:?} after {done}: {:?}", fx.effects_after(journaled));
            assert!(!shows_fence(&m), "{what}");
            assert!(!fx.model.read_only(SOURCE).unwrap_or(false), "{what}");
            assert_eq!(fx.model.schema(SOURCE, "shop_7"), Some(true), "{what}");
            let copy = kind.pair().to.to_string();
            assert_ne!(
                fx.model.schema(kind.target(), &copy),
                Some(true),
                "{what}: the copy is dropped"
            );
            let channel = m.channel.to_string();
            assert_ne!(
                fx.model.channel(kind.target(), &channel),
                Some(ChannelState::Running),
                "{what}"
            );
            assert_ne!(
                fx.model.channel(kind.target(), &channel),
                Some(ChannelState::Stopped),
                "{what}: the channel is removed"
            );
            assert_eq!(
                fx.locations.get(&SHARD),
                Some(&(SOURCE.to_string(), ShardState::Online)),
                "{what}"
            );
            if kind.is_split() {
                assert!(!fx.locations.contains_key(&NEW_SHARD), "{what}");
            }
            // No switch is left behind, nor a guard that would read it.
            assert!(
                matches!(fx.model.switch(SOURCE, switch_id()), None | Some(None)),
                "{what}"
            );
            for table in ["customers", "orders"] {
                assert_ne!(
                    fx.model.switch_guarded(SOURCE, "shop_7", table),
                    Some(true),
                    "{what}"
                );
            }
            assert_eq!(
                fx.released.as_ref().map(|r| (r.state, r.phase)),
                Some((OpState::Aborted, Phase::RolledBack)),
                "{what}"
            );
            // Every effect recovery took is journaled before and after.
            assert!(
                fx.effects_after(journaled)
                    .iter()
                    .all(|(_, s)| *s == EffectState::Done),
                "{what}"
            );
        }
    }
}

#[test]
fn abort_after_the_flip_is_refused_and_changes_nothing() {
    let inv = inventory();
    for kind in KINDS {
        let flip = flip_index(kind);
        for done in boundaries(kind).filter(|d| *d > flip) {
            let mut m = crashed_after(&inv, kind, done);
            let before = m.fx.clone();
            let e = m.roll_back().expect_err("only forward after the flip");
            assert!(matches!(e, Error::Refused(_)), "{kind:?} after {done}: {e}");
            assert!(m.fx.sent.is_empty(), "{kind:?} after {done}");
            assert_eq!(m.fx.locations, before.locations, "{kind:?} after {done}");
            assert_eq!(
                m.fx.effects.len(),
                before.effects.len(),
                "{kind:?} after {done}"
            );
            assert!(m.fx.released.is_none(), "{kind:?} after {done}");
        }
    }
}

#[test]
fn nothing_is_lowered_while_the_source_cannot_be_read() {
    let inv = inventory();
    for kind in [
        Kind::Move,
        Kind::ReadOnlyMove,
        Kind::Split,
        Kind::SwitchMove,
        Kind::SwitchSplit,
    ] {
        let lock = step_index(kind, |s| matches!(s, Step::Lock(_)));
        for done in (lock + 1)..=flip_index(kind) {
            let mut m = crashed_after(&inv, kind, done);
            m.fx.unreachable.insert(SOURCE.into());
            let e = m
                .reconcile()
                .expect_err("the source is read before anything is decided");
            assert!(
                matches!(e, Error::Server { .. }),
                "{kind:?} after {done}: {e}"
            );
            assert!(shows_fence(&m), "{kind:?} after {done}");
            assert!(m.fx.sent.is_empty(), "{kind:?} after {done}");

            let mut a = crashed_after(&inv, kind, done);
            a.fx.unreachable.insert(SOURCE.into());
            let e = a.roll_back().expect_err("nothing rolled back unseen");
            assert!(
                matches!(e, Error::Server { .. }),
                "{kind:?} after {done}: {e}"
            );
            assert!(shows_fence(&a), "{kind:?} after {done}");
            assert!(a.fx.released.is_none(), "{kind:?} after {done}");
        }
    }
}

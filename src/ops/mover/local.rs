//! A split onto the shard's own node and a merge on one node. A server cannot replicate
//! from itself, so the change stream ([`crate::stream`]) keeps such a copy current, as it
//! does a key move's: the copy is made outside the fence like a move's, the fence only
//! waits for the stream to reach the final position, and the pause stays flat in the
//! shard's size.
//!
//! The stream applies the rows the source's triggers wrote (they are in its binary log):
//! a trigger on the target would write them a second time. So a split's copy is made
//! without its triggers, which are created under the fence once the stream stopped there,
//! and a merge takes a survivor without triggers of its own on the sharded tables.

use super::{Effect, Mover};
use crate::copy;
use crate::error::{Error, Result};
use crate::ops::effects::Effects;
use crate::playbook::Step;
use crate::server::statements;

impl<E: Effects> Mover<'_, E> {
    /// Before anything changes, for a whole-shard operation the stream keeps current: the
    /// source's binary log is one the stream can read, a copy of whole schemas is native
    /// (it leaves the triggers out), and a merge's survivor has no trigger of its own on a
    /// sharded table.
    pub(super) fn stream_preflight(&mut self) -> Result<()> {
        let source = self.source.clone();
        crate::stream::check_source(self.fx.reader(&source)?)?;
        self.replication_account_reaches_source()?;
        let not_native = self.playbook.steps.iter().find_map(|s| match s {
            Step::Backup(b) if b.method != crate::copy::Method::Native => Some(b.method),
            _ => None,
        });
        // Every table the stream carries needs a row key to find the rows it updates and
        // deletes: refused here, before the copy, rather than when the stream starts.
        for t in self.table_pairs()? {
            let reader = self.fx.reader(&source)?;
            let columns =
                crate::stream::table::read_columns(reader, &t.source_schema, &t.source_table)?;
            let key = crate::stream::table::read_row_key(
                reader,
                &t.source_schema,
                &t.source_table,
                &columns,
            )?;
            if key.is_empty() {
                return Err(Error::Refused(format!(
                    "table {}.{} has no primary key nor a unique key over NOT NULL columns: the change stream that keeps this copy current finds the rows it updates and deletes by such a key (give it one, or move it via a channel to another node)",
                    t.source_schema, t.target_table
                )));
            }
        }
        if let Some(method) = not_native {
            return Err(Error::Refused(format!(
                "a copy kept current by the change stream (on the shard's own node, or via: stream) is made natively, without its triggers; the backup step's method {} cannot: use method: native",
                serde_json::to_value(method)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )));
        }
        if !self.plan.is_merge() {
            return Ok(());
        }
        let target = self.target.clone();
        for (schema, table, _) in self.retired_keys()? {
            if let Some(name) = self.own_trigger_on(&target, &schema, &table)? {
                return Err(Error::Refused(format!(
                    "{schema}.{table} on {target} has trigger {name}: the change stream that merges on one node or via: stream would apply the rows the retired shard's triggers wrote and then fire it again; merge via a channel onto a survivor on another node (a channel fires no trigger)"
                )));
            }
        }
        Ok(())
    }

    /// A trigger of the application's own (not one of shardctl's guards) on `schema.table`
    /// on `node`, if there is one: the stream's writes into that table would fire it.
    pub(super) fn own_trigger_on(
        &mut self,
        node: &str,
        schema: &crate::ident::Ident,
        table: &crate::ident::Ident,
    ) -> Result<Option<crate::ident::Ident>> {
        let triggers = self.fx.reader(node)?.triggers_in_order(schema)?;
        let definitions =
            crate::server::definitions::read_definitions(self.fx.reader(node)?, schema)?;
        Ok(triggers.into_iter().find(|name| {
            !statements::is_shardctl_trigger(name.as_str())
                && definitions.objects.iter().any(|o| {
                    o.name == name.as_str()
                        && o.fields.get("table").map(String::as_str) == Some(table.as_str())
                })
        }))
    }

    /// The source schemas' triggers, in firing order, retargeted to the new schemas: what a
    /// split onto its own node creates once its stream stopped, as (new schema, definition).
    pub(super) fn source_triggers(&mut self) -> Result<Vec<(String, copy::objects::ObjectDef)>> {
        let source = self.source.clone();
        let mut out = Vec::new();
        for p in self.pairs.clone() {
            let objects = copy::objects::read(self.fx.reader(&source)?, &p)?;
            out.extend(
                objects
                    .after_data
                    .into_iter()
                    .filter(|o| o.trigger)
                    .map(|o| (p.to.to_string(), o)),
            );
        }
        Ok(out)
    }

    /// The triggers' creation began since the last copy: the stream reached the final
    /// position under the fence that still stands (a fence lifted since means a new copy),
    /// and it must not run into the new schemas again.
    pub(super) fn triggers_begun(&mut self) -> Result<bool> {
        let Some(created) = self.fx.last_effect(Effect::CreateTriggers)? else {
            return Ok(false);
        };
        let copied = self.fx.last_effect(Effect::Copy)?;
        Ok(copied.is_none_or(|c| c.seq < created.seq))
    }

    /// Under the fence, once the stream stopped at the final position: the triggers the
    /// copy left out, in firing order, each in its creation context. Any trigger an earlier
    /// attempt created in the new schemas goes first (nothing writes there yet). The number
    /// created.
    pub(super) fn create_deferred_triggers(&mut self) -> Result<usize> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let deferred = self.state.local_ddl.clone();
        let count = deferred.len();
        self.effect(
            Effect::CreateTriggers,
            &target,
            serde_json::json!({"triggers": count}),
            |m| {
                for p in m.pairs.clone() {
                    let stale = m.fx.reader(&target)?.triggers_in_order(&p.to)?;
                    let drops: Vec<_> = stale
                        .iter()
                        .map(|t| statements::drop_trigger_if_exists(&p.to, t))
                        .collect();
                    m.fx.run(&target, &drops)?;
                    let objects = copy::objects::SchemaObjects {
                        charset: m.fx.reader(&source)?.schema_charset(&p.from)?,
                        after_data: deferred
                            .iter()
                            .filter(|(s, _)| s == p.to.as_str())
                            .map(|(_, d)| d.clone())
                            .collect(),
                        ..Default::default()
                    };
                    m.fx.create_objects(&target, &p, &objects)?;
                }
                Ok(())
            },
        )?;
        Ok(count)
    }
}

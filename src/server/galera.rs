//! Galera cluster members: what a member says of itself, read with statements a member
//! answers even outside the Primary component (`SHOW`), and the server errors that mean
//! "this member cannot take the statement now; another may".

use super::{Server, Stmt};
use crate::error::{Error, Result};
use std::fmt;

/// `wsrep_cluster_status`: whether the member belongs to the component that holds
/// quorum. Only a Primary component commits anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterStatus {
    /// In the component holding quorum.
    Primary,
    /// Cut off from quorum (a minority partition, or the survivor of a majority loss):
    /// it refuses reads and writes (error 1047).
    NonPrimary,
    /// Not connected to any cluster (provider not loaded, or wsrep off).
    Disconnected,
}

impl ClusterStatus {
    fn parse(text: &str) -> ClusterStatus {
        match text {
            "Primary" => ClusterStatus::Primary,
            "non-Primary" => ClusterStatus::NonPrimary,
            _ => ClusterStatus::Disconnected,
        }
    }
}

impl fmt::Display for ClusterStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClusterStatus::Primary => "Primary",
            ClusterStatus::NonPrimary => "non-Primary",
            ClusterStatus::Disconnected => "disconnected",
        })
    }
}

/// `wsrep_local_state`: where the member stands in its component's state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalState {
    /// Receiving a state transfer (1): its data is not the cluster's yet.
    Joining,
    /// Sending a state transfer, or desynchronised by an operator (2): it may lag the
    /// cluster by any amount.
    Donor,
    /// Caught up with the transfer, applying what it missed (3).
    Joined,
    /// In step with the cluster (4): the only state shardctl writes or reads through.
    Synced,
    /// Any other value (0: not initialised yet).
    Other,
}

impl LocalState {
    fn parse(number: &str) -> LocalState {
        match number.trim() {
            "1" => LocalState::Joining,
            "2" => LocalState::Donor,
            "3" => LocalState::Joined,
            "4" => LocalState::Synced,
            _ => LocalState::Other,
        }
    }
}

/// What a member reports of itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MemberState {
    /// `wsrep_on`: the server replicates through a cluster at all.
    pub wsrep_on: bool,
    /// `wsrep_cluster_name`.
    pub cluster_name: String,
    /// `wsrep_cluster_state_uuid`: the same on every member of one cluster's history; a
    /// member bootstrapped on its own has another.
    pub cluster_uuid: String,
    /// Whether it is in the Primary component.
    pub status: ClusterStatus,
    /// Its local state.
    pub local: LocalState,
    /// `wsrep_local_state_comment` as the member words it (`Synced`, `Donor/Desynced`,
    /// `Joining: receiving State Transfer`, ...).
    pub comment: String,
    /// `wsrep_ready`: it takes queries.
    pub ready: bool,
    /// `wsrep_cluster_size`: members in its component.
    pub cluster_size: u32,
}

impl MemberState {
    /// Why this member must not be used by a directory connection (a write, a flip, or a
    /// read that decides), or None when it may: wsrep on, in the Primary component,
    /// Synced and ready.
    pub fn unusable(&self) -> Option<String> {
        if !self.wsrep_on {
            return Some("wsrep is off: it is a server of its own, not a cluster member".into());
        }
        if self.status != ClusterStatus::Primary {
            return Some(format!("{} (not in the Primary component)", self.status));
        }
        if self.local != LocalState::Synced {
            return Some(format!("{} (not Synced)", self.comment));
        }
        if !self.ready {
            return Some("wsrep_ready is OFF".into());
        }
        None
    }

    /// One short description: `Synced, Primary, 3 members`.
    pub fn describe(&self) -> String {
        if !self.wsrep_on {
            return "wsrep off".into();
        }
        format!(
            "{}, {}, {} member{}",
            self.comment,
            self.status,
            self.cluster_size,
            if self.cluster_size == 1 { "" } else { "s" }
        )
    }
}

/// The member's wsrep status variables (answered outside the Primary component too).
pub fn status_variables() -> Stmt {
    Stmt::text(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_local_state', 'wsrep_local_state_comment', 'wsrep_ready', 'wsrep_cluster_state_uuid', 'wsrep_cluster_size')",
    )
}

/// The member's wsrep settings.
pub fn settings_variables() -> Stmt {
    Stmt::text("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_cluster_name')")
}

/// Every read and write of this session first waits until the member has applied what
/// the cluster committed before it (`wsrep_sync_wait` 7: reads, UPDATE and DELETE,
/// INSERT and REPLACE), so it decides on the latest journal whichever member it runs on.
pub fn sync_session() -> Stmt {
    Stmt::text("SET SESSION wsrep_sync_wait = 7")
}

/// `sql` as one read that waits until the member has applied what the cluster committed
/// before it, whatever the session's setting.
pub fn synced_read(sql: &str) -> String {
    format!("SET STATEMENT wsrep_sync_wait = 1 FOR {sql}")
}

/// "WSREP has not yet prepared node for application use" (ER_UNKNOWN_COM_ERROR): the
/// member is outside the Primary component or not ready.
pub const ER_NOT_READY: u16 = 1047;
/// Deadlock: on a cluster also a transaction that failed certification or was aborted by
/// a conflicting one replicated from another member. Rolled back whole.
pub const ER_DEADLOCK: u16 = 1213;
/// "Got error ... during COMMIT": the provider could not replicate the commit.
pub const ER_ERROR_DURING_COMMIT: u16 = 1180;
/// The server is shutting down.
pub const ER_SERVER_SHUTDOWN: u16 = 1053;
/// The connection was killed (by a shutdown, or an operator).
pub const ER_CONNECTION_KILLED: u16 = 1927;
/// "Query execution was interrupted": a member aborting a statement as it leaves the
/// Primary component.
pub const ER_QUERY_INTERRUPTED: u16 = 1317;

/// True for a server error after which this member should not be used any more (another
/// member may take the statement): not in the Primary component, shutting down, a commit
/// it could not replicate.
pub fn member_failed(code: u16) -> bool {
    matches!(
        code,
        ER_NOT_READY
            | ER_ERROR_DURING_COMMIT
            | ER_SERVER_SHUTDOWN
            | ER_CONNECTION_KILLED
            | ER_QUERY_INTERRUPTED
    )
}

impl Server {
    /// What this server says of itself as a Galera member; a server without the
    /// provider reports wsrep off.
    pub fn galera_state(&mut self) -> Result<MemberState> {
        let mut vars = std::collections::HashMap::new();
        for st in [status_variables(), settings_variables()] {
            for row in self.rows(&st)? {
                let (name, value): (String, String) =
                    mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
                vars.insert(name.to_ascii_lowercase(), value);
            }
        }
        let get = |name: &str| vars.get(name).cloned().unwrap_or_default();
        Ok(MemberState {
            wsrep_on: get("wsrep_on").eq_ignore_ascii_case("ON"),
            cluster_name: get("wsrep_cluster_name"),
            cluster_uuid: get("wsrep_cluster_state_uuid"),
            status: ClusterStatus::parse(&get("wsrep_cluster_status")),
            local: LocalState::parse(&get("wsrep_local_state")),
            comment: get("wsrep_local_state_comment"),
            ready: get("wsrep_ready").eq_ignore_ascii_case("ON"),
            cluster_size: get("wsrep_cluster_size").trim().parse().unwrap_or(0),
        })
    }
}

/// The refusal of a member that reports another cluster's name.
pub fn wrong_cluster(member: &str, expected: &str, reported: &str) -> Error {
    Error::Config(format!(
        "directory.cluster: member {member} reports wsrep_cluster_name {reported:?}, not {expected:?}: it is not a member of the directory's cluster"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synced() -> MemberState {
        MemberState {
            wsrep_on: true,
            cluster_name: "dir".into(),
            cluster_uuid: "u".into(),
            status: ClusterStatus::Primary,
            local: LocalState::Synced,
            comment: "Synced".into(),
            ready: true,
            cluster_size: 3,
        }
    }

    #[test]
    fn only_a_synced_primary_ready_member_is_usable() {
        assert_eq!(synced().unusable(), None);
        let mut m = synced();
        m.local = LocalState::Donor;
        m.comment = "Donor/Desynced".into();
        assert_eq!(m.unusable().unwrap(), "Donor/Desynced (not Synced)");
        let mut m = synced();
        m.status = ClusterStatus::NonPrimary;
        assert!(m.unusable().unwrap().contains("non-Primary"), "{m:?}");
        let mut m = synced();
        m.wsrep_on = false;
        assert!(m.unusable().unwrap().starts_with("wsrep is off"));
        let mut m = synced();
        m.ready = false;
        assert!(m.unusable().is_some());
        assert_eq!(LocalState::parse("1"), LocalState::Joining);
        assert_eq!(LocalState::parse("0"), LocalState::Other);
        assert_eq!(
            ClusterStatus::parse("non-Primary"),
            ClusterStatus::NonPrimary
        );
        assert_eq!(ClusterStatus::parse(""), ClusterStatus::Disconnected);
    }

    #[test]
    fn errors_that_retire_a_member_are_not_certification_failures() {
        assert!(member_failed(ER_NOT_READY));
        assert!(member_failed(ER_SERVER_SHUTDOWN));
        assert!(
            !member_failed(ER_DEADLOCK),
            "a certification failure is retried in place"
        );
        assert!(!member_failed(1062));
    }
}

//! Server vendor and version, and what follows from them.

use serde::Serialize;
use std::fmt;

/// Who built the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Vendor {
    /// Oracle MySQL (and compatible builds such as Percona Server).
    MySql,
    /// MariaDB.
    MariaDb,
}

/// A `major.minor.patch` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Version {
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
    /// Patch level.
    pub patch: u16,
}

impl Version {
    /// A version from its three parts.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        Version {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Vendor plus version: decides the SQL dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Flavor {
    /// Who built the server.
    pub vendor: Vendor,
    /// Its version.
    pub version: Version,
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vendor = match self.vendor {
            Vendor::MySql => "MySQL",
            Vendor::MariaDb => "MariaDB",
        };
        write!(f, "{vendor} {}", self.version)
    }
}

impl Flavor {
    /// A flavor from its parts (for tests and dry runs).
    pub const fn new(vendor: Vendor, major: u16, minor: u16, patch: u16) -> Self {
        Flavor {
            vendor,
            version: Version::new(major, minor, patch),
        }
    }

    /// Reads `SELECT @@version` (e.g. `10.11.6-MariaDB-log`, `8.0.36`, `8.4.0-commercial`).
    /// Returns the reason when the server is one shardctl cannot drive.
    pub fn parse(version: &str) -> Result<Flavor, String> {
        let vendor = if version.to_ascii_lowercase().contains("mariadb") {
            Vendor::MariaDb
        } else {
            Vendor::MySql
        };
        let numeric: String = version
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut parts = numeric.split('.').map(|p| p.parse::<u16>());
        let (major, minor, patch) = match (parts.next(), parts.next(), parts.next()) {
            (Some(Ok(a)), Some(Ok(b)), Some(Ok(c))) => (a, b, c),
            _ => return Err("cannot read the version number".to_string()),
        };
        let flavor = Flavor {
            vendor,
            version: Version::new(major, minor, patch),
        };
        match vendor {
            Vendor::MySql if flavor.version < Version::new(5, 7, 0) => {
                Err("MySQL before 5.7 has no replication channels".to_string())
            }
            Vendor::MySql if (6..8).contains(&major) => {
                Err("no such MySQL release line".to_string())
            }
            Vendor::MariaDb if major < 10 => {
                Err("MariaDB before 10.0 has no named replication connections".to_string())
            }
            _ => Ok(flavor),
        }
    }

    /// True for MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.vendor == Vendor::MariaDb
    }

    fn mysql_at_least(&self, major: u16, minor: u16, patch: u16) -> bool {
        self.vendor == Vendor::MySql && self.version >= Version::new(major, minor, patch)
    }

    /// MySQL 8.0.22 renamed SLAVE to REPLICA in START/STOP/RESET/SHOW.
    pub fn uses_replica_keyword(&self) -> bool {
        self.mysql_at_least(8, 0, 22)
    }

    /// MySQL 8.0.23 introduced CHANGE REPLICATION SOURCE TO and SOURCE_* options.
    pub fn uses_change_replication_source(&self) -> bool {
        self.mysql_at_least(8, 0, 23)
    }

    /// MySQL 8.0.26 introduced SOURCE_POS_WAIT.
    pub fn uses_source_pos_wait(&self) -> bool {
        self.mysql_at_least(8, 0, 26)
    }

    /// MySQL 8.2 replaced SHOW MASTER STATUS with SHOW BINARY LOG STATUS (8.4 removed the old one).
    pub fn uses_binary_log_status(&self) -> bool {
        self.mysql_at_least(8, 2, 0)
    }

    /// Per-channel replication filters that change without a restart.
    /// MySQL: CHANGE REPLICATION FILTER ... FOR CHANNEL since 8.0; MariaDB: connection-prefixed
    /// variables (all 10.x).
    pub fn has_channel_filters(&self) -> bool {
        self.is_mariadb() || self.mysql_at_least(8, 0, 0)
    }

    /// Per-channel rewrite-db without a restart. MariaDB made replicate_rewrite_db a dynamic
    /// variable in 10.11.
    pub fn has_dynamic_rewrite_db(&self) -> bool {
        match self.vendor {
            Vendor::MariaDb => self.version >= Version::new(10, 11, 0),
            Vendor::MySql => self.mysql_at_least(8, 0, 0),
        }
    }

    /// MySQL 8.0.20 can compress a transaction's events into one payload event
    /// (`binlog_transaction_compression`).
    pub fn has_binlog_transaction_compression(&self) -> bool {
        self.mysql_at_least(8, 0, 20)
    }

    /// MySQL 8.0.3 can log a JSON column's update as a diff (`binlog_row_value_options`).
    pub fn has_binlog_row_value_options(&self) -> bool {
        self.mysql_at_least(8, 0, 3)
    }

    /// MySQL has super_read_only (5.7+); MariaDB does not.
    pub fn has_super_read_only(&self) -> bool {
        self.vendor == Vendor::MySql
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_real_version_strings() {
        let m = Flavor::parse("10.11.19-MariaDB-0+deb12u1-log").unwrap();
        assert_eq!(m, Flavor::new(Vendor::MariaDb, 10, 11, 19));
        let m = Flavor::parse("11.4.2-MariaDB").unwrap();
        assert_eq!(m, Flavor::new(Vendor::MariaDb, 11, 4, 2));
        assert_eq!(
            Flavor::parse("8.0.36").unwrap(),
            Flavor::new(Vendor::MySql, 8, 0, 36)
        );
        assert_eq!(
            Flavor::parse("8.4.0-commercial").unwrap(),
            Flavor::new(Vendor::MySql, 8, 4, 0)
        );
        assert_eq!(
            Flavor::parse("5.7.44-log").unwrap(),
            Flavor::new(Vendor::MySql, 5, 7, 44)
        );
    }

    #[test]
    fn refuses_what_it_cannot_drive() {
        assert!(Flavor::parse("5.6.51").unwrap_err().contains("before 5.7"));
        assert!(Flavor::parse("5.5.5-5.5.68-MariaDB").is_err());
        assert!(Flavor::parse("garbage").is_err());
        assert!(Flavor::parse("6.0.1").is_err());
    }

    #[test]
    fn dialect_switches_at_the_documented_versions() {
        let old = Flavor::new(Vendor::MySql, 8, 0, 21);
        let new = Flavor::new(Vendor::MySql, 8, 0, 26);
        assert!(!old.uses_replica_keyword() && new.uses_replica_keyword());
        assert!(!old.uses_source_pos_wait() && new.uses_source_pos_wait());
        assert!(!new.uses_binary_log_status());
        assert!(Flavor::new(Vendor::MySql, 8, 4, 0).uses_binary_log_status());
        assert!(!Flavor::new(Vendor::MySql, 5, 7, 44).has_channel_filters());
        assert!(!Flavor::new(Vendor::MariaDb, 10, 6, 0).has_dynamic_rewrite_db());
        assert!(Flavor::new(Vendor::MariaDb, 11, 4, 0).has_dynamic_rewrite_db());
    }
}

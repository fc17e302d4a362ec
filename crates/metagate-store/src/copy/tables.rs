//! The tables `db copy` copies, and what it does with each.

/// How a column's values are typed in PostgreSQL (SQLite takes each as it comes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Int,
    Real,
    Text,
}

use Kind::{Int, Real, Text};

/// What a copy does with a row the target already holds under the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Conflict {
    /// The row must be the same; another row there is another store's history, refused.
    Refuse,
    /// The source's values are taken (a recommendation's status changes after it is made).
    TakeSource,
    /// A grant: the earlier revocation holds, so no copy ever gives a revoked grant back.
    EarliestRevocation,
}

/// What `--merge` does with a table's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Merged {
    /// History: each row the target has not seen gets a new id there, its references
    /// (column, table) rewritten to the target's ids, and, with `only`, just the rows that
    /// condition selects.
    Renumbered {
        refs: &'static [(&'static str, &'static str)],
        only: Option<&'static str>,
    },
    /// Keyed by a name no other store makes (a grant's random id): copied as it is.
    AsIs,
    /// What an evaluate run made of its own store: its high-water marks and evidence name that
    /// store's ids, so it means nothing in another. The target's own runs count the merged rows.
    Not,
}

/// One table: its columns (the key's first), how many make the key, and what a copy does when
/// the key is taken and when merging.
pub(super) struct Table {
    pub(super) name: &'static str,
    pub(super) columns: &'static [(&'static str, Kind)],
    pub(super) key: usize,
    pub(super) conflict: Conflict,
    pub(super) merged: Merged,
}

impl Table {
    /// Where `column` is among the columns.
    pub(super) fn position(&self, column: &str) -> usize {
        self.columns
            .iter()
            .position(|(name, _)| *name == column)
            .unwrap_or_else(|| panic!("{} has no column {column}", self.name))
    }
}

/// The columns PostgreSQL indexes by their text, whose long values it keeps bounded
/// (`pg_text::as_key`), in whichever table they are.
#[cfg(feature = "postgres")]
pub(super) const KEY_COLUMNS: [&str; 7] = [
    "caller",
    "tool",
    "method",
    "error_type",
    "capability",
    "from_arg",
    "to_arg",
];

/// Every table of the schema, parents before the rows that name them.
pub(super) const TABLES: &[Table] = &[
    Table {
        name: "decisions",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("caller", Text),
            ("intent", Text),
            ("tool", Text),
            ("method", Text),
            ("shape", Text),
            ("verdict", Text),
            ("category", Text),
            ("corrections", Text),
            ("warnings", Text),
            ("args", Text),
            ("fingerprint", Int),
            ("latency_us", Int),
            ("call_id", Text),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Renumbered {
            refs: &[],
            only: None,
        },
    },
    Table {
        name: "outcomes",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("tool", Text),
            ("method", Text),
            ("status", Text),
            ("error_type", Text),
            ("error_message", Text),
            ("boundary_axes", Text),
            ("boundary_axes_raw", Text),
            ("observed_task_shape", Text),
            ("suggested_split", Text),
            ("evidence", Text),
            ("metadata", Text),
            ("caller", Text),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Renumbered {
            refs: &[],
            only: None,
        },
    },
    Table {
        name: "asks",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("\"user\"", Text),
            ("text", Text),
            ("capabilities", Text),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Renumbered {
            refs: &[],
            only: None,
        },
    },
    Table {
        name: "user_corrections",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("session", Text),
            ("tool", Text),
            ("method", Text),
            ("note", Text),
            ("reask_ask_id", Int),
            ("corrects_ask_id", Int),
            ("blamed_outcome_id", Int),
            ("blamed_decision_id", Int),
            ("found_by_run", Int),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Renumbered {
            refs: &[
                ("reask_ask_id", "asks"),
                ("corrects_ask_id", "asks"),
                ("blamed_outcome_id", "outcomes"),
                ("blamed_decision_id", "decisions"),
                ("found_by_run", "eval_runs"),
            ],
            // Re-asks are what an evaluate run found in its store's asks; the target's own
            // runs find them again in the merged asks.
            only: Some("reask_ask_id IS NULL"),
        },
    },
    Table {
        name: "grants",
        columns: &[
            ("id", Text),
            ("capability", Text),
            ("scope", Text),
            ("session", Text),
            ("granted_at_ms", Int),
            ("expires_at_ms", Int),
            ("revoked_at_ms", Int),
            ("granted_by", Text),
            ("reason", Text),
            ("mac", Text),
        ],
        key: 1,
        conflict: Conflict::EarliestRevocation,
        merged: Merged::AsIs,
    },
    Table {
        name: "grant_events",
        columns: &[
            ("id", Int),
            ("ts_ms", Int),
            ("event", Text),
            ("grant_id", Text),
            ("capability", Text),
            ("tool", Text),
            ("session", Text),
            ("decision_id", Int),
            ("actor", Text),
            ("detail", Text),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Renumbered {
            refs: &[("decision_id", "decisions")],
            only: None,
        },
    },
    Table {
        name: "eval_runs",
        columns: &[
            ("id", Int),
            ("window_from_ms", Int),
            ("window_to_ms", Int),
            ("ran_at_ms", Int),
            ("events", Int),
            ("shards", Text),
            ("decisions_hw", Int),
            ("outcomes_hw", Int),
            ("corrections_hw", Int),
            ("unlinked_corrections", Int),
            ("policy_file", Text),
            ("policy_hash", Text),
            ("unattributed_reasks", Int),
        ],
        key: 1,
        conflict: Conflict::Refuse,
        merged: Merged::Not,
    },
    Table {
        name: "eval_recommendations",
        columns: &[
            ("id", Text),
            ("tool", Text),
            ("method", Text),
            ("kind", Text),
            ("subject", Text),
            ("confidence", Real),
            ("summary", Text),
            ("axes", Text),
            ("evidence", Text),
            ("status", Text),
            ("first_seen_ms", Int),
            ("last_seen_ms", Int),
            ("evidence_count", Real),
            ("rejected_count", Real),
            ("brief", Text),
            ("evidence_rate", Real),
            ("rejected_rate", Real),
        ],
        key: 1,
        conflict: Conflict::TakeSource,
        merged: Merged::Not,
    },
    Table {
        name: "eval_health",
        columns: &[
            ("run_id", Int),
            ("tool", Text),
            ("method", Text),
            ("calls", Int),
            ("utility", Real),
            ("cohesion_warning", Int),
            ("degraded", Int),
            ("tally", Text),
        ],
        key: 3,
        conflict: Conflict::Refuse,
        merged: Merged::Not,
    },
    Table {
        name: "eval_run_recommendations",
        columns: &[
            ("run_id", Int),
            ("rec_id", Text),
            ("confidence", Real),
            ("evidence_count", Real),
            ("muted", Int),
        ],
        key: 2,
        conflict: Conflict::Refuse,
        merged: Merged::Not,
    },
    Table {
        name: "eval_alias_pairs",
        columns: &[
            ("run_id", Int),
            ("tool", Text),
            ("from_arg", Text),
            ("to_arg", Text),
            ("count", Int),
        ],
        key: 4,
        conflict: Conflict::Refuse,
        merged: Merged::Not,
    },
];

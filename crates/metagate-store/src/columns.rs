//! The column lists the inserts of both backends write, each defined once: SQLite and
//! PostgreSQL differ in placeholders and upserts, never in which columns a row fills.
//! `user` is quoted because PostgreSQL reserves it; SQLite reads a quoted name the same.
//! `schema_tests.rs` ties every list, and `db copy`'s tables, to the migrated schema.

/// A decision row, as the gate commits it (`id` is the store's): a macro, so that statements
/// built around it with `concat!` stay constants on the hot path.
macro_rules! decision_columns {
    () => {
        "ts_ms, session, caller, intent, tool, method, shape, verdict, category, corrections, \
         warnings, args, fingerprint, latency_us, call_id"
    };
}
pub(crate) use decision_columns;

/// [`decision_columns`] as a constant.
#[cfg(test)]
pub(crate) const DECISION: &str = decision_columns!();

/// An outcome event, in the order events bind them.
pub(crate) const OUTCOME: &str = "ts_ms, session, tool, method, status, error_type, error_message, \
     boundary_axes, boundary_axes_raw, observed_task_shape, suggested_split, evidence, metadata, caller";

/// An ask event.
pub(crate) const ASK: &str = "ts_ms, session, \"user\", text, capabilities";

/// A user correction event, as `record` writes it (evaluate's re-ask blame fills the rest).
pub(crate) const CORRECTION: &str = "ts_ms, session, tool, method, note";

/// A grant, in the order `Grant` is read from a row.
pub(crate) const GRANT: &str = "id, capability, scope, session, granted_at_ms, expires_at_ms, \
     revoked_at_ms, granted_by, reason, mac";

/// A grant's audit event (a macro, as [`decision_columns`]).
macro_rules! grant_event_columns {
    () => {
        "ts_ms, event, grant_id, capability, tool, session, decision_id, actor, detail"
    };
}
pub(crate) use grant_event_columns;

/// [`grant_event_columns`] as a constant.
#[cfg(test)]
pub(crate) const GRANT_EVENT: &str = grant_event_columns!();

/// The event tables an event fills, each with its columns.
pub(crate) const EVENT_TABLES: [(&str, &str); 3] = [
    ("outcomes", OUTCOME),
    ("asks", ASK),
    ("user_corrections", CORRECTION),
];

/// The names in a column list, unquoted.
#[cfg(test)]
pub(crate) fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|c| c.trim().trim_matches('"').to_owned())
        .collect()
}

//! OpenTelemetry export (docs/otel.md): each gate decision, `run` command and MCP request as
//! spans of the GenAI and MCP semantic conventions, and `evaluate`'s findings as events, sent
//! over OTLP/HTTP to the collector operators already run.
//!
//! It is turned on by the standard `OTEL_*` variables or a `[telemetry.otlp]` policy table,
//! and built only with the `otlp` feature; without it every hook here does nothing. Export
//! never decides anything: spans wait on a bounded queue for a thread of their own, and what
//! cannot be sent is counted and said once, at exit. The store stays the audit record.
//!
//! - [`context`]: `traceparent`, read and written;
//! - `export` (feature `otlp`): the queue and the thread that sends it;
//! - `spans` (feature `otlp`): spans and events, named as the conventions say.

pub mod context;
#[cfg(feature = "otlp")]
mod export;
mod hooks;
#[cfg(feature = "otlp")]
mod spans;

use std::time::Duration;

use metagate_core::policy::OtlpFile;

pub use context::Ids;
pub use hooks::{
    Evaluation, McpCall, McpScope, Pending, RunSpan, end_run, finish, last_decision, on, start_run,
};

/// The flush at exit, and each export, waits at most this long unless told otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(1000);

/// Spans that may wait to be sent unless told otherwise.
const DEFAULT_QUEUE: usize = 4096;

/// What export was asked for, read from the environment and the policy.
// A build without the `otlp` feature reads them only to say it cannot export.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
#[derive(Debug, Clone)]
pub struct Settings {
    /// The policy's endpoint with `/v1/traces`, when no variable names one.
    policy_endpoint: Option<String>,
    /// The variable's endpoint, as the exporter reads it, for the operator's messages.
    env_endpoint: Option<String>,
    service_name: String,
    policy_resource: Vec<(String, String)>,
    timeout: Duration,
    max_queue: usize,
    /// What turned export on, for the message of a build without it.
    asked_by: &'static str,
}

impl Settings {
    /// The settings when export is asked for, by the variables (which win) or the policy's
    /// table; `None` when it is not, or `OTEL_SDK_DISABLED=true` / `OTEL_TRACES_EXPORTER=none`
    /// turns it off.
    pub fn read(
        policy: Option<&OtlpFile>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Settings> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
        {
            return None;
        }
        let by_env = [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_SERVICE_NAME",
            "OTEL_RESOURCE_ATTRIBUTES",
        ]
        .into_iter()
        .find(|name| set(name).is_some());
        let asked_by = match (by_env, policy) {
            (Some(name), _) => name,
            (None, Some(_)) => "[telemetry.otlp]",
            (None, None) => return None,
        };
        let env_endpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
            set("OTEL_EXPORTER_OTLP_ENDPOINT")
                .map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
        });
        let policy_endpoint = if env_endpoint.is_some() {
            None
        } else {
            Some(format!(
                "{}/v1/traces",
                policy
                    .and_then(|p| p.endpoint.as_deref())
                    .unwrap_or("http://localhost:4318")
                    .trim_end_matches('/')
            ))
        };
        let resource_service = set("OTEL_RESOURCE_ATTRIBUTES").and_then(|attrs| {
            attrs.split(',').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k.trim() == "service.name").then(|| v.trim().to_string())
            })
        });
        let service_name = set("OTEL_SERVICE_NAME")
            .or(resource_service)
            .or_else(|| policy.and_then(|p| p.service_name.clone()))
            .unwrap_or_else(|| "metagate".to_string());
        Some(Settings {
            policy_endpoint,
            env_endpoint,
            service_name,
            policy_resource: policy
                .map(|p| {
                    p.resource_attributes
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            timeout: set("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                .or_else(|| set("OTEL_EXPORTER_OTLP_TIMEOUT"))
                .and_then(|ms| ms.trim().parse::<u64>().ok())
                .filter(|&ms| ms > 0)
                .or_else(|| policy.and_then(|p| p.timeout_ms))
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
            max_queue: policy.and_then(|p| p.max_queue).unwrap_or(DEFAULT_QUEUE),
            asked_by,
        })
    }

    /// Where the spans go, as the operator's messages name it.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    fn endpoint_shown(&self) -> String {
        self.env_endpoint
            .clone()
            .or_else(|| self.policy_endpoint.clone())
            .unwrap_or_default()
    }

    /// The resource: the policy's attributes, then `OTEL_RESOURCE_ATTRIBUTES` over them, then
    /// the service name as [`Settings::read`] chose it.
    #[cfg(feature = "otlp")]
    fn resource(&self) -> opentelemetry_sdk::Resource {
        use opentelemetry::KeyValue;
        use opentelemetry_sdk::resource::{EnvResourceDetector, TelemetryResourceDetector};
        opentelemetry_sdk::Resource::builder_empty()
            .with_attributes(
                self.policy_resource
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .with_detectors(&[
                Box::new(EnvResourceDetector::new()),
                Box::new(TelemetryResourceDetector),
            ])
            .with_service_name(self.service_name.clone())
            .build()
    }
}

/// Starts export for a process of `command` (`gate`, `mcp`, …) when `settings` ask for it:
/// its root span starts now, as a child of `TRACEPARENT` when that names a trace. Returns the
/// operator's line when export was asked for and cannot happen (a build without the `otlp`
/// feature, an endpoint that is not a URL); the process goes on without it.
pub fn start(
    settings: Option<Settings>,
    command: &'static str,
    traceparent: Option<&str>,
) -> Option<String> {
    hooks::start(settings?, command, traceparent.and_then(Ids::parse))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)], policy: Option<&OtlpFile>) -> Option<Settings> {
        let var = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        };
        Settings::read(policy, &var)
    }

    /// What turns export on, where the spans go and under which name, variables over policy.
    #[test]
    fn the_variables_and_the_policy_table_turn_export_on_the_variables_winning() {
        let policy = OtlpFile {
            endpoint: Some("https://policy.example:4318/".into()),
            service_name: Some("from-policy".into()),
            timeout_ms: Some(250),
            ..OtlpFile::default()
        };
        // (variables, policy?, on?, endpoint shown, service name, timeout ms)
        type Case<'a> = (&'a [(&'a str, &'a str)], bool, bool, &'a str, &'a str, u64);
        let cases: &[Case<'_>] = &[
            (&[], false, false, "", "", 0),
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")],
                false,
                false,
                "",
                "",
                0,
            ),
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")],
                false,
                true,
                "http://c:4318/v1/traces",
                "metagate",
                1000,
            ),
            (
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/x"),
                ],
                true,
                true,
                "http://t:9/x",
                "from-policy",
                250,
            ),
            (
                &[("OTEL_SERVICE_NAME", "svc")],
                false,
                true,
                "http://localhost:4318/v1/traces",
                "svc",
                1000,
            ),
            (
                &[("OTEL_RESOURCE_ATTRIBUTES", "a=b, service.name=res")],
                true,
                true,
                "https://policy.example:4318/v1/traces",
                "res",
                250,
            ),
            (
                &[("OTEL_EXPORTER_OTLP_TIMEOUT", "40")],
                true,
                true,
                "https://policy.example:4318/v1/traces",
                "from-policy",
                40,
            ),
            (
                &[],
                true,
                true,
                "https://policy.example:4318/v1/traces",
                "from-policy",
                250,
            ),
            (
                &[("OTEL_SDK_DISABLED", "TRUE"), ("OTEL_SERVICE_NAME", "svc")],
                true,
                false,
                "",
                "",
                0,
            ),
            (&[("OTEL_TRACES_EXPORTER", "none")], true, false, "", "", 0),
        ];
        for (vars, with_policy, on, endpoint, service, timeout) in cases {
            let got = read(vars, with_policy.then_some(&policy));
            assert_eq!(got.is_some(), *on, "{vars:?} {with_policy}");
            if let Some(s) = got {
                assert_eq!(
                    (s.endpoint_shown().as_str(), s.service_name.as_str()),
                    (*endpoint, *service),
                    "{vars:?} {with_policy}"
                );
                assert_eq!(s.timeout, Duration::from_millis(*timeout), "{vars:?}");
            }
        }
    }
}

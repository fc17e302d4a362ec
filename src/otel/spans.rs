//! Spans as the OTLP exporter takes them, named and filled as the GenAI and MCP semantic
//! conventions say. Every text a span carries from a call comes from its store row, so it is
//! redacted exactly as the store has it.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use super::context::Ids;
use metagate_store::telemetry::DecisionRow;

/// A span being built.
pub(super) struct Span {
    pub(super) ids: Ids,
    pub(super) parent: Option<(Ids, bool)>,
    pub(super) kind: SpanKind,
    pub(super) name: Cow<'static, str>,
    pub(super) start: SystemTime,
    pub(super) end: SystemTime,
    pub(super) attributes: Vec<KeyValue>,
    pub(super) events: Vec<Event>,
    pub(super) error: Option<String>,
}

impl Span {
    pub(super) fn new(
        ids: Ids,
        parent: Option<(Ids, bool)>,
        kind: SpanKind,
        name: impl Into<Cow<'static, str>>,
        start: SystemTime,
    ) -> Span {
        Span {
            ids,
            parent,
            kind,
            name: name.into(),
            start,
            end: start,
            attributes: Vec::with_capacity(16),
            events: Vec::new(),
            error: None,
        }
    }

    pub(super) fn attr(&mut self, key: &'static str, value: impl Into<opentelemetry::Value>) {
        self.attributes.push(KeyValue::new(key, value));
    }

    pub(super) fn attr_opt(&mut self, key: &'static str, value: Option<&str>) {
        if let Some(v) = value {
            self.attributes.push(KeyValue::new(key, v.to_string()));
        }
    }

    /// Marks the span failed with `error.type` (the conventions' one required attribute of a
    /// failed operation) and the span status.
    pub(super) fn fail(&mut self, error_type: &str, message: Option<&str>) {
        self.attr("error.type", error_type.to_string());
        self.error = Some(message.unwrap_or(error_type).to_string());
    }

    pub(super) fn into_data(self) -> SpanData {
        let context = |ids: &Ids, remote: bool| {
            SpanContext::new(
                TraceId::from_bytes(ids.trace),
                SpanId::from_bytes(ids.span),
                if ids.sampled {
                    TraceFlags::SAMPLED
                } else {
                    TraceFlags::default()
                },
                remote,
                TraceState::default(),
            )
        };
        let mut events = SpanEvents::default();
        events.events = self.events;
        SpanData {
            span_context: context(&self.ids, false),
            parent_span_id: self
                .parent
                .map_or(SpanId::INVALID, |(p, _)| SpanId::from_bytes(p.span)),
            parent_span_is_remote: self.parent.is_some_and(|(_, remote)| remote),
            span_kind: self.kind,
            name: self.name,
            start_time: self.start,
            end_time: self.end.max(self.start),
            attributes: self.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status: match self.error {
                Some(message) => Status::error(message),
                None => Status::Unset,
            },
            instrumentation_scope: scope(),
        }
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("metagate")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// The `execute_tool` span of one gate decision, from its store row: the tool, the call's id,
/// its (redacted) arguments, and the verdict with its corrections as a
/// `gen_ai.guardrail.result` event. The gate decides before the tool runs, so the span lasts
/// as long as the decision did.
pub(super) fn decision(
    row: &DecisionRow,
    ids: Ids,
    parent: Option<(Ids, bool)>,
    now: SystemTime,
) -> SpanData {
    let latency = Duration::from_micros(u64::try_from(row.latency_us).unwrap_or(0));
    let end = now;
    let start = end.checked_sub(latency).unwrap_or(end);
    let tool = row.tool.as_deref();
    let name = match tool {
        Some(t) => Cow::Owned(format!("execute_tool {t}")),
        None => Cow::Borrowed("execute_tool"),
    };
    let mut span = Span::new(ids, parent, SpanKind::Internal, name, start);
    span.end = end;
    span.attr("gen_ai.operation.name", "execute_tool");
    span.attr_opt("gen_ai.tool.name", tool);
    span.attr_opt("gen_ai.tool.call.id", row.call_id.as_deref());
    span.attr_opt("gen_ai.tool.call.arguments", row.args.as_deref());
    span.attr_opt("gen_ai.conversation.id", row.session.as_deref());
    span.attr_opt("gen_ai.agent.name", row.caller.as_deref());
    span.attr_opt("metagate.intent", row.intent.as_deref());
    span.attr_opt("metagate.method", row.method.as_deref());
    span.attr_opt("metagate.shape", row.shape);
    span.attr("metagate.verdict", row.verdict);
    if let Some(category) = row.category {
        span.fail(category, None);
    }
    let mut result = vec![
        KeyValue::new("gen_ai.guardrail.name", "metagate"),
        KeyValue::new("metagate.verdict", row.verdict),
        KeyValue::new("metagate.corrections", row.corrections.clone()),
    ];
    if row.warnings != "[]" {
        result.push(KeyValue::new("metagate.warnings", row.warnings.clone()));
    }
    if let Some(category) = row.category {
        result.push(KeyValue::new("error.type", category));
    }
    span.events
        .push(Event::new("gen_ai.guardrail.result", end, result, 0));
    span.into_data()
}

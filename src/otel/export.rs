//! The way out: a bounded queue the deciding threads put finished spans on without waiting,
//! and one thread that sends them in batches over OTLP/HTTP (protobuf). Nothing here can
//! change an answer: a full queue drops the span and counts it, a failed export counts its
//! spans, and the flush at exit waits at most the export timeout.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};

use super::Settings;

/// Spans sent in one request at most.
const BATCH: usize = 512;

/// How long the sender waits for a batch to fill before sending what it has.
const DELAY: Duration = Duration::from_millis(200);

/// What became of the spans, for the one line said at exit.
#[derive(Default)]
struct Counts {
    /// Put on the queue.
    queued: AtomicU64,
    /// Refused by a full queue.
    dropped: AtomicU64,
    /// In a batch the collector did not take.
    failed: AtomicU64,
    /// Taken by the collector.
    sent: AtomicU64,
    /// Why the first batch failed.
    first_failure: Mutex<Option<String>>,
}

/// The queue and its sender thread.
pub(super) struct Export {
    queue: Mutex<Option<SyncSender<SpanData>>>,
    done: Mutex<Receiver<()>>,
    counts: Arc<Counts>,
    timeout: Duration,
    endpoint: String,
}

impl Export {
    /// Builds the exporter and starts its thread; `Err` says why it cannot be built (an
    /// endpoint that is not a URL), which the caller says once and goes on without export.
    pub(super) fn start(settings: &Settings) -> Result<Export, String> {
        let mut builder = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(Ureq::new(settings.timeout))
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(settings.timeout);
        if let Some(endpoint) = &settings.policy_endpoint {
            builder = builder.with_endpoint(endpoint.clone());
        }
        let mut exporter = builder.build().map_err(|e| e.to_string())?;
        exporter.set_resource(&settings.resource());
        let (queue, spans) = std::sync::mpsc::sync_channel(settings.max_queue);
        let (finished, done) = std::sync::mpsc::sync_channel(1);
        let counts = Arc::new(Counts::default());
        let thread_counts = Arc::clone(&counts);
        std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || {
                send_batches(&exporter, &spans, &thread_counts);
                let _ = finished.send(());
            })
            .map_err(|e| format!("cannot start its thread: {e}"))?;
        Ok(Export {
            queue: Mutex::new(Some(queue)),
            done: Mutex::new(done),
            counts,
            timeout: settings.timeout,
            endpoint: settings.endpoint_shown(),
        })
    }

    /// Puts `span` on the queue, or drops and counts it when the queue is full or closed.
    pub(super) fn send(&self, span: SpanData) {
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queue) = queue.as_ref() else {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match queue.try_send(span) {
            Ok(()) => {
                self.counts.queued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Closes the queue and waits for what is on it to be sent, at most the export timeout;
    /// returns the operator's line when anything was lost.
    pub(super) fn finish(&self) -> Option<String> {
        let queue = self.queue.lock().unwrap_or_else(|e| e.into_inner()).take();
        queue.as_ref()?;
        drop(queue);
        let waited = self
            .done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .recv_timeout(self.timeout)
            .is_ok();
        let c = &self.counts;
        let queued = c.queued.load(Ordering::Relaxed);
        let dropped = c.dropped.load(Ordering::Relaxed);
        let sent = c.sent.load(Ordering::Relaxed);
        let lost = dropped + queued.saturating_sub(sent);
        if lost == 0 {
            return None;
        }
        let failed = c.failed.load(Ordering::Relaxed);
        let mut why = Vec::new();
        if let Some(first) = c
            .first_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_deref()
        {
            why.push(format!("{failed} in failed exports ({first})"));
        }
        if dropped > 0 {
            why.push(format!("{dropped} dropped by the full queue"));
        }
        let unsent = queued.saturating_sub(sent + failed);
        if !waited && unsent > 0 {
            why.push(format!(
                "{unsent} unsent after the {} ms flush",
                self.timeout.as_millis()
            ));
        }
        Some(format!(
            "metagate: warning: otlp: {lost} of {} spans were not exported to {}: {}; the store keeps every decision",
            queued + dropped,
            self.endpoint,
            why.join(", ")
        ))
    }
}

/// The sender thread: a batch is what arrived within [`DELAY`] of its first span, at most
/// [`BATCH`]; it ends with the queue, after sending what was on it.
fn send_batches(
    exporter: &opentelemetry_otlp::SpanExporter,
    spans: &Receiver<SpanData>,
    counts: &Counts,
) {
    let mut open = true;
    while open {
        let Ok(first) = spans.recv() else { break };
        let mut batch = vec![first];
        let until = Instant::now() + DELAY;
        while batch.len() < BATCH {
            match spans.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let n = batch.len() as u64;
        match futures_executor::block_on(exporter.export(batch)) {
            Ok(()) => {
                counts.sent.fetch_add(n, Ordering::Relaxed);
            }
            Err(e) => {
                counts.failed.fetch_add(n, Ordering::Relaxed);
                let mut first = counts
                    .first_failure
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some(metagate_wire::display::one_line(&e.to_string()).into_owned());
                }
            }
        }
    }
}

/// OTLP's HTTP client trait over ureq: a blocking client, called from the sender thread
/// (the exporter's future is driven by `block_on` there), so no async runtime is started.
#[derive(Debug)]
struct Ureq {
    agent: ureq::Agent,
}

impl Ureq {
    fn new(timeout: Duration) -> Ureq {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build();
        Ureq {
            agent: ureq::Agent::new_with_config(config),
        }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Ureq {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, body.to_vec());
        let mut response = self.agent.run(request)?;
        let body = response.body_mut().read_to_vec()?;
        let (parts, _) = response.into_parts();
        Ok(http::Response::from_parts(parts, bytes::Bytes::from(body)))
    }
}

//! `evaluate --format html`: the report as one self-contained page (no script, font or style
//! from elsewhere): each tool's nights as an inline SVG chart (failure rate and utility, the
//! change points found marked), then its findings with their evidence and sessions. A short
//! inline script notes, once the page is laid out, how many points each chart drew and any
//! error, for the headless browser test to read.

use std::fmt::Write as _;

use metagate_core::events::format_time;
use metagate_core::evolution::Recommendation;
use metagate_core::evolution::series::Night;
use metagate_core::policy::Policy;

use crate::evaluate::Evaluation;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 140.0;
const PAD: f64 = 28.0;

/// Text made safe inside HTML (elements and attributes).
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The x of night `i` of `n`.
fn x_of(i: usize, n: usize) -> f64 {
    if n <= 1 {
        PAD + (WIDTH - 2.0 * PAD) / 2.0
    } else {
        PAD + (WIDTH - 2.0 * PAD) * i as f64 / (n - 1) as f64
    }
}

fn y_of(v: f64) -> f64 {
    HEIGHT - PAD + (2.0 * PAD - HEIGHT) * v.clamp(0.0, 1.0)
}

/// One tool's chart: a line and a point per night for each series, a dashed line at each
/// change point.
fn chart(tool: &str, nights: &[Night], changes: &[(i64, String)]) -> String {
    let mut svg = String::new();
    let n = nights.len();
    let _ = write!(
        svg,
        r#"<svg class="chart" data-tool="{}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{} by night">"#,
        esc(tool),
        esc(tool)
    );
    let _ = write!(
        svg,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fbfbfd"/><line x1="{PAD}" y1="{}" x2="{}" y2="{}" stroke="#999"/><text x="4" y="{}" font-size="10">1</text><text x="4" y="{}" font-size="10">0</text>"##,
        y_of(0.0),
        WIDTH - PAD,
        y_of(0.0),
        y_of(1.0) + 4.0,
        y_of(0.0) + 4.0
    );
    for (i, night) in nights.iter().enumerate() {
        if i % 2 == 0 || n <= 8 {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" font-size="9" text-anchor="middle">{}</text>"#,
                x_of(i, n),
                HEIGHT - 8.0,
                &format_time(night.start_ms)[5..10]
            );
        }
    }
    for (at_ms, label) in changes {
        // The change's place between the nights, by its time.
        let (Some(first), Some(last)) = (nights.first(), nights.last()) else {
            continue;
        };
        let span = (last.start_ms - first.start_ms).max(1) as f64;
        let x = if n <= 1 {
            x_of(0, 1)
        } else {
            x_of(0, n) + (x_of(n - 1, n) - x_of(0, n)) * (at_ms - first.start_ms) as f64 / span
        };
        let _ = write!(
            svg,
            r##"<line class="change" data-at="{}" x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="#d33" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" font-size="9" fill="#d33">{}</text>"##,
            esc(&format_time(*at_ms)),
            PAD - 10.0,
            HEIGHT - PAD,
            x + 3.0,
            PAD - 12.0,
            esc(label)
        );
    }
    type Pick = fn(&Night) -> Option<f64>;
    let series: [(&str, &str, Pick); 2] = [
        ("failure_rate", "#c0392b", |n| n.failure_rate),
        ("utility", "#2471a3", |n| n.utility),
    ];
    for (name, colour, pick) in series {
        let points: Vec<(f64, f64, &Night, f64)> = nights
            .iter()
            .enumerate()
            .filter_map(|(i, night)| pick(night).map(|v| (x_of(i, n), y_of(v), night, v)))
            .collect();
        let path: Vec<String> = points
            .iter()
            .map(|(x, y, _, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline class="series" data-series="{name}" fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for (x, y, night, v) in points {
            let _ = write!(
                svg,
                r#"<circle class="pt" data-series="{name}" data-night="{}" data-value="{v:.2}" cx="{x:.1}" cy="{y:.1}" r="3" fill="{colour}"><title>{} {name} {v:.2} ({} calls)</title></circle>"#,
                &format_time(night.start_ms)[..10],
                &format_time(night.start_ms)[..10],
                night.calls
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// One finding: what, how sure, what changed, its evidence and sessions.
fn finding(r: &Recommendation, below_floor: bool) -> String {
    let evidence = r.evidence.to_json();
    let mut html = String::new();
    let change = r.change.map_or("", |c| c.as_str());
    let _ = write!(
        html,
        r#"<div class="finding{}" data-kind="{}" data-id="{}"><p><b>{}</b> <span class="tag">{}</span> confidence {:.2}{}</p><p>{}</p>"#,
        if below_floor { " low" } else { "" },
        esc(r.kind),
        esc(&r.id),
        esc(r.kind),
        esc(change),
        r.confidence,
        if below_floor {
            " (under the floor: never pages)"
        } else {
            ""
        },
        esc(&r.summary)
    );
    if let Some(examples) = evidence["examples"].as_array()
        && !examples.is_empty()
    {
        html.push_str("<ul class=\"examples\">");
        for e in examples {
            let _ = write!(html, "<li>{}</li>", esc(e.as_str().unwrap_or("")));
        }
        html.push_str("</ul>");
    }
    let samples = evidence["samples"].as_array().cloned().unwrap_or_default();
    if !samples.is_empty() {
        html.push_str("<table class=\"sessions\"><tr><th>session</th><th>caller</th><th>at</th><th>error</th></tr>");
        for s in &samples {
            let text = |k: &str| esc(s[k].as_str().unwrap_or("-"));
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                text("session"),
                text("caller"),
                text("at"),
                text("error")
            );
        }
        html.push_str("</table>");
    } else if let Some(sessions) = evidence["sessions"].as_array()
        && !sessions.is_empty()
    {
        let names: Vec<String> = sessions
            .iter()
            .map(|s| esc(s.as_str().unwrap_or("")))
            .collect();
        let _ = write!(
            html,
            "<p class=\"small\">sessions: {}</p>",
            names.join(", ")
        );
    }
    html.push_str("</div>");
    html
}

/// The whole page.
pub fn page(e: &Evaluation, policy: &Policy) -> String {
    let t = policy.thresholds();
    let d = &e.digest;
    let mut html = String::new();
    html.push_str(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>metagate evaluate</title><style>\
         body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1100px}\
         h1{font-size:20px}h2{font-size:16px;margin:28px 0 6px}.tool{border-top:1px solid #ddd;padding-top:6px}\
         .finding{border-left:4px solid #c0392b;padding:2px 10px;margin:8px 0;background:#fff8f7}\
         .finding.low{border-color:#aaa;background:#f6f6f6}.tag{font-size:11px;background:#eee;padding:1px 5px;border-radius:3px}\
         table.sessions{border-collapse:collapse;font-size:12px}table.sessions td,table.sessions th{border:1px solid #ddd;padding:2px 6px;text-align:left}\
         .small{font-size:12px;color:#555}.legend span{margin-right:14px}\
         </style></head><body>",
    );
    let _ = write!(
        html,
        "<h1>metagate evaluate</h1><p class=\"small\">window {} → {} · {} events · confidence floor {:.2}</p>",
        esc(&format_time(e.window.from_ms)),
        esc(&format_time(e.window.until_ms)),
        e.aggregate.events,
        e.floor
    );
    let _ = write!(
        html,
        "<p id=\"digest\">since the last run: {} new, {} reopened, {} worse, {} better, {} resolved; {} under the floor</p>",
        d.new.len(),
        d.reopened.len(),
        d.worse.len(),
        d.better.len(),
        d.resolved.len(),
        d.below_floor.len()
    );
    html.push_str("<p class=\"legend small\"><span style=\"color:#c0392b\">● failure rate</span><span style=\"color:#2471a3\">● utility</span><span style=\"color:#d33\">┆ change point</span></p>");
    for (tool, nights) in e.nights(&t) {
        let findings: Vec<&Recommendation> = e.shown(false).filter(|r| r.tool == tool).collect();
        let changes: Vec<(i64, String)> = findings
            .iter()
            .filter_map(|r| {
                r.changed_at_ms
                    .map(|at| (at, format!("{} {}", r.kind, r.subject)))
            })
            .collect();
        let _ = write!(
            html,
            "<section class=\"tool\" data-tool=\"{}\"><h2>{}</h2>{}",
            esc(&tool),
            esc(&tool),
            chart(&tool, &nights, &changes)
        );
        for r in findings {
            let low = d.below_floor.contains(&r.id);
            html.push_str(&finding(r, low));
        }
        html.push_str("</section>");
    }
    if !d.resolved.is_empty() {
        html.push_str("<h2>resolved since the last run</h2><ul>");
        for r in &d.resolved {
            let _ = write!(
                html,
                "<li>{} {}: {}</li>",
                esc(&r.kind),
                esc(&r.tool),
                esc(&r.summary)
            );
        }
        html.push_str("</ul>");
    }
    // For the headless browser test: what each chart drew once laid out, and any error.
    html.push_str(
        "<script>\
         window.__errors=[];window.addEventListener('error',function(e){window.__errors.push(String(e.message));});\
         window.addEventListener('load',function(){var out={charts:{},errors:window.__errors};\
         document.querySelectorAll('svg.chart').forEach(function(svg){var drawn=0;\
         svg.querySelectorAll('circle.pt').forEach(function(c){var b=c.getBBox();if(b.width>0&&b.height>0){drawn++;}});\
         out.charts[svg.getAttribute('data-tool')]={points:drawn,changes:svg.querySelectorAll('line.change').length,width:svg.getBoundingClientRect().width};});\
         var pre=document.createElement('pre');pre.id='render-check';pre.style.display='none';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);});\
         </script></body></html>\n",
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_made_inert() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
        assert_eq!(esc("a\u{1b}[2Jb"), "a [2Jb");
    }

    #[test]
    fn a_chart_has_a_point_per_night_and_series_with_a_value() {
        let night = |d: i64, f: Option<f64>, u: Option<f64>| Night {
            start_ms: d * 86_400_000,
            calls: 3,
            failure_rate: f,
            utility: u,
        };
        let nights = [
            night(1, Some(0.1), Some(0.9)),
            night(2, None, None),
            night(3, Some(0.5), Some(0.4)),
        ];
        let svg = chart(
            "t<1>",
            &nights,
            &[(2 * 86_400_000 + 3_600_000, "change_point".into())],
        );
        assert_eq!(svg.matches("<circle class=\"pt\"").count(), 4);
        assert_eq!(svg.matches("class=\"change\"").count(), 1);
        assert!(svg.contains("data-tool=\"t&lt;1&gt;\""));
    }
}

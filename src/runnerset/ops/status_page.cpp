#include "runnerset/ops/status_page.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "base/time_format.h"
#include "runnerset/ops/billing.h"
#include "runnerset/ops/status.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

// The milestones of a job's way, in order, and what the span that ends at each one is.
struct Step {
  const char* key;   // in "milestones"
  const char* span;  // the span from the step before to this one
};
constexpr Step kSteps[] = {
    {"received", "webhook received"},
    {"claimed", "queued → claimed"},
    {"vmRunning", "VM starting"},
    {"configDelivered", "runner config delivered"},
    {"runnerOnline", "runner connecting"},
    {"jobStarted", "waiting for GitHub to hand the job"},
    {"ended", "job running"},
};

const char* PathColour(const std::string& path) {
  if (path == "hot") return "#d9480f";
  if (path == "warm") return "#e8a317";
  if (path == "cold") return "#1c7ed6";
  return "#868e96";
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : JsonText(*it);
}

int64_t Int(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

std::string Num(double v, const char* format = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Cell(const std::string& text, const char* cls = nullptr) {
  return std::string("<td") + (cls ? std::string(" class=\"") + cls + "\"" : "") + ">" +
         HtmlEscape(text) + "</td>";
}

std::string Time(int64_t ms) {
  return ms > 0 ? FormatRfc3339(TimePoint(std::chrono::milliseconds(ms))) : "";
}

// {"a": 1, "b": 2} → "a 1, b 2".
std::string Counts(const json& counts) {
  if (!counts.is_object() || counts.empty()) return "none";
  std::string out;
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (!out.empty()) out += ", ";
    out += it.key() + " " + JsonText(it.value());
  }
  return out;
}

// " (sized to p95 ≤ 10 s: why)" for a pool sized to a target; "" for any other.
std::string Sizing(const json& sizing) {
  if (!sizing.is_object()) return "";
  return " (sized to p95 \u2264 " + Str(sizing, "p95QueuedToStartedSeconds") +
         " s: " + Str(sizing, "why") + ")";
}

// One job's milestones as a bar of spans from its webhook to the last milestone reached, each
// span a rectangle in the path's colour (alternate spans lighter), with its name and seconds as a
// tooltip.
std::string Waterfall(const json& milestones, const std::string& path, int64_t now_ms) {
  constexpr int kWidth = 360;
  constexpr int kHeight = 14;
  std::vector<std::pair<const Step*, int64_t>> reached;
  for (const Step& s : kSteps) {
    int64_t at = Int(milestones, s.key);
    // GitHub's times are whole seconds: a job may seem to start before its runner was online.
    if (at > 0 && !reached.empty()) at = std::max(at, reached.back().second);
    if (at > 0) reached.emplace_back(&s, at);
  }
  std::string svg = "<svg class=\"waterfall\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(kHeight) + "\" role=\"img\">";
  if (reached.empty()) return svg + "</svg>";
  const int64_t start = reached.front().second;
  const int64_t end = std::max(now_ms > 0 ? now_ms : reached.back().second, start + 1);
  const double scale = static_cast<double>(kWidth) / static_cast<double>(end - start);
  for (size_t i = 1; i <= reached.size(); ++i) {
    const int64_t from = reached[i - 1].second;
    const int64_t to = i < reached.size() ? reached[i].second : end;
    if (to <= from) continue;
    const bool open = i == reached.size();  // the span the job is in now
    if (open && now_ms <= 0) break;
    const std::string name = open ? "since " + std::string(reached[i - 1].first->key)
                                  : std::string(reached[i].first->span);
    svg += "<rect x=\"" + Num((from - start) * scale, "%.1f") + "\" y=\"1\" width=\"" +
           Num(std::max(1.0, (to - from) * scale), "%.1f") + "\" height=\"" +
           std::to_string(kHeight - 2) + "\" fill=\"" + PathColour(path) + "\" fill-opacity=\"" +
           (open    ? "0.25"
            : i % 2 ? "1"
                    : "0.6") +
           "\"><title>" + HtmlEscape(name + ": " + Num((to - from) / 1e3) + " s") +
           "</title></rect>";
  }
  return svg + "</svg>";
}

std::string Head(const json& s, int refresh_seconds) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
      std::string(kStatusPagePolicy) + "\">";
  if (refresh_seconds > 0) {
    out += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(refresh_seconds) + "\">";
  }
  out += "<title>mvr runner set " + HtmlEscape(Str(s, "runnerSetId")) +
         "</title><style>"
         "body{font:13px/1.4 system-ui,sans-serif;margin:1.5em;color:#212529;background:#fff}"
         "table{border-collapse:collapse;margin:.5em 0 1.5em}"
         "td,th{border-bottom:1px solid #dee2e6;padding:2px 8px;text-align:left;vertical-align:top}"
         "th{background:#f1f3f5}.bad{color:#c92a2a;font-weight:600}.num{text-align:right}"
         ".key span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}"
         "</style></head><body>";
  return out;
}

std::string Summary(const json& s) {
  const int64_t now = Int(s, "nowMs");
  std::string out = "<h1>Runner set " + HtmlEscape(Str(s, "runnerSetId")) + "</h1><p>At " +
                    HtmlEscape(Time(now)) + ": " + std::to_string(Int(s, "liveVms")) +
                    " live VMs of at most " + std::to_string(Int(s, "maxConcurrentVms")) + ".";
  const json auth = s.value("githubAuth", json::object());
  if (!auth.value("ok", true)) {
    out += " <span class=\"bad\" id=\"auth-failing\">GitHub refuses the set's credentials since " +
           HtmlEscape(Str(auth, "failingSince")) + ": fix the secret.</span>";
  }
  const json rate = s.value("githubRateLimit", json());
  if (rate.is_object()) {
    out += " GitHub rate budget: ";
    if (rate.contains("remaining")) {
      out += std::to_string(Int(rate, "remaining")) + " of " + std::to_string(Int(rate, "limit")) +
             " left this hour (resets " + HtmlEscape(Time(Int(rate, "resetMs"))) + ")";
    } else {
      out += "not yet seen";
    }
    out += "; JIT configs left this minute " + std::to_string(Int(rate, "contentMinuteRemaining")) +
           ", this hour " + std::to_string(Int(rate, "contentHourRemaining"));
    if (rate.contains("blockedUntilMs")) {
      out += "; <span class=\"bad\">held until " + HtmlEscape(Time(Int(rate, "blockedUntilMs"))) +
             "</span>";
    }
    out += ".";
  }
  out +=
      "</p><p class=\"key\">Paths:<span style=\"background:#d9480f\"></span>hot"
      "<span style=\"background:#e8a317\"></span>warm"
      "<span style=\"background:#1c7ed6\"></span>cold"
      "<span style=\"background:#868e96\"></span>unknown</p>";
  return out;
}

std::string Classes(const json& s) {
  std::string out =
      "<h2>Classes</h2><table id=\"classes\"><tr><th>Class</th><th>Image</th><th>Size</th>"
      "<th>VMs</th><th>Warm pool</th><th>Hot pool</th><th>Image version</th>"
      "<th>Runner version</th><th>Health</th></tr>";
  for (const json& c : s.value("classes", json::array())) {
    const json pool = c.value("pool", json::object());
    const json health = c.value("health", json::object());
    const bool healthy = health.value("healthy", true);
    std::string health_text = healthy ? "healthy" : "unhealthy: " + Str(health, "reason");
    if (!healthy && !Str(health, "fallbackClass").empty()) {
      health_text += "; jobs fall back to " + Str(health, "fallbackClass");
    }
    // Its circuit breaker paused it: its jobs wait until the pause ends.
    const bool paused = health.contains("pausedUntilMs") && health["pausedUntilMs"].is_number();
    if (paused) {
      const std::string pause =
          "paused by its circuit breaker until " +
          FormatRfc3339(TimePoint(Duration(health["pausedUntilMs"].get<int64_t>())));
      health_text = healthy ? pause : health_text + "; " + pause;
    }
    out += "<tr>" + Cell(Str(c, "label")) + Cell(Str(c, "image")) + Cell(Str(c, "size"), "num") +
           Cell(c["vms"].is_null() ? "not listed" : Counts(c["vms"])) +
           Cell("target " + Str(pool, "warmTarget") + Sizing(pool.value("warmSizing", json())) +
                "; " + Counts(pool.value("members", json()))) +
           Cell("target " + Str(pool, "hotTarget") + Sizing(pool.value("hotSizing", json())) +
                "; " + Counts(pool.value("hotMembers", json()))) +
           Cell(Str(health, "imageVersion")) + Cell(Str(health, "runnerVersion")) +
           Cell(health_text, healthy && !paused ? nullptr : "bad") + "</tr>";
  }
  return out + "</table>";
}

std::string JobName(const json& j) { return Str(j, "repository") + "#" + Str(j, "jobId"); }

std::string InFlight(const json& s) {
  const json jobs = s.value("jobsInFlight", json::array());
  std::string out = "<h2>Jobs in flight (" + std::to_string(jobs.size()) +
                    ")</h2><table id=\"in-flight\"><tr><th>Job</th><th>Class</th><th>Path</th>"
                    "<th>Segment</th><th>Age (s)</th><th>Way so far</th></tr>";
  for (const json& j : jobs) {
    const std::string path = j.value("path", std::string("unknown"));
    out += "<tr class=\"job\">" + Cell(JobName(j)) + Cell(Str(j, "class")) + Cell(path) +
           Cell(Str(j, "segment") + (j.value("stalled", false) ? " (stalled)" : "")) +
           Cell(Num(j.value("ageSeconds", 0.0), "%.0f"), "num") + "<td>" +
           Waterfall(j.value("milestones", json::object()), path, Int(s, "nowMs")) + "</td></tr>";
  }
  return out + "</table>";
}

// Jobs the webhook refused for the platform they ask for (x64, windows): no VM ever comes for them.
// Deliveries of another installation or repository (issue 55, item 3) get their own section.
std::string Refused(const json& s) {
  json arm64 = json::array();
  json foreign = json::array();
  for (const json& j : s.value("refusedJobs", json::array())) {
    (Str(j, "reason").rfind("foreign_", 0) == 0 ? foreign : arm64).push_back(j);
  }
  std::string out;
  if (!arm64.empty()) {
    out += "<h2 class=\"bad\">Jobs refused: not ARM64 (" + std::to_string(arm64.size()) +
           ")</h2><p>Lambda MicroVMs are ARM64 Linux only; these jobs ask for another "
           "architecture or OS, so no VM is launched for them.</p><table id=\"refused\">"
           "<tr><th>Job</th><th>Name</th><th>Label</th><th>Why</th></tr>";
    for (const json& j : arm64) {
      out += "<tr class=\"job\">" + Cell(JobName(j)) + Cell(Str(j, "jobName")) +
             Cell(Str(j, "label"), "bad") + Cell(Str(j, "reason")) + "</tr>";
    }
    out += "</table>";
  }
  if (!foreign.empty()) {
    out += "<h2 class=\"bad\">Deliveries refused: not this set's (" +
           std::to_string(foreign.size()) +
           ")</h2><p>Deliveries of another GitHub App installation or of a repository outside the "
           "set's; answered 200 and never launched.</p><table id=\"foreign\">"
           "<tr><th>Job</th><th>Name</th><th>Of</th><th>Why</th></tr>";
    for (const json& j : foreign) {
      out += "<tr class=\"job\">" + Cell(JobName(j)) + Cell(Str(j, "jobName")) +
             Cell(Str(j, "label"), "bad") + Cell(Str(j, "reason")) + "</tr>";
    }
    out += "</table>";
  }
  return out;
}

std::string Finished(const json& s) {
  const json jobs = s.value("finishedJobs", json::array());
  std::string out = "<h2>Last finished jobs (" + std::to_string(jobs.size()) +
                    ")</h2><table id=\"finished\"><tr><th>Job</th><th>Name</th><th>Class</th>"
                    "<th>Path</th><th>Outcome</th><th>Queued → started (s)</th>"
                    "<th>Webhook → end</th></tr>";
  for (const json& j : jobs) {
    const json m = j.value("milestones", json::object());
    const std::string failure = Str(j, "failure");
    const std::string outcome =
        failure.empty() ? Str(j, "conclusion") : "launch failed: " + failure;
    const int64_t received = Int(m, "received"), started = Int(m, "jobStarted");
    const std::string path = j.value("path", std::string("unknown"));
    out += "<tr class=\"job\">" + Cell(JobName(j)) + Cell(Str(j, "name")) + Cell(Str(j, "class")) +
           Cell(path) + Cell(outcome, failure.empty() ? nullptr : "bad") +
           Cell(received > 0 && started >= received ? Num((started - received) / 1e3) : "", "num") +
           "<td>" + Waterfall(m, path, 0) + "</td></tr>";
  }
  return out + "</table>";
}

// A histogram of one class and path as bars, each with its bucket's bound and count as a
// tooltip.
std::string Histogram(const json& buckets) {
  constexpr int kBar = 28;
  constexpr int kHeight = 40;
  int64_t most = 1;
  for (const json& b : buckets) most = std::max(most, Int(b, "count"));
  std::string svg = "<svg class=\"histogram\" width=\"" +
                    std::to_string(kBar * static_cast<int>(buckets.size())) + "\" height=\"" +
                    std::to_string(kHeight) + "\" role=\"img\">";
  int x = 0;
  for (const json& b : buckets) {
    const int64_t n = Int(b, "count");
    const int h = static_cast<int>(n * (kHeight - 2) / most);
    const std::string bound = b["le"].is_null() ? "more" : "≤ " + JsonText(b["le"]) + " s";
    svg += "<rect x=\"" + std::to_string(x + 2) + "\" y=\"" + std::to_string(kHeight - h) +
           "\" width=\"" + std::to_string(kBar - 4) + "\" height=\"" + std::to_string(h) +
           "\" fill=\"#495057\"><title>" + HtmlEscape(bound + ": " + std::to_string(n)) +
           "</title></rect>";
    x += kBar;
  }
  return svg + "</svg>";
}

std::string Latency(const json& s) {
  std::string out =
      "<h2>Queued → job started</h2><table id=\"latency\"><tr><th>Class</th><th>Path</th>"
      "<th>Jobs</th><th>p50 (s)</th><th>p95 (s)</th><th>≤5, 10, 20, 30, 60, 120, 300 s, more</th>"
      "</tr>";
  for (const json& l : s.value("latency", json::array())) {
    out += "<tr>" + Cell(Str(l, "class")) + Cell(Str(l, "path")) + Cell(Str(l, "count"), "num") +
           Cell(Num(l.value("p50Seconds", 0.0)), "num") +
           Cell(Num(l.value("p95Seconds", 0.0)), "num") + "<td>" +
           Histogram(l.value("histogram", json::array())) + "</td></tr>";
  }
  return out + "</table>";
}

// "2048" or "2048, 4096": the numbers of a list.
std::string Joined(const json& numbers) {
  std::string out;
  for (const json& n : numbers) out += (out.empty() ? "" : ", ") + JsonText(n);
  return out;
}

std::string Cost(const json& s) {
  const json cost = s.value("cost", json::object());
  std::string out =
      "<h2>What the jobs cost</h2><p>Per finished job: VM-seconds with the job, without one "
      "(starting, waiting, after it; a pool member's boot) and suspended, priced at the "
      "published rates for the memory of the image version it ran (docs/cost-and-quotas.md), "
      "beside a "
      "GitHub-hosted Linux 2-core runner's price for the same job.</p><table id=\"cost\"><tr>"
      "<th>Class</th><th>Path</th><th>Jobs</th><th>With job (s)</th><th>Without (s)</th>"
      "<th>Suspended (s)</th><th>MiB</th><th>MicroVMs</th><th>Hosted</th></tr>";
  for (const json& r : cost.value("rows", json::array())) {
    const json usd = r.value("usdPerJob", json());
    out += "<tr>" + Cell(Str(r, "class")) + Cell(Str(r, "path")) + Cell(Str(r, "jobs"), "num") +
           Cell(Num(r.value("withJobSeconds", 0.0)), "num") +
           Cell(Num(r.value("withoutJobSeconds", 0.0)), "num") +
           Cell(Num(r.value("suspendedSeconds", 0.0)), "num") +
           Cell(Joined(r.value("memoryMiB", json::array())), "num") +
           Cell(usd.is_number() ? FormatUsd(usd.get<double>()) : "unknown memory", "num") +
           Cell(FormatUsd(r.value("hostedUsdPerJob", 0.0)), "num") + "</tr>";
  }
  return out + "</table>";
}

std::string Sweeps(const json& s) {
  const json janitor = s.value("janitor", json::object());
  std::string out = "<h2>Janitor</h2><p>Every " + Str(janitor, "intervalSeconds") +
                    " s.</p><table id=\"sweeps\"><tr><th>Started</th><th>ms</th>"
                    "<th>Counters</th><th>Errors</th></tr>";
  for (const json& w : janitor.value("recentSweeps", json::array())) {
    std::string errors;
    for (const json& e : w.value("errors", json::array())) {
      errors += (errors.empty() ? "" : "; ") + e.get<std::string>();
    }
    out += "<tr>" + Cell(Time(Int(w, "startedAtMs"))) + Cell(Str(w, "durationMs"), "num") +
           Cell(w.value("paced", false) ? "paced: skipped to save GitHub's budget"
                                        : Counts(w.value("counters", json::object()))) +
           Cell(errors, errors.empty() ? nullptr : "bad") + "</tr>";
  }
  return out + "</table>";
}

std::string Queue(const json& s) {
  const json q = s.value("queue", json());
  if (!q.is_object()) return "";
  const json dead = q.value("deadLetters", json());
  const bool any_dead = dead.is_number() && dead.get<int64_t>() > 0;
  std::string out =
      "<h2>Job queue</h2><table id=\"queue\"><tr><th>Waiting</th><th>In flight</th>"
      "<th>Delayed</th><th>Dead letters</th></tr><tr>" +
      Cell(Str(q, "waiting"), "num") + Cell(Str(q, "inFlight"), "num") +
      Cell(Str(q, "delayed"), "num") +
      Cell(dead.is_number()                ? Str(q, "deadLetters")
           : q.contains("deadLetterError") ? "unreadable"
                                           : "no dead-letter queue",
           any_dead || !dead.is_number() ? "bad" : "num") +
      "</tr></table>";
  if (any_dead) {
    out += "<p class=\"bad\" id=\"dead-letters\">" +
           HtmlEscape(Str(q, "deadLetters") + " in " +
                      (Str(q, "deadLetterQueue").empty() ? std::string("the dead-letter queue")
                                                         : Str(q, "deadLetterQueue")) +
                      ": " + kDeadLettersFix) +
           "</p>";
  } else if (q.contains("deadLetterError")) {
    out += "<p class=\"bad\">" +
           HtmlEscape("The dead-letter queue " + Str(q, "deadLetterQueue") +
                      " could not be read: " + Str(q, "deadLetterError")) +
           "</p>";
  } else if (!dead.is_number()) {
    out +=
        "<p class=\"bad\">The queue has no dead-letter queue: an intent that always fails is "
        "received forever.</p>";
  }
  return out;
}

std::string Errors(const json& s) {
  const json errors = s.value("errors", json::array());
  if (errors.empty()) return "";
  std::string out = "<h2 class=\"bad\">What could not be read</h2><ul id=\"errors\">";
  for (const json& e : errors) out += "<li>" + HtmlEscape(e.get<std::string>()) + "</li>";
  return out + "</ul>";
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderStatusPage(const json& status, int refresh_seconds) {
  return Head(status, refresh_seconds) + Summary(status) + Errors(status) + Classes(status) +
         InFlight(status) + Refused(status) + Finished(status) + Latency(status) + Cost(status) +
         Queue(status) + Sweeps(status) + "</body></html>\n";
}

}  // namespace mvr::runnerset

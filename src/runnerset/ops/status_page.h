// The status page: BuildStatusReport's JSON as one self-contained HTML document (`mvr serve`'s GET
// /, `mvr status --html FILE`, `mvr demo --report FILE`). Inline SVG and an inline style sheet
// only: no script, nothing fetched (its Content-Security-Policy forbids both). Each class with its
// cap, VMs, pools and health; the jobs in flight and the last finished ones, each with a waterfall
// of its milestones coloured by path (hot, warm, cold); queued → job started per class and path
// (p50, p95, a histogram); the janitor's last sweeps; GitHub's rate budget; what failed to list.
// Every text that came from outside (job and repository names are attacker-controlled) is
// escaped. Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mvr::runnerset {

// `refresh_seconds` > 0: the page reloads itself that often (a <meta> refresh, not a script).
std::string RenderStatusPage(const nlohmann::json& status, int refresh_seconds);

// The page's Content-Security-Policy, also sent as a header by GET /.
inline constexpr char kStatusPagePolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'";

// `text` with &, <, >, " and ' as character references: safe in element text and quoted
// attribute values.
std::string HtmlEscape(const std::string& text);

}  // namespace mvr::runnerset

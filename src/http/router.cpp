#include "http/router.h"

#include "base/encoding.h"

namespace mvr::http {

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

void Router::Add(std::string method, const std::string& pattern, RouteHandler handler) {
  routes_.push_back(Route{std::move(method), SplitPath(pattern), std::move(handler)});
}

bool Router::Match(const Route& route, const std::vector<std::string>& parts, PathParams& out) {
  out.clear();
  for (size_t i = 0; i < route.segments.size(); ++i) {
    const std::string& seg = route.segments[i];
    bool param = seg.size() > 2 && seg.front() == '{' && seg.back() == '}';
    if (param && seg[seg.size() - 2] == '+') {
      if (i >= parts.size()) return false;
      std::string rest;
      for (size_t j = i; j < parts.size(); ++j) rest += (j > i ? "/" : "") + parts[j];
      out[seg.substr(1, seg.size() - 3)] = UriDecode(rest).value_or(rest);
      return true;
    }
    if (i >= parts.size()) return false;
    if (param) {
      out[seg.substr(1, seg.size() - 2)] = UriDecode(parts[i]).value_or(parts[i]);
    } else if (seg != parts[i]) {
      return false;
    }
  }
  return route.segments.size() == parts.size();
}

HttpResponse Router::Dispatch(const ServerRequest& request) const {
  std::vector<std::string> parts = SplitPath(request.path);
  PathParams params;
  bool path_matched = false;
  for (const auto& route : routes_) {
    if (!Match(route, parts, params)) continue;
    if (route.method == request.method) return route.handler(request, params);
    path_matched = true;
  }
  if (path_matched) {
    return HttpResponse::Json(405, R"({"message":"Method Not Allowed"})");
  }
  if (not_found_) return not_found_(request);
  return HttpResponse::Json(404, R"({"message":"Not Found"})");
}

}  // namespace mvr::http

// Router: maps (method, path pattern) to handlers. Patterns are literal segments and `{name}`
// segments ("/repos/{owner}/{repo}/actions/runners/{id}"); a `{name+}` last segment takes the rest
// of the path. Parameters arrive percent-decoded. No match → the not-found handler (404 JSON by
// default); a path that matches with another method → 405.
// Thread-safety: add routes before serving; Dispatch is then safe from many threads.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "http/server.h"

namespace mvr::http {

using PathParams = std::map<std::string, std::string>;
using RouteHandler = std::function<HttpResponse(const ServerRequest&, const PathParams&)>;

class Router {
 public:
  void Add(std::string method, const std::string& pattern, RouteHandler handler);
  void SetNotFound(Handler handler) { not_found_ = std::move(handler); }
  HttpResponse Dispatch(const ServerRequest& request) const;
  // A Handler that dispatches through this router (which must outlive it).
  Handler AsHandler() const {
    return [this](const ServerRequest& r) { return Dispatch(r); };
  }

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    RouteHandler handler;
  };
  static bool Match(const Route& route, const std::vector<std::string>& parts, PathParams& out);

  std::vector<Route> routes_;
  Handler not_found_;
};

std::vector<std::string> SplitPath(std::string_view path);

}  // namespace mvr::http

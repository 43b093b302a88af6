// ScaleSetApi's test API: the sets as the emulator holds them, and the scale-set faults.
#include "base/json_fields.h"
#include "emulate/github/model_json.h"
#include "emulate/github/rest_api.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "emulate/github/scaleset/scaleset_json.h"

namespace mvr::emulate::github {

using http::HttpResponse;
using http::PathParams;
using http::ServerRequest;
using nlohmann::json;

namespace {

HttpResponse ScaleSetBadBody(const std::string& what) {
  return JsonResponse(400, ErrorJson("Problems parsing JSON: " + what));
}

}  // namespace

void ScaleSetApi::AddControlRoutes(http::Router& router) {
  router.Add("GET", "/_emulator/scalesets", [this](const ServerRequest&, const PathParams&) {
    json list = json::array();
    for (const ScaleSetView& v : model_.ListScaleSetViews()) {
      json j = ScaleSetJson(v.scale_set, model_.options().base_url);
      j["scope"] = v.scale_set.scope.Name();
      j["has_session"] = v.has_session;
      j["foreign_session"] = v.foreign_session;
      j["max_capacity"] = v.max_capacity;
      j["messages_waiting"] = v.messages_waiting;
      j["phantom_assigned_jobs"] = v.phantom_assigned_jobs;
      list.push_back(std::move(j));
    }
    return JsonResponse(200, json{{"scale_sets", list}});
  });
  // {"lost_acknowledgements": P, "message_delay_ms": N}: both, as they are to be from now on.
  router.Add("POST", "/_emulator/scalesets/faults",
             [this](const ServerRequest& r, const PathParams&) { return Faults(r); });
  // Another listener takes the set's session (the holder's token answers 401 from now on).
  router.Add("POST", "/_emulator/scalesets/{id}/takeover",
             [this](const ServerRequest&, const PathParams& p) {
               auto id = ParseId(p.at("id"));
               Status s = id ? model_.TakeOverScaleSetSession(*id) : NotFound("no such scale set");
               if (!s.ok()) return ErrorResponse(s);
               logger_.Info("emulator: a scale set's session was taken over", {{"id", *id}});
               return JsonResponse(200, json{{"session", "taken over"}});
             });
  // {"phantom_assigned_jobs": N}: totalAssignedJobs shows N jobs more until set to 0 (ARC #4397).
  router.Add("POST", "/_emulator/scalesets/{id}/statistics",
             [this](const ServerRequest& r, const PathParams& p) {
               json body = json::parse(r.body, nullptr, false);
               if (!body.is_object())
                 return ScaleSetBadBody("expected {\"phantom_assigned_jobs\": N}");
               Result<int64_t> n =
                   JsonFields(body, "").IntInRange("phantom_assigned_jobs", 0, 100'000);
               if (!n.ok()) return ScaleSetBadBody(n.status().message());
               auto id = ParseId(p.at("id"));
               Status s = id ? model_.SetPhantomAssignedJobs(*id, static_cast<int>(*n))
                             : NotFound("no such scale set");
               if (!s.ok()) return ErrorResponse(s);
               return JsonResponse(200, json{{"phantom_assigned_jobs", *n}});
             });
}

HttpResponse ScaleSetApi::Faults(const ServerRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  const char* expected = "expected {\"lost_acknowledgements\": P, \"message_delay_ms\": N}";
  if (!body.is_object()) return ScaleSetBadBody(expected);
  double lost = 0;
  int64_t delay_ms = 0;
  for (const auto& [key, value] : body.items()) {
    if (key == "lost_acknowledgements" && value.is_number()) {
      lost = value.get<double>();
    } else if (key == "message_delay_ms" && value.is_number_integer()) {
      delay_ms = value.get<int64_t>();
    } else {
      return ScaleSetBadBody(expected);
    }
  }
  Status s = model_.SetScaleSetFaults(lost, Duration(delay_ms));
  if (!s.ok()) return ScaleSetBadBody(s.message());
  return JsonResponse(200, json{{"lost_acknowledgements", lost}, {"message_delay_ms", delay_ms}});
}

}  // namespace mvr::emulate::github

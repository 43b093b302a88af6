// Shared by the MicroVMs client tests: a client wired to a recording fake HttpClient, and helpers
// that read a sent request back through the service model (route, labels, query, body).
// Thread-safety: single-threaded tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "aws/fake_http.h"
#include "aws/microvms/microvms_client.h"
#include "aws/microvms/service_model.h"
#include "microvms_model.h"

namespace mvr::aws::testing {

class MicrovmsClientTest : public ::testing::Test {
 protected:
  MicrovmsClientTest()
      : credentials_(TestCredentials()),
        client_(Options(), MicrovmsClientDeps{http_, credentials_,
                                              Seam{clock_, sleeper_, random_, random_, logger_}}) {}

  static MicrovmsClientOptions Options() {
    MicrovmsClientOptions options;
    options.endpoint.url = "https://lambda.us-east-1.amazonaws.com";
    options.endpoint.region = "us-east-1";
    options.endpoint.signing_name = "lambda";
    return options;
  }

  // Answers every request with `status` and `body`.
  void AnswerAll(int status, const nlohmann::json& body) {
    http_.SetHandler([status, body](const http::HttpRequest&) -> Result<http::HttpResponse> {
      return http::HttpResponse::Json(status, body.dump());
    });
  }

  const http::HttpRequest& LastRequest() const { return http_.requests().back(); }

  FakeHttpClient http_;
  StaticCredentialsProvider credentials_;
  ManualClock clock_;
  SeededRandom random_{7};
  ManualSleeper sleeper_{clock_};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  MicrovmsClient client_;
};

// What the service would see: the operation the method and path route to, and the full input
// (body members plus uri labels, query parameters and headers under their member names).
struct SeenRequest {
  std::string operation;
  nlohmann::json input;
  std::string error;  // non-empty when the request does not fit the model
};

inline SeenRequest ReadBack(const http::HttpRequest& request) {
  SeenRequest seen;
  auto url = http::ParseUrl(request.url);
  if (!url.ok()) return {"", {}, "bad URL " + request.url};
  std::map<std::string, std::string> labels;
  const ServiceModel::Operation* op = Model().Route(request.method, url->path, &labels);
  if (op == nullptr) return {"", {}, "no operation for " + request.method + " " + url->path};
  seen.operation = op->name;
  seen.input = request.body.empty() ? nlohmann::json::object()
                                    : nlohmann::json::parse(request.body, nullptr, false);
  if (!seen.input.is_object()) return {op->name, {}, "body is not a JSON object"};
  const auto query = http::ParseQuery(url->query);
  for (const auto& b : Model().InputBindings(op->name)) {
    if (b.location == "body") continue;
    if (seen.input.contains(b.member)) seen.error = "location member " + b.member + " in the body";
    if (b.location == "uri") seen.input[b.member] = labels[b.location_name];
    if (b.location == "header") {
      if (auto v = request.headers.Get(b.location_name)) seen.input[b.member] = *v;
    }
    if (b.location == "querystring") {
      for (const auto& [name, value] : query) {
        if (name == b.location_name) seen.input[b.member] = value;
      }
    }
  }
  std::set<std::string> body_members;
  for (const auto& b : Model().InputBindings(op->name)) {
    if (b.location == "body") body_members.insert(b.member);
  }
  if (!request.body.empty()) {
    const nlohmann::json body = nlohmann::json::parse(request.body);
    for (const auto& [key, unused] : body.items()) {
      if (!body_members.count(key)) seen.error = "unknown body member " + key;
    }
  }
  for (const auto& [name, unused] : query) {
    bool known = false;
    for (const auto& b : Model().InputBindings(op->name)) {
      known = known || (b.location == "querystring" && b.location_name == name);
    }
    if (!known) seen.error = "unknown query parameter " + name;
  }
  return seen;
}

}  // namespace mvr::aws::testing

#include "emulate/github/traffic_record.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace mvr::emulate::github {

using nlohmann::json;

std::string RestExchangeLine(const http::ServerRequest& request,
                             const http::HttpResponse& response) {
  json j;
  j["kind"] = "rest";
  j["method"] = request.method;
  j["path"] = request.path;
  j["query"] = request.query;
  j["status"] = response.status;
  j["request_body"] = request.body;
  j["response_body"] = response.body;
  return JsonText(j);
}

std::string DeliveryLine(const Delivery& delivery) {
  json headers = json::object();
  for (const auto& [name, value] : delivery.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    headers[name] = lower.rfind("x-hub-signature", 0) == 0 ? "" : value;
  }
  json j;
  j["kind"] = "delivery";
  j["event"] = delivery.event;
  j["guid"] = delivery.guid;
  j["outcome"] = delivery.outcome;
  j["headers"] = headers;
  j["body"] = delivery.payload;
  return JsonText(j);
}

}  // namespace mvr::emulate::github

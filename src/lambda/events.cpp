#include "lambda/events.h"

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"
#include "base/numbers.h"

namespace mvr::lambda {
namespace {

using nlohmann::json;

Result<json> ParseObject(std::string_view event, const char* what) {
  json j = json::parse(event.begin(), event.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(std::string("the event is not a JSON object, so not ") + what);
  }
  return j;
}

const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

}  // namespace

Result<FunctionUrlRequest> ParseFunctionUrlEvent(std::string_view event) {
  constexpr const char* kWhat = "a Function URL request";
  MVR_ASSIGN_OR_RETURN(json j, ParseObject(event, kWhat));
  FunctionUrlRequest r;
  const json* ctx = Member(j, "requestContext");
  const json* http = ctx && ctx->is_object() ? Member(*ctx, "http") : nullptr;
  const json* method = http && http->is_object() ? Member(*http, "method") : nullptr;
  if (!method || !method->is_string()) {
    return InvalidArgument(
        "the event has no requestContext.http.method: not a Function URL request (payload "
        "format 2.0); point only the webhook's Function URL at this function");
  }
  r.method = method->get<std::string>();
  if (const json* p = Member(j, "rawPath"); p && p->is_string()) r.path = p->get<std::string>();
  if (const json* h = Member(j, "headers"); h && !h->is_null()) {
    if (!h->is_object()) return InvalidArgument("the event's headers is not an object");
    for (const auto& [name, value] : h->items()) {
      if (!value.is_string()) {
        return InvalidArgument("the event's header " + name + " is not a string");
      }
      r.headers.Add(name, value.get<std::string>());
    }
  }
  const json* body = Member(j, "body");
  if (body && !body->is_null()) {
    if (!body->is_string()) return InvalidArgument("the event's body is not a string");
    const json* b64 = Member(j, "isBase64Encoded");
    if (b64 && b64->is_boolean() && b64->get<bool>()) {
      Result<std::string> raw = Base64Decode(body->get_ref<const std::string&>());
      if (!raw.ok()) return InvalidArgument("the event's base64 body does not decode");
      r.body = std::move(*raw);
    } else {
      r.body = body->get<std::string>();
    }
  }
  return r;
}

std::string FunctionUrlResponse(int status, std::string_view body, std::string_view content_type) {
  return JsonText(json{{"statusCode", status},
                       {"headers", {{"content-type", content_type}}},
                       {"body", body},
                       {"isBase64Encoded", false}});
}

Result<std::vector<SqsRecord>> ParseSqsEvent(std::string_view event) {
  MVR_ASSIGN_OR_RETURN(json j, ParseObject(event, "an SQS batch"));
  const json* records = Member(j, "Records");
  if (!records || !records->is_array()) {
    return InvalidArgument(
        "the event has no Records array: not an SQS batch; the launcher takes its events only "
        "from the job queue's event source mapping");
  }
  std::vector<SqsRecord> out;
  for (size_t i = 0; i < records->size(); ++i) {
    const json& rec = (*records)[i];
    const std::string at = "Records[" + std::to_string(i) + "]";
    if (!rec.is_object()) return InvalidArgument(at + " is not an object");
    SqsRecord r;
    const json* id = Member(rec, "messageId");
    const json* receipt = Member(rec, "receiptHandle");
    const json* body = Member(rec, "body");
    if (!id || !id->is_string() || id->get_ref<const std::string&>().empty()) {
      return InvalidArgument(at + ".messageId is missing");
    }
    if (!receipt || !receipt->is_string()) return InvalidArgument(at + ".receiptHandle is missing");
    if (!body || !body->is_string()) return InvalidArgument(at + ".body is not a string");
    r.message_id = id->get<std::string>();
    r.receipt_handle = receipt->get<std::string>();
    r.body = body->get<std::string>();
    if (const json* attrs = Member(rec, "attributes"); attrs && attrs->is_object()) {
      if (const json* c = Member(*attrs, "ApproximateReceiveCount"); c && c->is_string()) {
        if (auto n = ParseInt64InRange(c->get_ref<const std::string&>(), 1, 1 << 30)) {
          r.receive_count = static_cast<int>(*n);
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string BatchItemFailures(const std::vector<std::string>& failed_message_ids) {
  json failures = json::array();
  for (const std::string& id : failed_message_ids) failures.push_back({{"itemIdentifier", id}});
  return JsonText(json{{"batchItemFailures", std::move(failures)}});
}

}  // namespace mvr::lambda

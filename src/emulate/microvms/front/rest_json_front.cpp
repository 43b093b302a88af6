#include "emulate/microvms/front/rest_json_front.h"

#include <cmath>

#include "aws/microvms/service_model.h"
#include "aws/signing/sigv4.h"
#include "base/json_text.h"
#include "base/utf8.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

// The model's error shape for a Status from the model or from validation.
std::string ErrorShapeFor(const Status& status, const aws::ServiceModel& sm) {
  if (!status.error_type().empty() && sm.ErrorStatus(status.error_type()) != 0) {
    return status.error_type();
  }
  switch (status.code()) {
    case Code::kInvalidArgument:
      return "ValidationException";
    case Code::kNotFound:
      return "ResourceNotFoundException";
    case Code::kConflict:
      return "ConflictException";
    case Code::kQuotaExceeded:
      return "ServiceQuotaExceededException";
    case Code::kThrottled:
      return "ThrottlingException";
    case Code::kUnauthorized:
      return "AccessDeniedException";
    default:
      return "InternalServerException";
  }
}

http::HttpResponse ErrorResponse(const Status& status, const aws::ServiceModel& sm) {
  const std::string shape = ErrorShapeFor(status, sm);
  int code = sm.ErrorStatus(shape);
  if (code == 0) code = 500;
  http::HttpResponse r =
      http::HttpResponse::Json(code, JsonText(json{{"message", status.message()}}));
  r.headers.Set("x-amzn-ErrorType", shape);
  if (status.retry_after()) {
    const int64_t seconds = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(status.retry_after()->count() / 1000.0)));
    r.headers.Set("Retry-After", std::to_string(seconds));
  }
  return r;
}

// The type of `member` of the operation's input shape ("integer", "list", ...).
std::string MemberType(const aws::ServiceModel& sm, const std::string& input_shape,
                       const std::string& member) {
  const json& shapes = sm.raw()["shapes"];
  if (!shapes.contains(input_shape)) return "";
  const json& members = shapes[input_shape].value("members", json::object());
  if (!members.contains(member)) return "";
  const std::string target = members[member].value("shape", "");
  return shapes.contains(target) ? shapes[target].value("type", "") : "";
}

Status Validation(const std::string& message) {
  return InvalidArgument(message).WithErrorType("ValidationException");
}

// SigV4 with one of `keys` (access key id -> secret), as the real service checks it.
Status VerifySignature(const http::ServerRequest& request,
                       const std::map<std::string, std::string>& keys, TimePoint now) {
  Status verified = aws::VerifyRequest(
      request,
      [&keys](const std::string& key) -> std::optional<std::string> {
        auto it = keys.find(key);
        if (it == keys.end()) return std::nullopt;
        return it->second;
      },
      now);
  if (verified.ok()) return verified;
  return Unauthorized("request signature rejected: " + verified.message())
      .WithErrorType("AccessDeniedException");
}

http::HttpResponse UnknownOperation(const http::ServerRequest& request) {
  http::HttpResponse r = http::HttpResponse::Json(
      404, JsonText(json{{"message", "no Lambda MicroVMs operation for " + request.method + " " +
                                         request.path}}));
  r.headers.Set("x-amzn-ErrorType", "UnknownOperationException");
  return r;
}

// Text from the path, query and headers is not checked by the JSON parser: refuse bytes that are
// not UTF-8 here, before they reach the model (whose JSON would throw on them).
Status CheckPathAndQuery(const http::ServerRequest& request) {
  if (!IsValidUtf8(request.path) || !IsValidUtf8(request.query)) {
    return Validation("the request path or query is not valid UTF-8");
  }
  for (const auto& [k, v] : request.params) {
    if (!IsValidUtf8(k) || !IsValidUtf8(v))
      return Validation("a query parameter is not valid UTF-8");
  }
  return Status::Ok();
}

// The operation's input as the model takes it: the body's members merged with the URI labels,
// query parameters and headers the service model binds to members.
Result<json> ReadInput(const aws::ServiceModel& sm, const aws::ServiceModel::Operation& op,
                       const http::ServerRequest& request,
                       const std::map<std::string, std::string>& labels) {
  MVR_RETURN_IF_ERROR(CheckPathAndQuery(request));
  json input = json::object();
  if (!request.body.empty()) {
    input = json::parse(request.body, nullptr, false);
    if (input.is_discarded() || !input.is_object()) {
      return Validation("the request body is not a JSON object");
    }
  }
  for (const aws::ServiceModel::Binding& b : sm.InputBindings(op.name)) {
    if (b.location == "uri") {
      auto it = labels.find(b.location_name);
      if (it != labels.end()) input[b.member] = it->second;
    } else if (b.location == "querystring") {
      const bool is_list = MemberType(sm, op.input_shape, b.member) == "list";
      for (const auto& [k, v] : request.params) {
        if (k != b.location_name) continue;
        if (is_list) {
          input[b.member].push_back(v);
        } else {
          input[b.member] = v;
        }
      }
    } else if (b.location == "header") {
      if (auto v = request.headers.Get(b.location_name)) {
        if (!IsValidUtf8(*v))
          return Validation("header " + b.location_name + " is not valid UTF-8");
        input[b.member] = *v;
      }
    }
  }
  return input;
}

http::HttpResponse Success(const aws::ServiceModel::Operation& op, const json& output) {
  http::HttpResponse r;
  r.status = op.success_code;
  if (op.success_code != 204) {
    r.headers.Set("Content-Type", "application/json");
    r.body = JsonText(output);
  }
  return r;
}

}  // namespace

ApiExchange ServeRestJson(const http::ServerRequest& request, const RestJsonFrontOptions& options,
                          TimePoint now, const ModelInvoker& invoke, const Logger& logger) {
  const aws::ServiceModel& sm = aws::ServiceModel::LambdaMicrovms();
  ApiExchange exchange;
  if (!options.sigv4_keys.empty()) {
    Status verified = VerifySignature(request, options.sigv4_keys, now);
    if (!verified.ok()) {
      exchange.response = ErrorResponse(verified, sm);
      return exchange;
    }
  }
  std::map<std::string, std::string> labels;
  const aws::ServiceModel::Operation* op = sm.Route(request.method, request.path, &labels);
  if (op == nullptr) {
    exchange.response = UnknownOperation(request);
    return exchange;
  }
  exchange.operation = op->name;
  Result<json> input = ReadInput(sm, *op, request, labels);
  if (!input.ok()) {
    exchange.response = ErrorResponse(input.status(), sm);
    return exchange;
  }
  if (input->contains("microvmIdentifier") && (*input)["microvmIdentifier"].is_string()) {
    exchange.microvm_id = (*input)["microvmIdentifier"];
  }
  Status valid = sm.ValidateInput(op->name, *input);
  if (!valid.ok()) {
    exchange.response = ErrorResponse(Validation(valid.message()), sm);
    return exchange;
  }
  if (options.iam_policies != nullptr) {
    Status allowed = options.iam_policies->Authorize(request, op->name, *input);
    if (!allowed.ok()) {
      exchange.response = ErrorResponse(allowed, sm);
      return exchange;
    }
  }

  Result<json> output = Status();
  try {
    output = invoke(op->name, *input);
  } catch (const std::exception&) {
    // A bug, not the caller's doing; the answer must not carry the exception's text.
    logger.Error("the model threw on a request", {{"operation", op->name}});
    exchange.response = ErrorResponse(Internal("the emulator could not process this request"), sm);
    return exchange;
  }
  if (!output.ok()) {
    exchange.response = ErrorResponse(output.status(), sm);
    return exchange;
  }
  if (output->contains("microvmId") && (*output)["microvmId"].is_string()) {
    exchange.microvm_id = (*output)["microvmId"];
  }
  Status fits = sm.ValidateOutput(op->name, *output);
  if (!fits.ok()) {
    logger.Error("emulator output does not fit the service model",
                 {{"operation", op->name}, {"problem", fits.message()}});
  }
  exchange.response = Success(*op, *output);
  return exchange;
}

}  // namespace mvr::emulate::microvms

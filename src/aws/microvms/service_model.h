// ServiceModel: an AWS service model (botocore service-2.json: rest-json, json, rest-xml or query)
// read at run time, used to route, bind and validate requests and responses as the model says. The
// Lambda MicroVMs model is embedded in the binary at build time
// (models/lambda-microvms/service-2.json). Thread-safety: immutable after Parse; const methods are
// safe from many threads at once.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace mvr::aws {

class ServiceModel {
 public:
  // The embedded Lambda MicroVMs model (2025-09-09), parsed once on first use.
  static const ServiceModel& LambdaMicrovms();
  // Parses a service-2.json document. Errors: InvalidArgument when it is not JSON or lacks
  // "operations"/"shapes", or an operation names a shape that does not exist.
  static Result<ServiceModel> Parse(std::string_view json);

  ServiceModel(ServiceModel&&) noexcept;
  ServiceModel& operator=(ServiceModel&&) noexcept;
  ~ServiceModel();

  struct Operation {
    std::string name;
    std::string method;       // "POST"
    std::string request_uri;  // "/2025-09-09/microvms/{microvmIdentifier}" (no query part)
    // The requestUri's query part: "?uploads" -> {"uploads", nullopt}, "?list-type=2" ->
    // {"list-type", "2"}. A request names this operation only when it carries each of them.
    std::vector<std::pair<std::string, std::optional<std::string>>> query_literals;
    int success_code = 200;   // "responseCode", 200 when the model gives none
    std::string input_shape;  // empty when the operation takes no input
    std::string output_shape;
    std::vector<std::string> errors;  // error shape names
  };
  // nullptr when the model has no such operation.
  const Operation* FindOperation(std::string_view name) const;
  // Which operation `method` + `path` names. `path` is the path as sent, still percent-encoded
  // (http::ServerRequest::raw_path; a query part is ignored), so that an encoded '/' inside a
  // label does not split it. Literal segments win over labels when two operations match. On a
  // match, `labels` (if given) receives each URI label decoded ("microvmIdentifier" ->
  // "mvm-123"). nullptr when nothing matches.
  const Operation* Route(std::string_view method, std::string_view path,
                         std::map<std::string, std::string>* labels) const;
  // Route for REST models whose operations share a path and differ by query or header (S3): only
  // operations whose query literals `params` all carry are candidates; among them the one with
  // the most query literals wins, then the one with the most required querystring/header members
  // present (UploadPart's partNumber/uploadId over PutObject), then the one lacking the fewest
  // (PutObject over CopyObject without x-amz-copy-source), then the most literal path segments.
  const Operation* RouteWithQuery(std::string_view method, std::string_view path,
                                  const std::vector<std::pair<std::string, std::string>>& params,
                                  const std::vector<std::string>& header_names,
                                  std::map<std::string, std::string>* labels) const;

  // metadata.protocol: "rest-json", "json", "rest-xml" or "query".
  const std::string& protocol() const;

  // Checks a request's full input against the operation's input shape: the JSON body members plus
  // the uri/querystring/header members merged in under their member names (their values may be
  // strings, as they arrive on the wire: "50" passes for an integer). Checked: required members,
  // types, string length (Unicode code points, as Smithy counts), patterns (where the regex
  // dialect allows; unanchored search, as Smithy), integer ranges, enums, list and map lengths,
  // unions (exactly one member), nested structures, lists and maps. Timestamps in the body are
  // epoch seconds (a JSON number) in the JSON protocols (the MicroVMs model sets no
  // timestampFormat) and ISO 8601 text in rest-xml and query, their defaults.
  // Unknown members are ignored, as rest-json services do. Values of sensitive shapes never
  // appear in messages.
  // Errors: InvalidArgument naming the field path, e.g.
  //   "runHookPayload: length 5000 exceeds the maximum of 4096",
  //   "idlePolicy.maxIdleDurationSeconds: 30 is below the minimum of 60",
  //   "allowedPorts[0].range.endPort: missing required member";
  // NotFound when the model has no such operation.
  Status ValidateInput(std::string_view operation, const nlohmann::json& input) const;
  // Same, for an operation's output body (a response must fit the model).
  Status ValidateOutput(std::string_view operation, const nlohmann::json& output) const;
  // Same, for any shape by name (e.g. an error shape).
  Status ValidateShape(std::string_view shape, const nlohmann::json& value) const;

  // Where each input member travels. `location` is "uri" (location_name = the label),
  // "querystring" (the parameter name), "header" (the header name) or "body" (location_name =
  // the member name). Empty when the operation is unknown or takes no input.
  struct Binding {
    std::string member, location, location_name;
  };
  std::vector<Binding> InputBindings(std::string_view operation) const;

  // HTTP status of an error shape from the model ("ServiceQuotaExceededException" -> 402,
  // "ThrottlingException" -> 429); 0 when the shape is not an error shape of the model.
  int ErrorStatus(std::string_view error_shape) const;
  // Members marked "idempotencyToken" in an operation's input ("clientToken").
  std::vector<std::string> IdempotencyTokenMembers(std::string_view operation) const;

  const nlohmann::json& raw() const;

  // Defined in service_model_impl.h, for the model's own source files only.
  struct Impl;

 private:
  explicit ServiceModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The embedded copy of models/lambda-microvms/service-2.json (generated at build time).
std::string_view EmbeddedLambdaMicrovmsModel();

}  // namespace mvr::aws

#include "aws/microvms/microvms_client.h"

#include <utility>

#include "aws/microvms/microvms_errors.h"
#include "aws/microvms/microvms_json.h"
#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

// Limits the service documents that are stricter than the model's shapes.
constexpr size_t kRunHookPayloadMaxBytes = 4096;
constexpr int kAuthTokenMaxMinutes = 60;

// A querystring, header or label value as text.
std::optional<std::string> ScalarText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_number()) return JsonText(value);
  return std::nullopt;
}

template <typename T>
Result<T> Annotated(Result<T> result, const std::string& operation) {
  if (!result.ok()) return result.status().Annotate(operation);
  return result;
}

}  // namespace

Result<http::HttpRequest> BindMicrovmsRequest(const ServiceModel& model,
                                              const std::string& endpoint_url,
                                              const std::string& operation, const json& input) {
  const ServiceModel::Operation* op = model.FindOperation(operation);
  if (op == nullptr) return InvalidArgument("the MicroVMs model has no operation " + operation);
  std::string path = op->request_uri;
  std::vector<std::pair<std::string, std::string>> query;
  http::HttpRequest request;
  json body = json::object();
  bool has_body_members = false;
  for (const ServiceModel::Binding& b : model.InputBindings(operation)) {
    if (b.location == "body") has_body_members = true;
    auto it = input.find(b.member);
    const bool present = it != input.end() && !it->is_null();
    if (b.location == "uri") {
      std::optional<std::string> text = present ? ScalarText(*it) : std::nullopt;
      if (!text || text->empty()) {
        return InvalidArgument(b.member + ": required member is missing");
      }
      for (const bool greedy : {false, true}) {
        const std::string placeholder = "{" + b.location_name + (greedy ? "+}" : "}");
        size_t at = path.find(placeholder);
        if (at != std::string::npos) {
          path.replace(at, placeholder.size(), UriEncode(*text, /*encode_slash=*/!greedy));
        }
      }
    } else if (!present) {
      continue;
    } else if (b.location == "querystring") {
      const json items = it->is_array() ? *it : json::array({*it});
      for (const json& item : items) {
        if (auto text = ScalarText(item)) query.emplace_back(b.location_name, *text);
      }
    } else if (b.location == "header") {
      if (auto text = ScalarText(*it)) request.headers.Set(b.location_name, *text);
    } else {
      body[b.member] = *it;
    }
  }
  std::string base = endpoint_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  request.method = op->method;
  request.url = base + path + (query.empty() ? "" : "?" + http::BuildQuery(query));
  if (has_body_members) {
    request.body = JsonText(body);
    request.headers.Set("Content-Type", "application/json");
  }
  return request;
}

MicrovmsClient::MicrovmsClient(MicrovmsClientOptions options, MicrovmsClientDeps deps)
    : options_(std::move(options)), deps_(deps), model_(ServiceModel::LambdaMicrovms()) {
  if (options_.endpoint.signing_name.empty()) options_.endpoint.signing_name = "lambda";
}

std::string MicrovmsClient::NewClientToken() {
  std::string bytes = deps_.seam.secure_random.Bytes(16);
  bytes[6] = static_cast<char>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<char>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  const std::string hex = HexEncode(bytes);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

Result<json> MicrovmsClient::Call(const std::string& operation, const json& input,
                                  const std::vector<const Secret*>& secrets) {
  Status valid = model_.ValidateInput(operation, input);
  if (!valid.ok()) return valid.Annotate(operation);
  auto bound = BindMicrovmsRequest(model_, options_.endpoint.url, operation, input);
  if (!bound.ok()) return bound.status().Annotate(operation);
  http::HttpRequest request = std::move(bound).value();
  request.timeout = options_.timeout;
  auto creds = deps_.credentials.Get();
  if (!creds.ok()) return creds.status().Annotate(operation + ": AWS credentials");
  SigningScope scope{options_.endpoint.region, options_.endpoint.signing_name};
  MVR_RETURN_IF_ERROR(SignRequest(request, *creds, scope, deps_.seam.clock.Now()));
  auto response = deps_.http.Send(request);
  if (!response.ok()) return response.status().Annotate(operation);
  if (response->status < 200 || response->status > 299) {
    return MapMicrovmsError(model_, operation, *response, secrets);
  }
  if (response->body.empty()) return json::object();
  json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Internal(operation + ": malformed response: the body is not a JSON object (HTTP " +
                    std::to_string(response->status) + ")");
  }
  return body;
}

Result<Microvm> MicrovmsClient::RunMicrovm(const RunMicrovmRequest& request) {
  if (request.run_hook_payload.size() > kRunHookPayloadMaxBytes) {
    return InvalidArgument(
        "RunMicrovm: runHookPayload: " + std::to_string(request.run_hook_payload.size()) +
        " bytes exceeds the limit of 4096 bytes");
  }
  RunMicrovmRequest r = request;
  if (r.client_token.empty()) r.client_token = NewClientToken();
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("RunMicrovm", RunMicrovmInput(r), {&request.run_hook_payload}));
  return Annotated(ParseMicrovm(body), "RunMicrovm");
}

Result<Microvm> MicrovmsClient::GetMicrovm(const std::string& id) {
  MVR_ASSIGN_OR_RETURN(json body, Call("GetMicrovm", {{"microvmIdentifier", id}}));
  return Annotated(ParseMicrovm(body), "GetMicrovm");
}

Result<ListMicrovmsResponse> MicrovmsClient::ListMicrovms(const ListMicrovmsRequest& request) {
  MVR_ASSIGN_OR_RETURN(json body, Call("ListMicrovms", ListMicrovmsInput(request)));
  return Annotated(ParseListMicrovms(body), "ListMicrovms");
}

Status MicrovmsClient::SuspendMicrovm(const std::string& id) {
  return Call("SuspendMicrovm", {{"microvmIdentifier", id}}).status();
}

Status MicrovmsClient::ResumeMicrovm(const std::string& id) {
  return Call("ResumeMicrovm", {{"microvmIdentifier", id}}).status();
}

Status MicrovmsClient::TerminateMicrovm(const std::string& id) {
  return Call("TerminateMicrovm", {{"microvmIdentifier", id}}).status();
}

Result<MicrovmAuthToken> MicrovmsClient::CreateMicrovmAuthToken(
    const CreateMicrovmAuthTokenRequest& request) {
  // The model only says >= 1; the service documents a maximum of 60 minutes.
  if (request.expiration_in_minutes > kAuthTokenMaxMinutes) {
    return InvalidArgument("CreateMicrovmAuthToken: expirationInMinutes: " +
                           std::to_string(request.expiration_in_minutes) +
                           " exceeds the maximum of 60");
  }
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("CreateMicrovmAuthToken", CreateMicrovmAuthTokenInput(request)));
  return Annotated(ParseMicrovmAuthToken(body), "CreateMicrovmAuthToken");
}

namespace {
std::vector<const Secret*> EnvironmentSecrets(const ImageConfiguration& config) {
  std::vector<const Secret*> secrets;
  for (const auto& [name, value] : config.environment_variables) secrets.push_back(&value);
  return secrets;
}
}  // namespace

Result<MicrovmImageChange> MicrovmsClient::CreateMicrovmImage(
    const CreateMicrovmImageRequest& request) {
  CreateMicrovmImageRequest r = request;
  if (r.client_token.empty()) r.client_token = NewClientToken();
  MVR_ASSIGN_OR_RETURN(json body, Call("CreateMicrovmImage", CreateMicrovmImageInput(r),
                                       EnvironmentSecrets(request.config)));
  return Annotated(ParseMicrovmImageChange(body), "CreateMicrovmImage");
}

Result<MicrovmImage> MicrovmsClient::GetMicrovmImage(const std::string& image_identifier) {
  MVR_ASSIGN_OR_RETURN(json body, Call("GetMicrovmImage", {{"imageIdentifier", image_identifier}}));
  return Annotated(ParseMicrovmImage(body), "GetMicrovmImage");
}

Result<MicrovmImageChange> MicrovmsClient::UpdateMicrovmImage(
    const UpdateMicrovmImageRequest& request) {
  UpdateMicrovmImageRequest r = request;
  if (r.client_token.empty()) r.client_token = NewClientToken();
  MVR_ASSIGN_OR_RETURN(json body, Call("UpdateMicrovmImage", UpdateMicrovmImageInput(r),
                                       EnvironmentSecrets(request.config)));
  return Annotated(ParseMicrovmImageChange(body), "UpdateMicrovmImage");
}

Result<ListMicrovmImagesResponse> MicrovmsClient::ListMicrovmImages(
    const ListMicrovmImagesRequest& request) {
  MVR_ASSIGN_OR_RETURN(json body, Call("ListMicrovmImages", ListMicrovmImagesInput(request)));
  return Annotated(ParseListMicrovmImages(body), "ListMicrovmImages");
}

Result<ListMicrovmImageVersionsResponse> MicrovmsClient::ListMicrovmImageVersions(
    const ListMicrovmImageVersionsRequest& request) {
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("ListMicrovmImageVersions", ListMicrovmImageVersionsInput(request)));
  return Annotated(ParseListMicrovmImageVersions(body), "ListMicrovmImageVersions");
}

Result<MicrovmImageVersion> MicrovmsClient::GetMicrovmImageVersion(
    const std::string& image_identifier, const std::string& image_version) {
  MVR_ASSIGN_OR_RETURN(
      json body, Call("GetMicrovmImageVersion",
                      {{"imageIdentifier", image_identifier}, {"imageVersion", image_version}}));
  return Annotated(ParseMicrovmImageVersion(body), "GetMicrovmImageVersion");
}

Result<MicrovmImageVersion> MicrovmsClient::UpdateMicrovmImageVersion(
    const UpdateMicrovmImageVersionRequest& request) {
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("UpdateMicrovmImageVersion", UpdateMicrovmImageVersionInput(request)));
  return Annotated(ParseMicrovmImageVersion(body), "UpdateMicrovmImageVersion");
}

Result<DeleteMicrovmImageVersionResponse> MicrovmsClient::DeleteMicrovmImageVersion(
    const std::string& image_identifier, const std::string& image_version) {
  MVR_ASSIGN_OR_RETURN(
      json body, Call("DeleteMicrovmImageVersion",
                      {{"imageIdentifier", image_identifier}, {"imageVersion", image_version}}));
  return Annotated(ParseDeleteMicrovmImageVersion(body), "DeleteMicrovmImageVersion");
}

Result<ListMicrovmImageBuildsResponse> MicrovmsClient::ListMicrovmImageBuilds(
    const ListMicrovmImageBuildsRequest& request) {
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("ListMicrovmImageBuilds", ListMicrovmImageBuildsInput(request)));
  return Annotated(ParseListMicrovmImageBuilds(body), "ListMicrovmImageBuilds");
}

Result<MicrovmImageBuild> MicrovmsClient::GetMicrovmImageBuild(const std::string& image_identifier,
                                                               const std::string& image_version,
                                                               const std::string& build_id) {
  MVR_ASSIGN_OR_RETURN(json body,
                       Call("GetMicrovmImageBuild", {{"imageIdentifier", image_identifier},
                                                     {"imageVersion", image_version},
                                                     {"buildId", build_id}}));
  return Annotated(ParseMicrovmImageBuild(body), "GetMicrovmImageBuild");
}

}  // namespace mvr::aws

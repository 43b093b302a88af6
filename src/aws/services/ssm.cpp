#include "aws/services/ssm.h"

namespace mvr::aws {

SsmClient::SsmClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                     CredentialsProvider& credentials, Seam seam)
    : rpc_(
          [&] {
            JsonServiceConfig config;
            config.endpoint = endpoint;
            config.target_prefix = "AmazonSSM";
            config.content_type = "application/x-amz-json-1.1";
            config.timeout = Duration(10'000);
            return config;
          }(),
          http, credentials, seam) {}

Result<Secret> SsmClient::GetParameter(const std::string& name) {
  if (name.empty()) return InvalidArgument("SSM GetParameter: the parameter name is empty");
  JsonCallResult r = rpc_.Call("GetParameter", {{"Name", name}, {"WithDecryption", true}});
  if (!r.status.ok()) {
    const std::string& type = r.status.error_type();
    if (type == "ParameterNotFound" || type == "ParameterVersionNotFound") {
      return NotFound("SSM parameter " + name + " does not exist (" + type + ")");
    }
    // The service's message names the parameter and the denied action, never its value.
    return Status(r.status.code(), "SSM GetParameter " + name + ": " + r.status.message());
  }
  const nlohmann::json& body = r.body;
  auto p = body.find("Parameter");
  if (p == body.end() || !p->is_object()) {
    return Internal("SSM GetParameter " + name + ": the answer has no Parameter object");
  }
  auto v = p->find("Value");
  if (v == p->end() || !v->is_string()) {
    return Internal("SSM GetParameter " + name + ": the answer's Parameter has no string Value");
  }
  return Secret(v->get<std::string>());
}

}  // namespace mvr::aws

// JSON for the MicroVM operations (Run, Get, List, auth tokens). Image operations are in
// microvms_image_json.cpp.
#include "aws/microvms/microvms_json.h"

#include <utility>

#include "aws/microvms/microvms_json_reader.h"

namespace mvr::aws {

using nlohmann::json;

void PutIfSet(json& out, const char* name, const std::string& value) {
  if (!value.empty()) out[name] = value;
}

namespace {

void PutListIfSet(json& out, const char* name, const std::vector<std::string>& values) {
  if (!values.empty()) out[name] = values;
}

std::optional<IdlePolicy> ReadIdlePolicy(JsonReader& r) {
  const json* v = r.Object("idlePolicy");
  if (v == nullptr) return std::nullopt;
  JsonReader p = r.Nested(*v, "idlePolicy");
  IdlePolicy policy;
  policy.max_idle_duration_seconds = static_cast<int>(p.Int("maxIdleDurationSeconds").value_or(0));
  policy.suspended_duration_seconds =
      static_cast<int>(p.Int("suspendedDurationSeconds").value_or(0));
  policy.auto_resume_enabled = p.Bool("autoResumeEnabled").value_or(false);
  p.Finish().IgnoreError();  // recorded in the shared error
  return policy;
}

MicrovmSummary ReadSummary(JsonReader& r) {
  MicrovmSummary s;
  r.Require("microvmId");
  r.Require("state");
  s.microvm_id = r.String("microvmId");
  s.state = ParseMicrovmState(r.String("state"));
  s.image_arn = r.String("imageArn");
  s.image_version = r.String("imageVersion");
  s.started_at = r.Time("startedAt");
  return s;
}

}  // namespace

json EpochSecondsJson(TimePoint t) {
  const int64_t ms = t.time_since_epoch().count();
  if (ms % 1000 == 0) return json(ms / 1000);
  return json(static_cast<double>(ms) / 1000.0);
}

json RunMicrovmInput(const RunMicrovmRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  PutIfSet(in, "imageVersion", r.image_version);
  PutIfSet(in, "executionRoleArn", r.execution_role_arn);
  if (r.idle_policy) {
    in["idlePolicy"] = {{"maxIdleDurationSeconds", r.idle_policy->max_idle_duration_seconds},
                        {"suspendedDurationSeconds", r.idle_policy->suspended_duration_seconds},
                        {"autoResumeEnabled", r.idle_policy->auto_resume_enabled}};
  }
  if (r.logging) {
    in["logging"] = LoggingJson(*r.logging);
  } else if (!r.log_group.empty()) {
    MicrovmLogging logging;
    logging.log_group = r.log_group;
    in["logging"] = LoggingJson(logging);
  }
  if (!r.run_hook_payload.empty()) in["runHookPayload"] = r.run_hook_payload.Reveal();
  if (r.maximum_duration_in_seconds) {
    in["maximumDurationInSeconds"] = *r.maximum_duration_in_seconds;
  }
  PutIfSet(in, "clientToken", r.client_token);
  PutListIfSet(in, "ingressNetworkConnectors", r.ingress_network_connectors);
  PutListIfSet(in, "egressNetworkConnectors", r.egress_network_connectors);
  return in;
}

json ListMicrovmsInput(const ListMicrovmsRequest& r) {
  json in = json::object();
  PutIfSet(in, "imageIdentifier", r.image_identifier);
  PutIfSet(in, "imageVersion", r.image_version);
  if (r.max_results) in["maxResults"] = *r.max_results;
  PutIfSet(in, "nextToken", r.next_token);
  return in;
}

json CreateMicrovmAuthTokenInput(const CreateMicrovmAuthTokenRequest& r) {
  json in = json::object();
  PutIfSet(in, "microvmIdentifier", r.microvm_identifier);
  in["expirationInMinutes"] = r.expiration_in_minutes;
  json ports = json::array();
  for (const PortSpecification& spec : r.allowed_ports) {
    json p = json::object();
    if (spec.port) p["port"] = *spec.port;
    if (spec.start_port || spec.end_port) {
      p["range"] = json::object();
      if (spec.start_port) p["range"]["startPort"] = *spec.start_port;
      if (spec.end_port) p["range"]["endPort"] = *spec.end_port;
    }
    if (spec.all_ports) p["allPorts"] = json::object();
    ports.push_back(std::move(p));
  }
  in["allowedPorts"] = std::move(ports);
  return in;
}

Result<Microvm> ParseMicrovm(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  Microvm vm;
  r.Require("microvmId");
  r.Require("state");
  vm.microvm_id = r.String("microvmId");
  vm.state = ParseMicrovmState(r.String("state"));
  vm.endpoint = r.String("endpoint");
  vm.image_arn = r.String("imageArn");
  vm.image_version = r.String("imageVersion");
  vm.execution_role_arn = r.String("executionRoleArn");
  vm.idle_policy = ReadIdlePolicy(r);
  vm.maximum_duration_in_seconds = static_cast<int>(r.Int("maximumDurationInSeconds").value_or(0));
  vm.started_at = r.Time("startedAt");
  vm.terminated_at = r.Time("terminatedAt");
  vm.state_reason = r.String("stateReason");
  vm.ingress_network_connectors = r.Strings("ingressNetworkConnectors");
  vm.egress_network_connectors = r.Strings("egressNetworkConnectors");
  MVR_RETURN_IF_ERROR(r.Finish());
  return vm;
}

Result<ListMicrovmsResponse> ParseListMicrovms(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  ListMicrovmsResponse out;
  r.Require("items");
  out.next_token = r.String("nextToken");
  if (const json* items = r.Array("items")) {
    for (size_t i = 0; i < items->size(); ++i) {
      JsonReader item = r.Nested((*items)[i], "items[" + std::to_string(i) + "]");
      out.items.push_back(ReadSummary(item));
      item.Finish().IgnoreError();
    }
  }
  MVR_RETURN_IF_ERROR(r.Finish());
  return out;
}

Result<MicrovmAuthToken> ParseMicrovmAuthToken(const json& body, bool strict) {
  JsonReader r(body, "", strict);
  MicrovmAuthToken token;
  r.Require("authToken");
  token.auth_token = r.SecretMap("authToken");
  MVR_RETURN_IF_ERROR(r.Finish());
  if (token.ProxyAuth().empty()) {
    return Internal("malformed response: authToken has no non-empty X-aws-proxy-auth value");
  }
  return token;
}

}  // namespace mvr::aws

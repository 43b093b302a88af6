#include "emulate/microvms/front/iam_authorization.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

constexpr char kLambdaService[] = "lambda.amazonaws.com";

std::string StringMember(const json& input, const char* name) {
  auto it = input.find(name);
  return it != input.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// An identifier that is already an ARN is used as it is; a name or id becomes `prefix` + it.
std::string ArnOf(const std::string& identifier, const std::string& prefix) {
  if (identifier.rfind("arn:", 0) == 0) return identifier;
  return prefix + identifier;
}

aws::IamRequest LambdaRequest(const std::string& operation, std::string resource,
                              const std::string& region) {
  return aws::IamRequest{
      "lambda:" + operation, std::move(resource), {{"aws:requestedregion", {region}}}};
}

aws::IamRequest PassRole(const std::string& role_arn, const std::string& region) {
  return aws::IamRequest{
      "iam:PassRole",
      role_arn,
      {{"aws:requestedregion", {region}}, {"iam:passedtoservice", {kLambdaService}}}};
}

Status Denied(const std::string& message) {
  return Unauthorized(message).WithErrorType("AccessDeniedException");
}

Result<std::vector<aws::IamPolicy>> ParseDocuments(const json& list, const std::string& where) {
  if (!list.is_array() || list.empty()) {
    return InvalidArgument(where + " must be a non-empty list of IAM policy documents");
  }
  std::vector<aws::IamPolicy> out;
  for (size_t i = 0; i < list.size(); ++i) {
    MVR_ASSIGN_OR_RETURN(
        aws::IamPolicy p,
        aws::IamPolicy::Parse(list[i], where + " policy " + std::to_string(i + 1)));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<aws::IamRequest> MicrovmsIamRequests(const std::string& operation, const json& input,
                                                 const std::string& region,
                                                 const std::string& account_id) {
  const std::string base = "arn:aws:lambda:" + region + ":" + account_id + ":";
  const std::string vm = StringMember(input, "microvmIdentifier");
  const std::string image = StringMember(input, "imageIdentifier");
  std::vector<aws::IamRequest> out;
  if (operation == "RunMicrovm") {
    out.push_back(LambdaRequest(operation, ArnOf(image, base + "microvm-image:"), region));
    out.push_back(LambdaRequest(operation, base + "microvm:*", region));
    const std::string role = StringMember(input, "executionRoleArn");
    if (!role.empty()) out.push_back(PassRole(role, region));
    // Attaching a connector is lambda:PassNetworkConnector on the connector's ARN.
    for (const char* list : {"ingressNetworkConnectors", "egressNetworkConnectors"}) {
      auto it = input.find(list);
      if (it == input.end() || !it->is_array()) continue;
      for (const json& c : *it) {
        if (c.is_string()) {
          out.push_back(LambdaRequest("PassNetworkConnector", c.get<std::string>(), region));
        }
      }
    }
  } else if (operation == "CreateMicrovmImage") {
    out.push_back(LambdaRequest(
        operation, ArnOf(StringMember(input, "name"), base + "microvm-image:"), region));
  } else if (!vm.empty()) {
    out.push_back(LambdaRequest(operation, ArnOf(vm, base + "microvm:"), region));
  } else if (!image.empty() && operation != "ListMicrovms") {
    out.push_back(LambdaRequest(operation, ArnOf(image, base + "microvm-image:"), region));
  } else if (!StringMember(input, "Resource").empty()) {  // TagResource, ListTags, UntagResource
    out.push_back(LambdaRequest(operation, StringMember(input, "Resource"), region));
  } else {
    out.push_back(LambdaRequest(operation, "*", region));  // the List operations
  }
  if (operation == "CreateMicrovmImage" || operation == "UpdateMicrovmImage") {
    const std::string role = StringMember(input, "buildRoleArn");
    if (!role.empty()) out.push_back(PassRole(role, region));
  }
  return out;
}

std::string SigningAccessKey(const http::ServerRequest& request) {
  const std::string auth = request.headers.Get("Authorization").value_or("");
  const std::string marker = "Credential=";
  const size_t at = auth.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  const size_t slash = auth.find('/', start);
  if (slash == std::string::npos) return "";
  return auth.substr(start, slash - start);
}

Result<MicrovmsIamPolicies> MicrovmsIamPolicies::Parse(std::string_view text,
                                                       std::string_view source,
                                                       const std::string& region,
                                                       const std::string& account_id) {
  const std::string where(source);
  json map = json::parse(text, nullptr, false);
  if (map.is_discarded() || !map.is_object() || map.empty()) {
    return InvalidArgument(where +
                           " must be a JSON object: access key id -> [IAM policy documents]");
  }
  MicrovmsIamPolicies out;
  out.region_ = region;
  out.account_id_ = account_id;
  for (const auto& [key, value] : map.items()) {
    const std::string at = where + " key " + key;
    Principal p;
    p.arn = "arn:aws:iam::" + account_id + ":user/" + key;
    const json* documents = &value;
    if (value.is_object()) {
      if (!value.contains("policies") ||
          (value.contains("principal") && !value["principal"].is_string())) {
        return InvalidArgument(at +
                               " must be a list of policy documents or "
                               "{\"principal\": ARN, \"policies\": [documents]}");
      }
      if (value.contains("principal")) p.arn = value["principal"].get<std::string>();
      documents = &value["policies"];
    }
    MVR_ASSIGN_OR_RETURN(p.policies, ParseDocuments(*documents, at));
    out.principals_[key] = std::move(p);
  }
  return out;
}

Status MicrovmsIamPolicies::Authorize(const http::ServerRequest& request,
                                      const std::string& operation, const json& input) const {
  const std::string key = SigningAccessKey(request);
  auto it = principals_.find(key);
  if (key.empty() && it == principals_.end()) {
    return Denied("the request is not signed with SigV4: no access key to authorise " + operation);
  }
  if (it == principals_.end()) {
    return Denied("access key " + key + " has no IAM policies in --iam-policies");
  }
  const Principal& p = it->second;
  for (const aws::IamRequest& r : MicrovmsIamRequests(operation, input, region_, account_id_)) {
    const aws::IamDecision d = aws::EvaluatePolicies(p.policies, r);
    if (d == aws::IamDecision::kAllow) continue;
    const std::string head = "User: " + p.arn + " is not authorized to perform: " + r.action +
                             " on resource: " + r.resource;
    if (d == aws::IamDecision::kExplicitDeny) {
      return Denied(head + " with an explicit deny in an identity-based policy");
    }
    return Denied(head + " because no identity-based policy allows the " + r.action + " action");
  }
  return Status::Ok();
}

}  // namespace mvr::emulate::microvms

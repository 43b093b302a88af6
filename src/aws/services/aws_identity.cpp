#include "aws/services/aws_identity.h"

#include "aws/services/json_protocol.h"
#include "aws/signing/sigv4.h"
#include "base/encoding.h"

namespace mvr::aws {
namespace {

std::string FormBody(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string body;
  for (const auto& [key, value] : params) {
    if (!body.empty()) body += '&';
    body += UriEncode(key) + "=" + UriEncode(value);
  }
  return body;
}

}  // namespace

Result<std::string> PolicySourceArn(const std::string& caller_arn) {
  // arn:PARTITION:SERVICE::ACCOUNT:RESOURCE
  std::vector<std::string> parts;
  size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    size_t colon = caller_arn.find(':', start);
    if (colon == std::string::npos) return InvalidArgument("not an ARN: " + caller_arn);
    parts.push_back(caller_arn.substr(start, colon - start));
    start = colon + 1;
  }
  const std::string resource = caller_arn.substr(start);
  const std::string prefix = "arn:" + parts[1] + ":iam::" + parts[4] + ":";
  if (parts[2] == "iam" && resource.rfind("user/", 0) == 0) return caller_arn;
  // moto names its default user arn:aws:sts::ACCOUNT:user/moto: that user, in IAM's words.
  if (parts[2] == "sts" && resource.rfind("user/", 0) == 0) return prefix + resource;
  if (parts[2] == "iam" && resource.rfind("role/", 0) == 0) return caller_arn;
  if (parts[2] == "sts" && resource.rfind("assumed-role/", 0) == 0) {
    const std::string rest = resource.substr(13);
    return prefix + "role/" + rest.substr(0, rest.find('/'));
  }
  return InvalidArgument("IAM's policy simulator takes a user or a role, not " + caller_arn);
}

Result<std::string> QueryProtocolClient::Call(
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& params) {
  const std::string what = endpoint_.signing_name + ":" + action;
  MVR_ASSIGN_OR_RETURN(AwsCredentials creds, credentials_.Get());
  http::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_.url + "/";
  req.timeout = Duration(15'000);
  req.headers.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8");
  std::vector<std::pair<std::string, std::string>> all = {{"Action", action},
                                                          {"Version", version_}};
  all.insert(all.end(), params.begin(), params.end());
  req.body = FormBody(all);
  MVR_RETURN_IF_ERROR(SignRequest(req, creds,
                                  SigningScope{endpoint_.region, endpoint_.signing_name},
                                  seam_.clock.Now())
                          .Annotate(what));
  Result<http::HttpResponse> resp = http_.Send(req);
  if (!resp.ok()) return resp.status().Annotate(what);
  if (resp->status < 200 || resp->status >= 300) {
    return MapJsonError(resp->status, resp->headers, resp->body).Annotate(what);
  }
  return resp->body;
}

Result<CallerIdentity> GetCallerIdentity(QueryProtocolClient& sts) {
  MVR_ASSIGN_OR_RETURN(std::string body, sts.Call("GetCallerIdentity", {}));
  // A small flat answer: the first element of each name is the one (json_protocol.h).
  CallerIdentity id;
  id.account = XmlElement(body, "Account");
  id.arn = XmlElement(body, "Arn");
  id.user_id = XmlElement(body, "UserId");
  if (id.arn.empty()) return Internal("sts:GetCallerIdentity: the answer names no Arn");
  return id;
}

namespace {

// Each EvaluationResults member, from its EvalActionName on: its resource and decision are the
// first of their names after it (a member's nested ResourceSpecificResults come later and name
// theirs EvalResourceDecision).
std::vector<SimulatedDecision> ParseSimulation(const std::string& body) {
  std::vector<SimulatedDecision> out;
  const std::string open = "<EvalActionName>";
  for (size_t at = body.find(open); at != std::string::npos; at = body.find(open, at + 1)) {
    const std::string rest = body.substr(at);
    out.push_back({XmlElement(rest, "EvalActionName"), XmlElement(rest, "EvalResourceName", 2048),
                   XmlElement(rest, "EvalDecision")});
  }
  return out;
}

}  // namespace

Result<std::vector<SimulatedDecision>> SimulatePrincipalPolicy(
    QueryProtocolClient& iam, const std::string& principal_arn,
    const std::vector<std::string>& actions, const std::string& resource) {
  std::vector<std::pair<std::string, std::string>> params = {{"PolicySourceArn", principal_arn},
                                                             {"ResourceArns.member.1", resource}};
  for (size_t i = 0; i < actions.size(); ++i) {
    params.emplace_back("ActionNames.member." + std::to_string(i + 1), actions[i]);
  }
  std::vector<SimulatedDecision> out;
  std::string marker;
  for (int page = 0; page < 20; ++page) {
    auto call = params;
    if (!marker.empty()) call.emplace_back("Marker", marker);
    MVR_ASSIGN_OR_RETURN(std::string body, iam.Call("SimulatePrincipalPolicy", call));
    for (SimulatedDecision& d : ParseSimulation(body)) out.push_back(std::move(d));
    if (XmlElement(body, "IsTruncated") != "true") return out;
    marker = XmlElement(body, "Marker", 4096);
    if (marker.empty()) return out;
  }
  return Internal("iam:SimulatePrincipalPolicy: too many pages");
}

}  // namespace mvr::aws

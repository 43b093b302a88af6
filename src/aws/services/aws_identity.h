// Who the AWS credentials are (STS GetCallerIdentity) and what IAM says they may do (IAM
// SimulatePrincipalPolicy): the two query-protocol calls `mvr doctor` makes (POST / with a form
// body, XML answers). Neither changes anything in the account.
// Thread-safety: safe to share when the injected HttpClient, credentials and seam are.
#pragma once

#include <string>
#include <vector>

#include "aws/signing/credentials.h"
#include "aws/signing/endpoints.h"
#include "base/seam.h"
#include "base/status.h"
#include "http/client.h"

namespace mvr::aws {

struct CallerIdentity {
  std::string account;
  std::string arn;  // arn:aws:iam::ACCOUNT:user/NAME, arn:aws:sts::ACCOUNT:assumed-role/ROLE/S
  std::string user_id;
};

// One action on one resource, as IAM's policy simulator decided it: "allowed", "explicitDeny" or
// "implicitDeny".
struct SimulatedDecision {
  std::string action;
  std::string resource;
  std::string decision;
  bool allowed() const { return decision == "allowed"; }
};

// The IAM principal a caller ARN stands for: an assumed role's session → its role
// (arn:aws:iam::ACCOUNT:role/ROLE; a role with a path is not found this way), a user as it is.
// InvalidArgument for anything else (the account root, a federated user).
Result<std::string> PolicySourceArn(const std::string& caller_arn);

// One query-protocol service (STS or IAM) at `endpoint`.
class QueryProtocolClient {
 public:
  QueryProtocolClient(ServiceEndpoint endpoint, std::string version, http::HttpClient& http,
                      CredentialsProvider& credentials, Seam seam)
      : endpoint_(std::move(endpoint)),
        version_(std::move(version)),
        http_(http),
        credentials_(credentials),
        seam_(seam) {}

  // POST Action=`action`&Version=…&`params`; the XML answer's text, or the mapped error
  // (MapJsonError reads the query protocol's <Code> and <Message>).
  Result<std::string> Call(const std::string& action,
                           const std::vector<std::pair<std::string, std::string>>& params);

 private:
  ServiceEndpoint endpoint_;
  std::string version_;
  http::HttpClient& http_;
  CredentialsProvider& credentials_;
  Seam seam_;
};

// sts:GetCallerIdentity (needs no permission: every valid credential may call it).
Result<CallerIdentity> GetCallerIdentity(QueryProtocolClient& sts);

// iam:SimulatePrincipalPolicy for `principal_arn`: one decision per action in `actions` on
// `resource` (one call, every page read).
Result<std::vector<SimulatedDecision>> SimulatePrincipalPolicy(
    QueryProtocolClient& iam, const std::string& principal_arn,
    const std::vector<std::string>& actions, const std::string& resource);

}  // namespace mvr::aws

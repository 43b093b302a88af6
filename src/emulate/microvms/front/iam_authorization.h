// The MicroVMs emulator's IAM check (--iam-policies): each caller's access key maps to the
// identity-based policies of its principal, and each API operation to the IAM requests AWS would
// authorise for it (its action, resource ARN and condition keys); an operation a policy does not
// allow is answered AccessDeniedException (403) with AWS's message, before the model sees it.
// Thread-safety: immutable after Parse; Authorize is const and may run on any server thread.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "aws/services/iam_policy.h"
#include "base/status.h"
#include "http/server.h"

namespace mvr::emulate::microvms {

// The IAM requests one operation makes with its validated input: `lambda:<Operation>` on the
// MicroVM (…:microvm:ID), the image (…:microvm-image:NAME) or "*" for a list; RunMicrovm on both
// its image and …:microvm:* (the new VM's id is not known yet); plus `iam:PassRole` on the
// executionRoleArn (RunMicrovm), `lambda:PassNetworkConnector` on each of RunMicrovm's ingress
// and egress network connectors, or buildRoleArn (Create/UpdateMicrovmImage) with
// iam:PassedToService = lambda.amazonaws.com. Every request carries aws:RequestedRegion.
std::vector<aws::IamRequest> MicrovmsIamRequests(const std::string& operation,
                                                 const nlohmann::json& input,
                                                 const std::string& region,
                                                 const std::string& account_id);

class MicrovmsIamPolicies {
 public:
  // `text`: a JSON object, access key id → a list of policy documents, or
  // {"principal": "arn:aws:iam::ACCOUNT:user/NAME", "policies": [documents]}. Without a principal
  // the messages name arn:aws:iam::ACCOUNT:user/ACCESS_KEY_ID. The key "" stands for requests
  // with no SigV4 signature (a test harness inspecting the emulator; AWS refuses those): without
  // it they are denied. InvalidArgument naming `source`
  // and the key for anything else (see aws::IamPolicy::Parse for the documents).
  static Result<MicrovmsIamPolicies> Parse(std::string_view text, std::string_view source,
                                           const std::string& region,
                                           const std::string& account_id);

  // Ok, or Unauthorized with error type AccessDeniedException: the request names no access key
  // (no SigV4 Authorization header), a key with no entry, or the first IAM request of the
  // operation the key's policies do not allow, in AWS's words.
  Status Authorize(const http::ServerRequest& request, const std::string& operation,
                   const nlohmann::json& input) const;

  size_t size() const { return principals_.size(); }

 private:
  struct Principal {
    std::string arn;
    std::vector<aws::IamPolicy> policies;
  };
  std::string region_, account_id_;
  std::map<std::string, Principal> principals_;
};

// The access key id of a SigV4 Authorization header ("… Credential=AKID/date/…"); empty if none.
std::string SigningAccessKey(const http::ServerRequest& request);

}  // namespace mvr::emulate::microvms

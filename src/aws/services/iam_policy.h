// IAM identity-based policy documents, parsed and evaluated as AWS does for one principal: an
// explicit Deny wins, then an Allow, and anything else is denied. The MicroVMs emulator uses it to
// answer AccessDeniedException for an operation the caller's policies do not allow
// (--iam-policies); tests use it to show which statement an operation needs.
// Thread-safety: a parsed IamPolicy is immutable; evaluating is a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mvr::aws {

// One authorisation question: may the principal perform `action` ("lambda:RunMicrovm") on
// `resource` (an ARN, or "*" for an operation with no resource), given the request context?
struct IamRequest {
  std::string action;
  std::string resource;
  // Condition keys the caller can supply, lower-cased ("iam:passedtoservice") → their values in
  // this request. A key present with no values is known but absent from this request; a key that
  // is not in the map at all is one the caller cannot supply (see IamPolicy::Evaluate).
  std::map<std::string, std::vector<std::string>> context;
};

enum class IamDecision {
  kAllow,
  kExplicitDeny,
  kImplicitDeny,  // no statement applies
};

class IamPolicy {
 public:
  struct Condition {
    std::string op;  // the base operator, e.g. "StringLike" (without IfExists)
    bool if_exists = false;
    std::string key;  // lower-cased
    std::vector<std::string> values;
  };
  struct Statement {
    std::string sid;
    bool allow = true;
    bool not_action = false;
    std::vector<std::string> actions;
    bool not_resource = false;
    std::vector<std::string> resources;
    std::vector<Condition> conditions;
  };

  // InvalidArgument naming `source` and the statement for a document that is not an identity-based
  // policy this evaluator understands: Effect other than Allow/Deny, no Action/NotAction or no
  // Resource/NotResource (or both of a pair), a Principal, a policy variable ("${...}"), a
  // condition that is not {"Operator": {"key": value-or-values}}.
  static Result<IamPolicy> Parse(const nlohmann::json& document, std::string_view source);
  static Result<IamPolicy> ParseText(std::string_view text, std::string_view source);

  // This policy's decision alone. A statement applies when its action and resource match and all
  // its conditions hold. A condition whose operator is not one of the supported ones, or whose key
  // the request cannot supply (not in IamRequest::context), cannot be shown to hold: an Allow
  // statement with one does not apply, a Deny statement with one does (the stricter reading both
  // ways; AWS would know the key).
  IamDecision Evaluate(const IamRequest& request) const;

  const std::vector<Statement>& statements() const { return statements_; }

 private:
  std::vector<Statement> statements_;
};

// Several policies of one principal: any explicit Deny, else any Allow, else an implicit deny.
IamDecision EvaluatePolicies(const std::vector<IamPolicy>& policies, const IamRequest& request);

// IAM's wildcard match: '*' any run of characters (none included), '?' any one character.
bool IamWildcardMatch(std::string_view pattern, std::string_view value, bool ignore_case);

}  // namespace mvr::aws

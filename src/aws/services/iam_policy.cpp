#include "aws/services/iam_policy.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace mvr::aws {

using nlohmann::json;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool EqualChar(char a, char b, bool ignore_case) {
  if (!ignore_case) return a == b;
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

// A string or a list of strings, as Action, Resource and condition values are written.
Result<std::vector<std::string>> StringOrList(const json& j, const std::string& where,
                                              bool scalars_allowed) {
  std::vector<std::string> out;
  const json list = j.is_array() ? j : json::array({j});
  for (const json& item : list) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (scalars_allowed && item.is_boolean()) {
      out.push_back(item.get<bool>() ? "true" : "false");
    } else if (scalars_allowed && item.is_number()) {
      out.push_back(item.is_number_integer() ? std::to_string(item.get<int64_t>())
                                             : std::to_string(item.get<double>()));
    } else {
      return InvalidArgument(where + " must be a string or a list of strings");
    }
  }
  if (out.empty()) return InvalidArgument(where + " is empty");
  for (const std::string& s : out) {
    if (s.find("${") != std::string::npos) {
      return InvalidArgument(where + " uses a policy variable (" + s +
                             "), which this evaluator does not support; write the value out");
    }
  }
  return out;
}

Result<std::vector<IamPolicy::Condition>> ParseConditions(const json& block,
                                                          const std::string& where) {
  std::vector<IamPolicy::Condition> out;
  if (!block.is_object()) {
    return InvalidArgument(where +
                           ": Condition must be an object {\"Operator\": {\"key\": value}}");
  }
  for (const auto& [op, keys] : block.items()) {
    if (!keys.is_object() || keys.empty()) {
      return InvalidArgument(where + ": Condition operator " + op +
                             " must map condition keys to values");
    }
    for (const auto& [key, values] : keys.items()) {
      IamPolicy::Condition c;
      c.op = op;
      const std::string suffix = "IfExists";
      if (c.op.size() > suffix.size() && c.op.ends_with(suffix)) {
        c.if_exists = true;
        c.op.resize(c.op.size() - suffix.size());
      }
      c.key = Lower(key);
      MVR_ASSIGN_OR_RETURN(c.values, StringOrList(values, where + " condition " + op + " " + key,
                                                  /*scalars_allowed=*/true));
      out.push_back(std::move(c));
    }
  }
  return out;
}

// Exactly one of `name` and `not_name`: its values and whether it was the Not form.
Result<std::pair<bool, std::vector<std::string>>> OneOf(const json& st, const std::string& name,
                                                        const std::string& not_name,
                                                        const std::string& where) {
  const bool has = st.contains(name), has_not = st.contains(not_name);
  if (has == has_not) {
    return InvalidArgument(where + " needs exactly one of " + name + " and " + not_name);
  }
  const std::string used = has ? name : not_name;
  MVR_ASSIGN_OR_RETURN(std::vector<std::string> values,
                       StringOrList(st[used], where + " " + used, /*scalars_allowed=*/false));
  return std::make_pair(has_not, std::move(values));
}

Result<IamPolicy::Statement> ParseStatement(const json& st, const std::string& where) {
  if (!st.is_object()) return InvalidArgument(where + " is not an object");
  if (st.contains("Principal") || st.contains("NotPrincipal")) {
    return InvalidArgument(where +
                           " names a Principal: only identity-based policies are evaluated");
  }
  IamPolicy::Statement s;
  s.sid = st.value("Sid", "");
  const std::string effect = st.value("Effect", "");
  if (effect != "Allow" && effect != "Deny") {
    return InvalidArgument(where + ": Effect must be Allow or Deny");
  }
  s.allow = effect == "Allow";
  MVR_ASSIGN_OR_RETURN(auto actions, OneOf(st, "Action", "NotAction", where));
  s.not_action = actions.first;
  s.actions = std::move(actions.second);
  MVR_ASSIGN_OR_RETURN(auto resources, OneOf(st, "Resource", "NotResource", where));
  s.not_resource = resources.first;
  s.resources = std::move(resources.second);
  if (st.contains("Condition")) {
    MVR_ASSIGN_OR_RETURN(s.conditions, ParseConditions(st["Condition"], where));
  }
  return s;
}

// ARN matching: the six parts (arn, partition, service, region, account, resource) each matched
// on their own, so a wildcard never spans a ':' before the resource part.
bool ArnMatch(std::string_view pattern, std::string_view value) {
  if (pattern == "*") return true;
  for (int part = 0; part < 5; ++part) {
    const size_t p = pattern.find(':'), v = value.find(':');
    if (p == std::string_view::npos || v == std::string_view::npos) return false;
    if (!IamWildcardMatch(pattern.substr(0, p), value.substr(0, v), false)) return false;
    pattern.remove_prefix(p + 1);
    value.remove_prefix(v + 1);
  }
  return IamWildcardMatch(pattern, value, false);
}

bool ValueMatches(const std::string& op, const std::string& pattern, const std::string& value) {
  if (op == "StringEquals" || op == "Bool") return pattern == value;
  if (op == "StringEqualsIgnoreCase") return Lower(pattern) == Lower(value);
  if (op == "StringLike") return IamWildcardMatch(pattern, value, false);
  return ArnMatch(pattern, value);  // ArnEquals and ArnLike match alike
}

// The base operator's positive form, and whether `op` negates it; nullopt for one not supported.
std::optional<std::pair<std::string, bool>> Operator(const std::string& op) {
  static const std::map<std::string, std::pair<std::string, bool>> kOperators = {
      {"StringEquals", {"StringEquals", false}},
      {"StringNotEquals", {"StringEquals", true}},
      {"StringEqualsIgnoreCase", {"StringEqualsIgnoreCase", false}},
      {"StringNotEqualsIgnoreCase", {"StringEqualsIgnoreCase", true}},
      {"StringLike", {"StringLike", false}},
      {"StringNotLike", {"StringLike", true}},
      {"ArnEquals", {"ArnLike", false}},
      {"ArnLike", {"ArnLike", false}},
      {"ArnNotEquals", {"ArnLike", true}},
      {"ArnNotLike", {"ArnLike", true}},
      {"Bool", {"Bool", false}},
  };
  auto it = kOperators.find(op);
  if (it == kOperators.end()) return std::nullopt;
  return it->second;
}

// Whether the condition holds; nullopt when it cannot be decided (an operator not supported, a
// key the request cannot supply).
std::optional<bool> ConditionHolds(const IamPolicy::Condition& c, const IamRequest& request) {
  auto it = request.context.find(c.key);
  if (it == request.context.end()) return std::nullopt;
  const std::vector<std::string>& present = it->second;
  if (c.op == "Null") {
    if (c.values.size() != 1 || (c.values[0] != "true" && c.values[0] != "false")) {
      return std::nullopt;
    }
    return present.empty() == (c.values[0] == "true");
  }
  auto op = Operator(c.op);
  if (!op) return std::nullopt;
  const auto& [base, negated] = *op;
  if (present.empty()) return c.if_exists || negated;
  bool any = false;
  for (const std::string& value : present) {
    for (const std::string& pattern : c.values) any = any || ValueMatches(base, pattern, value);
  }
  return negated ? !any : any;
}

bool Listed(const std::vector<std::string>& patterns, const std::string& value, bool is_action) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return is_action ? IamWildcardMatch(p, value, /*ignore_case=*/true)
                     : (value == "*" ? p == "*" : ArnMatch(p, value));
  });
}

bool Applies(const IamPolicy::Statement& s, const IamRequest& request) {
  if (Listed(s.actions, request.action, true) == s.not_action) return false;
  if (Listed(s.resources, request.resource, false) == s.not_resource) return false;
  for (const IamPolicy::Condition& c : s.conditions) {
    std::optional<bool> holds = ConditionHolds(c, request);
    if (!holds) return !s.allow;  // undecidable: an Allow does not apply, a Deny does
    if (!*holds) return false;
  }
  return true;
}

}  // namespace

bool IamWildcardMatch(std::string_view pattern, std::string_view value, bool ignore_case) {
  size_t p = 0, v = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (v < value.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = v;
    } else if (p < pattern.size() &&
               (pattern[p] == '?' || EqualChar(pattern[p], value[v], ignore_case))) {
      ++p;
      ++v;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<IamPolicy> IamPolicy::Parse(const json& document, std::string_view source) {
  const std::string where(source);
  if (!document.is_object() || !document.contains("Statement")) {
    return InvalidArgument(where + " is not an IAM policy document (no Statement)");
  }
  const json& raw = document["Statement"];
  const json list = raw.is_array() ? raw : json::array({raw});
  IamPolicy policy;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string name = where + " statement " + std::to_string(i + 1);
    if (list[i].is_object() && list[i].contains("Sid") && list[i]["Sid"].is_string()) {
      name += " (" + list[i]["Sid"].get<std::string>() + ")";
    }
    MVR_ASSIGN_OR_RETURN(Statement s, ParseStatement(list[i], name));
    policy.statements_.push_back(std::move(s));
  }
  return policy;
}

Result<IamPolicy> IamPolicy::ParseText(std::string_view text, std::string_view source) {
  json document = json::parse(text, nullptr, false);
  if (document.is_discarded()) return InvalidArgument(std::string(source) + " is not valid JSON");
  return Parse(document, source);
}

IamDecision IamPolicy::Evaluate(const IamRequest& request) const {
  bool allowed = false;
  for (const Statement& s : statements_) {
    if (!Applies(s, request)) continue;
    if (!s.allow) return IamDecision::kExplicitDeny;
    allowed = true;
  }
  return allowed ? IamDecision::kAllow : IamDecision::kImplicitDeny;
}

IamDecision EvaluatePolicies(const std::vector<IamPolicy>& policies, const IamRequest& request) {
  bool allowed = false;
  for (const IamPolicy& policy : policies) {
    IamDecision d = policy.Evaluate(request);
    if (d == IamDecision::kExplicitDeny) return d;
    allowed = allowed || d == IamDecision::kAllow;
  }
  return allowed ? IamDecision::kAllow : IamDecision::kImplicitDeny;
}

}  // namespace mvr::aws

#include "action/input_rules.h"

#include <regex>

#include "action/inputs.h"
#include "base/encoding.h"
#include "base/utf8.h"

namespace mvr::action {
namespace {

constexpr size_t kQuoteBytes = 80;

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiAlnum(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool AllOf(const std::string& s, bool (*ok)(char)) {
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}
bool IsPrintableAsciiNoSpace(char c) { return c > 0x20 && c < 0x7f; }

// The offset of the first control character (C0, DEL or C1) of UTF-8 `text`, or npos; `allowed`
// lists C0 characters the form accepts (a JSON text's line breaks).
size_t FindControl(const std::string& text, std::string_view allowed) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && allowed.find(static_cast<char>(c)) == std::string_view::npos) || c == 0x7f) {
      return i;
    }
    // U+0080..U+009F are C2 80..C2 9F in UTF-8.
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return i;
    }
  }
  return std::string::npos;
}

size_t FindWhitespace(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ') return i;
  }
  return std::string::npos;
}

std::string Hex(unsigned char c) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 15];
}

// What a value of `form` must look like, for the message that refuses one.
std::string Expected(InputForm form) {
  switch (form) {
    case InputForm::kSecret:
      return "a token of printable ASCII characters";
    case InputForm::kRepository:
      return "owner/name (letters, digits, '-', '_' and '.'; owner at most 39, name at most 100)";
    case InputForm::kDigits:
      return "a decimal number";
    case InputForm::kNumber:
      return "a whole number";
    case InputForm::kJobId:
      return "an id of letters, digits, '_' and '-'";
    case InputForm::kWord:
      return "printable characters without spaces";
    case InputForm::kText:
      return "printable characters";
    case InputForm::kJson:
      return "JSON text";
    case InputForm::kUrl:
      return "an http:// or https:// URL of printable ASCII characters without spaces";
    case InputForm::kRegion:
      return "an AWS region such as us-east-1";
    case InputForm::kRoleArn:
      return "an IAM role ARN: arn:aws:iam::<12-digit account>:role/<name>";
    case InputForm::kLogGroup:
      return "a log group name of letters, digits, '_', '-', '/', '.' and '#'";
    case InputForm::kLabels:
      return "labels separated by commas or new lines, each at most 256 bytes";
    case InputForm::kServer:
      return "a server name (1 to 64 letters, digits, '.', '_' and '-', starting with a letter "
             "or digit, not beginning with lmvm) or a handle (lmvm1_..., lmvm2_...) that start "
             "gave";
    case InputForm::kStateTable:
      return "dynamodb:TABLE (3 to 255 letters, digits, '_', '-' and '.'), sqlite:PATH or memory:";
  }
  return "";
}

// "lmvm" begins only the handles start gives, so a name may not.
bool IsServerName(const std::string& s) {
  if (s.empty() || s.size() > 64 || !IsAsciiAlnum(s[0]) || s.rfind("lmvm", 0) == 0) return false;
  return AllOf(s, [](char c) { return IsAsciiAlnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool IsHandle(const std::string& s) {
  if (s.rfind("lmvm1_", 0) != 0 && s.rfind("lmvm2_", 0) != 0) return false;
  // base64url, and the '.' before an lmvm1_ handle's seal.
  return AllOf(
      s, [](char c) { return IsAsciiAlnum(c) || c == '_' || c == '-' || c == '=' || c == '.'; });
}

bool IsRepository(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || s.find('/', slash + 1) != std::string::npos) return false;
  const std::string owner = s.substr(0, slash), name = s.substr(slash + 1);
  auto ok = [](char c) { return IsAsciiAlnum(c) || c == '-' || c == '_' || c == '.'; };
  return !owner.empty() && owner.size() <= 39 && !name.empty() && name.size() <= 100 &&
         AllOf(owner, ok) && AllOf(name, ok);
}

bool IsStateTable(const std::string& s) {
  if (s == "memory:") return true;
  if (s.rfind("sqlite:", 0) == 0) return s.size() > 7;
  if (s.rfind("dynamodb:", 0) != 0) return false;
  const std::string table = s.substr(9);
  return table.size() >= 3 && table.size() <= 255 &&
         AllOf(table, [](char c) { return IsAsciiAlnum(c) || c == '_' || c == '-' || c == '.'; });
}

// Whether `value` (UTF-8 without control characters, within its length) has its form.
bool HasForm(InputForm form, const std::string& value) {
  switch (form) {
    case InputForm::kSecret:
    case InputForm::kNumber:
      return AllOf(value, IsPrintableAsciiNoSpace);
    case InputForm::kRepository:
      return IsRepository(value);
    case InputForm::kDigits:
      return !value.empty() && value.size() <= 20 && AllOf(value, IsAsciiDigit);
    case InputForm::kJobId:
      return AllOf(value, [](char c) { return IsAsciiAlnum(c) || c == '_' || c == '-'; });
    case InputForm::kWord:
      return FindWhitespace(value) == std::string::npos;
    case InputForm::kText:
    case InputForm::kJson:
    case InputForm::kLabels:
      return true;
    case InputForm::kUrl:
      return (value.rfind("http://", 0) == 0 || value.rfind("https://", 0) == 0) &&
             AllOf(value, IsPrintableAsciiNoSpace);
    case InputForm::kRegion:
      return AllOf(value,
                   [](char c) { return (c >= 'a' && c <= 'z') || IsAsciiDigit(c) || c == '-'; });
    case InputForm::kRoleArn: {
      // The service model's RoleArn pattern, whole.
      static const std::regex kRoleArn(
          R"(arn:aws[a-z\-]*:iam::[0-9]{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+)");
      return value.size() >= 20 && std::regex_match(value, kRoleArn);
    }
    case InputForm::kLogGroup:
      return AllOf(value, [](char c) {
        return IsAsciiAlnum(c) || c == '_' || c == '-' || c == '/' || c == '.' || c == '#';
      });
    case InputForm::kServer:
      return IsServerName(value) || IsHandle(value);
    case InputForm::kStateTable:
      return IsStateTable(value);
  }
  return false;
}

Status CheckLabels(const std::string& label, const std::string& value) {
  std::string item;
  for (char c : value + ",") {
    if (c != ',' && c != '\n') {
      item.push_back(c);
      continue;
    }
    if (item.size() > 256) {
      return InvalidArgument(label + " has a label of " + std::to_string(item.size()) +
                             " bytes; give labels of at most 256 bytes");
    }
    item.clear();
  }
  return Status::Ok();
}

}  // namespace

const std::vector<InputRule>& InputRules() {
  using F = InputForm;
  static const std::vector<InputRule> kRules = {
      {"github-token", {}, F::kSecret, 4096},
      {"repository", {"GITHUB_REPOSITORY"}, F::kRepository, 140},
      {"repository-id", {"GITHUB_REPOSITORY_ID"}, F::kDigits, 20},
      {"run-id", {"GITHUB_RUN_ID"}, F::kDigits, 20},
      {"run-attempt", {"GITHUB_RUN_ATTEMPT"}, F::kDigits, 10},
      {"job", {"GITHUB_JOB"}, F::kJobId, 256},
      {"strategy", {"MVR_STRATEGY"}, F::kJson, 65536},
      {"matrix", {"MVR_MATRIX"}, F::kJson, 65536},
      {"step", {"GITHUB_ACTION"}, F::kWord, 256},
      {"github-api-url", {"GITHUB_API_URL"}, F::kUrl, 2048},
      {"region", {"AWS_REGION", "AWS_DEFAULT_REGION"}, F::kRegion, 32},
      {"image-id", {}, F::kWord, 256},
      {"image-version", {}, F::kWord, 2048},
      {"execution-role-arn", {}, F::kRoleArn, 2048},
      {"runner-group-id", {}, F::kNumber, 20},
      {"runner-labels", {}, F::kLabels, 32768},
      {"startup-timeout-seconds", {}, F::kNumber, 20},
      {"log-group", {}, F::kLogGroup, 512},
      {"ingress-connectors", {}, F::kLabels, 8192},
      {"egress-connectors", {}, F::kLabels, 8192},
      {"idempotency-key", {}, F::kText, 256},
      {"ephemeral-max-lifetime-seconds", {}, F::kNumber, 20},
      {"job-timeout-minutes", {}, F::kNumber, 20},
      {"microvm-id", {}, F::kWord, 256},
      {"runner-id", {}, F::kNumber, 20},
      {"server", {}, F::kServer, 4096},
      {"max-lifetime-seconds", {}, F::kNumber, 20},
      {"reuse-safety-margin-seconds", {}, F::kNumber, 20},
      {"stop-timeout-seconds", {}, F::kNumber, 20},
      {"state-table", {}, F::kStateTable, 4096},
      {"server-capacity", {}, F::kNumber, 20},
      {"lease-timeout-seconds", {}, F::kNumber, 20},
      {"min-age-seconds", {}, F::kNumber, 20},
      {"dry-run", {}, F::kWord, 16},
      {"timeout-seconds", {}, F::kNumber, 20},
  };
  return kRules;
}

Status CheckInputValue(const InputRule& rule, const std::string& label, const std::string& value) {
  const bool secret = rule.form == InputForm::kSecret;
  const std::string give = "; give " + Expected(rule.form);
  if (value.size() > rule.max_bytes) {
    return InvalidArgument(label + " is " + std::to_string(value.size()) + " bytes long, over " +
                           "its limit of " + std::to_string(rule.max_bytes) + give);
  }
  if (!IsValidUtf8(value)) {
    return InvalidArgument(label + " is not valid UTF-8" + give);
  }
  const size_t control = FindControl(value, rule.form == InputForm::kJson     ? "\t\n\r"
                                            : rule.form == InputForm::kLabels ? "\n"
                                                                              : "");
  if (control != std::string::npos) {
    return InvalidArgument(label + " holds a control character (" +
                           Hex(static_cast<unsigned char>(value[control])) + " at byte " +
                           std::to_string(control) + ")" + give);
  }
  if (!HasForm(rule.form, value)) {
    const std::string got = secret ? "" : "; got '" + PrintableExcerpt(value, kQuoteBytes) + "'";
    return InvalidArgument(label + " must be " + Expected(rule.form) + got);
  }
  if (rule.form == InputForm::kLabels) return CheckLabels(label, value);
  return Status::Ok();
}

Status CheckInputs(const InputReader& in, const std::vector<std::string>& used) {
  for (const InputRule& rule : InputRules()) {
    const std::string given = in.Get(rule.name);
    if (!given.empty()) {
      MVR_RETURN_IF_ERROR(CheckInputValue(rule, "input '" + rule.name + "'", given));
      continue;
    }
    bool mode_reads_it = false;
    for (const std::string& name : used) mode_reads_it = mode_reads_it || name == rule.name;
    if (!mode_reads_it) continue;
    for (const std::string& variable : rule.env_fallback) {
      const std::string value = in.env().GetOr(variable, "");
      if (value.empty()) continue;
      MVR_RETURN_IF_ERROR(CheckInputValue(rule, variable + " (input '" + rule.name + "')", value));
      break;  // the first variable set is the one read
    }
  }
  return Status::Ok();
}

}  // namespace mvr::action

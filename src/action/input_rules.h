// The form of every value `mvr start` and `mvr stop` read: each Action input and flag, and each
// runtime variable that stands in for one (GITHUB_JOB for `job`, ...). Checked before the first
// call to any service, so that no input can crash a start or make it leave a MicroVM or a runner
// behind: every value must be UTF-8 without control characters, within a length bound, and of its
// input's own form (a server name, an ARN, a number, ...). docs/action.md lists the forms.
// Thread-safety: immutable tables and pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/environment.h"
#include "base/status.h"

namespace mvr::action {

class InputReader;

enum class InputForm {
  kSecret,      // printable ASCII, never quoted in a message (github-token)
  kRepository,  // owner/name
  kDigits,      // a decimal id: repository-id, run-id, run-attempt
  kNumber,      // an integer input read by InputReader::GetInt (which checks its range)
  kJobId,       // letters, digits, '_' and '-' (GitHub's job and step ids)
  kWord,        // printable, no whitespace (image ids and versions, MicroVM ids, step ids)
  kText,        // printable UTF-8 with spaces (idempotency-key)
  kJson,        // JSON text: tab, CR and LF are allowed (strategy, matrix)
  kUrl,         // http:// or https:// and printable ASCII
  kRegion,      // lower-case letters, digits and '-'
  kRoleArn,     // arn:aws...:iam::<12 digits>:role/...
  kLogGroup,    // the service model's CloudWatch log group pattern
  kLabels,      // a comma- or newline-separated list of labels
  kServer,      // a server name, or an lmvm1_/lmvm2_ handle
  kStateTable,  // dynamodb:TABLE, sqlite:PATH or memory:
};

struct InputRule {
  std::string name;                       // the input (and flag) name
  std::vector<std::string> env_fallback;  // runtime variables read when the input is unset
  InputForm form;
  size_t max_bytes;
};

// Every input of action.yml that mvr reads, and every flag of `mvr start`/`mvr stop`.
const std::vector<InputRule>& InputRules();

// Checks every input given (as a flag or INPUT_ variable) whatever the mode, since action.yml
// passes all of them to both; and for the inputs named in `used` (the mode's own), the runtime
// variable that stands in for an unset one. The first bad value is InvalidArgument naming the
// input (or variable), what is wrong and what to give; the value is quoted only as printable
// ASCII, and a secret never.
Status CheckInputs(const InputReader& in, const std::vector<std::string>& used);

// One value against one rule; `label` names it in the message ("input 'server'", "GITHUB_JOB").
Status CheckInputValue(const InputRule& rule, const std::string& label, const std::string& value);

}  // namespace mvr::action

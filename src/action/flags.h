// The flags of `mvr start` and `mvr stop`: every Action input except the token (which never goes
// on a command line) and `mode`/`mvr-path` (action.yml's own), plus the identity values the
// Actions runtime gives a step, for use outside Actions. One table, so that the CLI, action.yml
// and docs/action.md can be checked against it.
// Thread-safety: immutable tables.
#pragma once

#include <string>
#include <vector>

namespace mvr::action {

struct FlagDoc {
  std::string name;  // without the leading "--"
  std::string help;
  // An input of action.yml (forwarded there as INPUT_<NAME>), or a value the Actions runtime
  // provides itself (GITHUB_*, the strategy and matrix contexts).
  bool action_input = true;
};

const std::vector<FlagDoc>& StartFlags();
const std::vector<FlagDoc>& StopFlags();

}  // namespace mvr::action

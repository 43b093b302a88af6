// The MicroVMs emulator's SigV4 keys file (--verify-sigv4-keys): one "ACCESS_KEY_ID SECRET" (or
// "ACCESS_KEY_ID:SECRET") per line; blank lines and lines starting with '#' are skipped.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr::emulate::microvms {

// Access key id → secret. InvalidArgument naming `source` and the line number for a line without
// both parts; the message never holds a secret.
Result<std::map<std::string, std::string>> ParseSigv4Keys(std::string_view text,
                                                          std::string_view source);

}  // namespace mvr::emulate::microvms

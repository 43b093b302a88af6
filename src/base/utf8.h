// UTF-8 well-formedness. Servers check request text (paths, query values, headers) with it before
// that text reaches nlohmann::json, whose dump() throws on bytes that are not UTF-8.
// Thread-safety: a pure function.
#pragma once

#include <string_view>

namespace mvr {

// Whether `text` is well-formed UTF-8: no stray continuation bytes, truncated sequences, overlong
// forms, surrogates or code points past U+10FFFF.
bool IsValidUtf8(std::string_view text);

}  // namespace mvr

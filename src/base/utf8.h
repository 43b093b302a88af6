// UTF-8 well-formedness. Servers check request text (paths, query values, headers) with it before
// that text reaches nlohmann::json, whose dump() throws on bytes that are not UTF-8.
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <string_view>

namespace mvr {

// Whether `text` is well-formed UTF-8: no stray continuation bytes, truncated sequences, overlong
// forms, surrogates or code points past U+10FFFF.
bool IsValidUtf8(std::string_view text);

// The first `max_bytes` of `text`, or fewer so that the cut does not fall inside a character: a
// sequence the cut would split is left out whole. Text past the cut that is not UTF-8 anyway is
// cut at `max_bytes`.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace mvr

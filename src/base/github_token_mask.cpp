#include "base/github_token_mask.h"

#include <array>
#include <cctype>
#include <string_view>

namespace mvr {
namespace {

constexpr std::array<std::string_view, 6> kPrefixes = {"ghp_", "gho_", "ghu_",
                                                       "ghs_", "ghr_", "github_pat_"};

bool BodyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// The length of the token-shaped run at `pos` (prefix and body), or 0.
size_t TokenAt(std::string_view text, size_t pos) {
  // A prefix inside a longer word ("xghp_...") is not a token's start.
  if (pos > 0 && BodyChar(text[pos - 1])) return 0;
  for (std::string_view prefix : kPrefixes) {
    if (text.substr(pos, prefix.size()) != prefix) continue;
    size_t end = pos + prefix.size();
    while (end < text.size() && BodyChar(text[end])) ++end;
    // A trailing '.' ends a sentence more often than a token (base64url never ends in '.').
    while (end > pos + prefix.size() && text[end - 1] == '.') --end;
    return end - pos - prefix.size() >= kMinTokenBody ? end - pos : 0;
  }
  return 0;
}

}  // namespace

std::string MaskGitHubTokens(std::string text) {
  std::string out;
  size_t copied = 0;
  for (size_t pos = text.find('g'); pos != std::string::npos; pos = text.find('g', pos)) {
    const size_t length = TokenAt(text, pos);
    if (length == 0) {
      ++pos;
      continue;
    }
    out.append(text, copied, pos - copied);
    out += "***";
    pos += length;
    copied = pos;
  }
  if (copied == 0) return text;
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace mvr

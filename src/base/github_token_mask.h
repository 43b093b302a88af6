// Masks GitHub credentials by their shape, for the ones nobody registered with a Redactor (a
// token quoted back in an error body, a token another tool printed). GitHub's token prefixes
// (ghp_ personal, github_pat_ fine-grained, gho_ OAuth, ghu_ user-to-server, ghs_ installation,
// ghr_ refresh) followed by at least kMinTokenBody characters of [A-Za-z0-9_.-]: the classic
// 36-character bodies and the ~520-character stateless installation tokens of 2026-04, whose
// body is three base64url parts joined by '.', are masked whole, dots included.
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace mvr {

// Shorter bodies are left alone: "ghs_token" in prose is not a credential.
inline constexpr size_t kMinTokenBody = 20;

// `text` with every GitHub-token-shaped run replaced by "***".
std::string MaskGitHubTokens(std::string text);

}  // namespace mvr

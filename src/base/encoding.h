// Byte encodings shared by the clients and servers: hex, base64 (standard and URL-safe), URL
// percent-encoding as SigV4 wants it, SHA-256 and HMAC-SHA256 over OpenSSL, constant-time compare.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mvr {

std::string HexEncode(std::string_view bytes);
Result<std::string> HexDecode(std::string_view hex);
std::string Base64Encode(std::string_view bytes);
std::string Base64UrlEncode(std::string_view bytes);         // no padding
Result<std::string> Base64Decode(std::string_view text);     // accepts padding or none
Result<std::string> Base64UrlDecode(std::string_view text);  // accepts padding or none
// RFC 3986 unreserved characters kept; everything else %XX (upper-case). With encode_slash false,
// '/' is kept too (paths).
std::string UriEncode(std::string_view text, bool encode_slash = true);
Result<std::string> UriDecode(std::string_view text);
std::string Sha256(std::string_view data);  // raw 32 bytes
std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
// ASCII lower case (header names, logins, labels); other bytes are kept as they are.
std::string AsciiLower(std::string text);
// `text` as one word for /bin/sh: in single quotes, each ' written '\''.
std::string ShellQuote(std::string_view text);
// A value from outside as an error message may quote it: its first max_bytes bytes, each one
// outside printable ASCII shown as '?', and "..." when it was longer. Always valid UTF-8 (a JSON
// answer can carry it) and one line (a log can).
std::string PrintableExcerpt(std::string_view text, size_t max_bytes);
// Timing-safe equality (length differences return false without early exit on content).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace mvr

#include "supervisor/run_payload.h"

#include <zlib.h>

#include <cstdint>

#include "base/encoding.h"

namespace mvr::supervisor {
namespace {

// A decoded body larger than this is refused before it is fully inflated (a deflate bomb).
constexpr size_t kMaxInflatedBytes = 64 * 1024;
// Flag bit in the first body byte of version 1: the JIT config was standard base64 and is stored
// as its decoded bytes (a third smaller before compression), to be re-encoded on decode.
constexpr uint8_t kJitStoredDecoded = 0x01;

Result<std::string> Deflate(std::string_view in) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("zlib deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Internal("zlib deflate did not finish");
  return out;
}

Result<std::string> Inflate(std::string_view in) {
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Internal("zlib inflateInit2 failed");
  std::string out;
  char buf[4096];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return InvalidArgument("run-hook payload body is not valid deflate data");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > kMaxInflatedBytes) {
      inflateEnd(&zs);
      return InvalidArgument("run-hook payload body inflates past " +
                             std::to_string(kMaxInflatedBytes) + " bytes; refusing it");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return InvalidArgument("run-hook payload body is truncated deflate data");
    }
  }
  inflateEnd(&zs);
  return out;
}

Status UnsupportedVersion(std::string_view version) {
  std::string shown(version.substr(0, 8));
  for (char& c : shown) {
    if (c < '0' || c > '9') c = '?';
  }
  Status s = InvalidArgument(
      "run-hook payload version " + shown +
      " is not supported by this supervisor (it understands 1 = ephemeral, "
      "2 and 4 = warm, 3 and 5 = delivered); use an Action/runner-set release that matches the "
      "image, or rebuild the image with a newer mvr");
  s.WithErrorType(kUnsupportedVersionErrorType);
  return s;
}

// The version a payload is written with: 2/3 without a nonce, 4/5 with one.
int VersionOf(const RunPayload& p) {
  if (p.mode == LaunchMode::kEphemeral) return 1;
  const bool nonce = !p.control_nonce.empty();
  if (p.mode == LaunchMode::kWarm) return nonce ? 4 : 2;
  return nonce ? 5 : 3;
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Versions 2-5: an empty body, or (4 and 5) exactly the 16 nonce bytes.
Result<RunPayload> DecodeControlBody(std::string_view version, std::string body) {
  RunPayload out;
  out.mode = version == "2" || version == "4" ? LaunchMode::kWarm : LaunchMode::kDelivered;
  const std::string what =
      "a version " + std::string(version) + " (" + LaunchModeName(out.mode) + ") run-hook payload";
  if (version == "2" || version == "3") {
    if (!body.empty()) return InvalidArgument(what + " must have an empty body");
    return out;
  }
  if (body.size() != kControlNonceBytes) {
    std::fill(body.begin(), body.end(), '\0');
    return InvalidArgument(what + " carries a control nonce of " + std::to_string(body.size()) +
                           " bytes; it must be " + std::to_string(kControlNonceBytes) +
                           " (the payload was not written by mvr's encoder)");
  }
  out.control_nonce = Secret(HexEncode(body));
  std::fill(body.begin(), body.end(), '\0');
  return out;
}

}  // namespace

Status CheckControlNonce(const Secret& nonce) {
  const std::string& text = nonce.Reveal();
  if (text.size() != kControlNonceHexChars) {
    return InvalidArgument("a control nonce must be " + std::to_string(kControlNonceHexChars) +
                           " hex characters; this one has " + std::to_string(text.size()));
  }
  for (char c : text) {
    if (!IsLowerHex(c)) {
      return InvalidArgument("a control nonce must be lowercase hex characters only");
    }
  }
  return Status::Ok();
}

Secret NewControlNonce(Random& secure_random) {
  return Secret(secure_random.Hex(kControlNonceBytes));
}

Result<Secret> DeriveControlNonce(const Secret& control_key, std::string_view launch_token) {
  if (control_key.empty()) return InvalidArgument("no control key to derive a control nonce from");
  if (launch_token.empty()) {
    return InvalidArgument("no launch token to derive a control nonce from");
  }
  std::string data = "mvr-control-nonce-v1\n";
  data += launch_token;
  std::string mac = HmacSha256(control_key.Reveal(), data);
  Secret nonce(HexEncode(std::string_view(mac).substr(0, kControlNonceBytes)));
  std::fill(mac.begin(), mac.end(), '\0');
  return nonce;
}

Result<Secret> DeriveBoundControlNonce(const Secret& control_key, const NonceBinding& binding,
                                       std::string_view launch_token) {
  if (control_key.empty()) return InvalidArgument("no control key to derive a control nonce from");
  if (launch_token.empty()) {
    return InvalidArgument("no launch token to derive a control nonce from");
  }
  if (binding.repository_id.find('\n') != std::string::npos ||
      binding.region.find('\n') != std::string::npos) {
    return InvalidArgument("a control nonce's repository id or region holds a line break");
  }
  std::string data = "mvr-control-nonce-v2\n" + binding.repository_id + "\n" + binding.region +
                     "\n" + std::string(launch_token);
  std::string mac = HmacSha256(control_key.Reveal(), data);
  Secret nonce(HexEncode(std::string_view(mac).substr(0, kControlNonceBytes)));
  std::fill(mac.begin(), mac.end(), '\0');
  return nonce;
}

const char* LaunchModeName(LaunchMode mode) {
  switch (mode) {
    case LaunchMode::kWarm:
      return "warm";
    case LaunchMode::kDelivered:
      return "delivered";
    case LaunchMode::kEphemeral:
      break;
  }
  return "ephemeral";
}

Result<std::string> EncodeRunPayload(const RunPayload& payload) {
  std::string body;
  if (payload.mode == LaunchMode::kEphemeral) {
    if (payload.jit_config.empty()) {
      return InvalidArgument("an ephemeral run-hook payload needs the runner's JIT config");
    }
    const std::string& jit = payload.jit_config.Reveal();
    auto decoded = Base64Decode(jit);
    if (decoded.ok() && Base64Encode(*decoded) == jit) {
      body.push_back(static_cast<char>(kJitStoredDecoded));
      body += *decoded;
    } else {
      body.push_back('\0');
      body += jit;
    }
    if (!payload.control_nonce.empty()) {
      return InvalidArgument(
          "an ephemeral run-hook payload takes no control nonce: nothing is ever delivered to it");
    }
  } else if (!payload.jit_config.empty()) {
    return InvalidArgument(
        std::string("a ") + LaunchModeName(payload.mode) +
        " run-hook payload must not carry a JIT config; its runner arrives through the control "
        "endpoint");
  } else if (!payload.control_nonce.empty()) {
    MVR_RETURN_IF_ERROR(CheckControlNonce(payload.control_nonce));
    MVR_ASSIGN_OR_RETURN(body, HexDecode(payload.control_nonce.Reveal()));
  }
  MVR_ASSIGN_OR_RETURN(std::string packed, Deflate(body));
  std::fill(body.begin(), body.end(), '\0');
  // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "v" + ... .
  std::string text(1, 'v');
  text += std::to_string(VersionOf(payload));
  text += '.';
  text += Base64UrlEncode(packed);
  if (text.size() > kMaxRunHookPayloadBytes) {
    Status s = InvalidArgument("encoded run-hook payload is " + std::to_string(text.size()) +
                               " bytes, over the service limit of " +
                               std::to_string(kMaxRunHookPayloadBytes) +
                               "; the JIT config is unusually large (check runner labels and "
                               "name lengths)");
    s.WithErrorType(kPayloadTooLargeErrorType);
    return s;
  }
  return text;
}

Result<RunPayload> DecodeRunPayload(std::string_view text) {
  if (text.size() > kMaxRunHookPayloadBytes) {
    Status s =
        InvalidArgument("run-hook payload is " + std::to_string(text.size()) +
                        " bytes, over the limit of " + std::to_string(kMaxRunHookPayloadBytes));
    s.WithErrorType(kPayloadTooLargeErrorType);
    return s;
  }
  if (text.empty()) return InvalidArgument("run-hook payload is empty");
  size_t dot = text.find('.');
  if (text[0] != 'v' || dot == std::string_view::npos || dot == 1) {
    return InvalidArgument(
        "run-hook payload is not in the mvr format \"v<version>.<data>\"; it must be produced by "
        "mvr's payload encoder");
  }
  std::string_view version = text.substr(1, dot - 1);
  if (version.size() != 1 || version[0] < '1' || version[0] > '5') {
    return UnsupportedVersion(version);
  }
  auto packed = Base64UrlDecode(text.substr(dot + 1));
  if (!packed.ok()) return InvalidArgument("run-hook payload data is not valid base64url");
  MVR_ASSIGN_OR_RETURN(std::string body, Inflate(*packed));
  if (version != "1") return DecodeControlBody(version, std::move(body));
  RunPayload out;
  out.mode = LaunchMode::kEphemeral;
  if (body.size() < 2) {
    return InvalidArgument("a version 1 (ephemeral) run-hook payload has no JIT config");
  }
  uint8_t flags = static_cast<uint8_t>(body[0]);
  if ((flags & ~kJitStoredDecoded) != 0) {
    return InvalidArgument("a version 1 run-hook payload has unknown flags");
  }
  if (flags & kJitStoredDecoded) {
    out.jit_config = Secret(Base64Encode(std::string_view(body).substr(1)));
  } else {
    out.jit_config = Secret(body.substr(1));
  }
  std::fill(body.begin(), body.end(), '\0');
  return out;
}

}  // namespace mvr::supervisor

#include "base/secret_finder.h"

#include <cstring>

namespace mvr {
namespace {

constexpr size_t kFilterBits = size_t{1} << 16;

size_t FilterBit(uint64_t window) {
  return static_cast<size_t>((window * 0x9E3779B97F4A7C15ull) >> 48);  // the top 16 bits
}

}  // namespace

uint64_t SecretFinder::WindowAt(const char* p) {
  uint64_t window = 0;
  std::memcpy(&window, p, kWindow);
  return window;
}

SecretFinder::SecretFinder(const std::vector<std::string>& secrets) : filter_(kFilterBits / 64, 0) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    if (secret.size() < kWindow) {
      short_.push_back(secret);
      continue;
    }
    const uint64_t window = WindowAt(secret.data());
    by_window_[window].push_back(secret);
    const size_t bit = FilterBit(window);
    filter_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
}

bool SecretFinder::FoundIn(std::string_view text) const {
  for (const std::string& secret : short_) {
    if (text.find(secret) != std::string_view::npos) return true;
  }
  if (by_window_.empty() || text.size() < kWindow) return false;
  for (size_t at = 0; at + kWindow <= text.size(); ++at) {
    const uint64_t window = WindowAt(text.data() + at);
    const size_t bit = FilterBit(window);
    if ((filter_[bit / 64] & (uint64_t{1} << (bit % 64))) == 0) continue;
    auto it = by_window_.find(window);
    if (it == by_window_.end()) continue;
    for (const std::string& secret : it->second) {
      if (text.substr(at, secret.size()) == secret) return true;
    }
  }
  return false;
}

}  // namespace mvr

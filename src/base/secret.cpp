#include "base/secret.h"

#include <openssl/crypto.h>

namespace mvr {

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    Clear();
    value_ = std::move(other.value_);
    other.Clear();
  }
  return *this;
}

void Secret::Clear() {
  if (!value_.empty()) OPENSSL_cleanse(value_.data(), value_.size());
  value_.clear();
}

bool Secret::operator==(const Secret& other) const {
  return value_.size() == other.value_.size() &&
         CRYPTO_memcmp(value_.data(), other.value_.data(), value_.size()) == 0;
}

}  // namespace mvr

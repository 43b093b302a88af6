// Random: every random draw in mvr goes through this seam. SeededRandom gives the same sequence
// for the same seed (tests, simulation); SecureRandom draws from the OS CSPRNG and is the only
// source allowed for secrets, tokens and request ids that must not be guessed.
// Thread-safety: both implementations are safe to share between threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace mvr {

class Random {
 public:
  virtual ~Random() = default;
  virtual uint64_t Next64() = 0;

  // Uniform in [0, n); n == 0 returns 0.
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1).
  double UniformDouble();
  // `bytes` random bytes, hex-encoded (2 * bytes characters).
  std::string Hex(size_t bytes);
  // Raw random bytes.
  std::string Bytes(size_t count);
};

// xoshiro256** seeded through splitmix64.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t Next64() override;

 private:
  std::mutex mu_;
  uint64_t s_[4];
};

// OpenSSL RAND_bytes. Aborts if the CSPRNG fails (there is no safe fallback).
class SecureRandom final : public Random {
 public:
  uint64_t Next64() override;
};

}  // namespace mvr

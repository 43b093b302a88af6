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
  // Starts a new sequence from `seed`, as if newly constructed. A process cloned from a VM
  // snapshot calls it with a seed from the OS, or every clone would draw the same numbers.
  void Reseed(uint64_t seed);

 private:
  std::mutex mu_;
  uint64_t s_[4];
};

// getrandom(2): the kernel's pool, which is reseeded when a VM snapshot is restored (vmgenid),
// unlike any state held in this process. Aborts if it fails.
class OsRandom final : public Random {
 public:
  uint64_t Next64() override;
};

// OpenSSL RAND_bytes. Aborts if the CSPRNG fails (there is no safe fallback).
class SecureRandom final : public Random {
 public:
  uint64_t Next64() override;
};

}  // namespace mvr

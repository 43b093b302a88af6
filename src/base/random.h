// Random: every random draw in mvr goes through this seam. SeededRandom gives the same sequence
// for the same seed (tests, simulation); SecureRandom draws from the OS CSPRNG and is the only
// source allowed for secrets, tokens and request ids that must not be guessed.
// Thread-safety: both implementations are safe to share between threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

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

// getrandom(2): the kernel's generator. Aborts if it fails. In a VM restored from a snapshot the
// kernel's generator is a clone too, unless the hypervisor announces the clone (vmgenid) and the
// kernel acts on it: every clone then draws the same numbers until its next scheduled reseed
// (seen under QEMU, tests/e2e/vm_e2e_test.cpp). ReseedAfterRestore fixes that.
class OsRandom final : public Random {
 public:
  uint64_t Next64() override;
  // After a restore from a snapshot: mixes `unique` (something that differs between clones, such
  // as a hook's payload), the CPU's own generator (RDRAND, which no snapshot holds) and the clocks
  // into the kernel's pool, asks the kernel to reseed its generator from it now (needs
  // CAP_SYS_ADMIN; without it the kernel's next scheduled reseed takes the input), and reseeds
  // OpenSSL's generator. Returns a seed for in-process generators that mixes the same input with
  // a fresh draw, so it differs between clones even where the kernel could not be reseeded.
  uint64_t ReseedAfterRestore(std::string_view unique);
};

// OpenSSL RAND_bytes. Aborts if the CSPRNG fails (there is no safe fallback).
class SecureRandom final : public Random {
 public:
  uint64_t Next64() override;
};

}  // namespace mvr

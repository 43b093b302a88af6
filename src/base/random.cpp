#include "base/random.h"

#include <fcntl.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <linux/random.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mvr {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t Random::Uniform(uint64_t n) {
  if (n == 0) return 0;
  // Rejection sampling avoids modulo bias.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do {
    v = Next64();
  } while (v >= limit);
  return v % n;
}

double Random::UniformDouble() { return static_cast<double>(Next64() >> 11) * 0x1.0p-53; }

std::string Random::Bytes(size_t count) {
  std::string out;
  out.reserve(count + 8);
  while (out.size() < count) {
    uint64_t v = Next64();
    for (int i = 0; i < 8 && out.size() < count; ++i)
      out.push_back(static_cast<char>(v >> (8 * i)));
  }
  return out;
}

std::string Random::Hex(size_t bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string raw = Bytes(bytes);
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

SeededRandom::SeededRandom(uint64_t seed) { Reseed(seed); }

void SeededRandom::Reseed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t x = seed;
  for (auto& s : s_) s = SplitMix64(x);
}

namespace {

// Up to 4 draws of the CPU's hardware generator, or none where it has none.
std::string HardwareRandomBytes() {
  std::string out;
#if defined(__x86_64__)
  // CPUID leaf 1, ECX bit 30: RDRAND. (clang 14 knows no "rdrnd" for __builtin_cpu_supports, and
  // the fuzz tree builds with clang.)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_RDRND) == 0) return out;
  for (int i = 0; i < 4; ++i) {
    unsigned long long v = 0;
    unsigned char ok = 0;
    for (int tries = 0; tries < 10 && !ok; ++tries) {
      asm volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
    }
    if (ok) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
#endif
  return out;
}

std::string ClockBytes() {
  std::string out;
  for (clockid_t id : {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME}) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    out.append(reinterpret_cast<const char*>(&ts), sizeof ts);
  }
  return out;
}

}  // namespace

uint64_t OsRandom::ReseedAfterRestore(std::string_view unique) {
  std::string input(unique);
  input += HardwareRandomBytes();
  input += ClockBytes();
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  OPENSSL_cleanse(input.data(), input.size());
  // A write to /dev/urandom mixes into the kernel's input pool (uncredited); RNDRESEEDCRNG makes
  // the generator take it now rather than at its next scheduled reseed.
  int fd = ::open("/dev/urandom", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (::write(fd, digest, sizeof digest) == static_cast<ssize_t>(sizeof digest)) {
      ::ioctl(fd, RNDRESEEDCRNG);
    }
    ::close(fd);
  }
  RAND_seed(digest, sizeof digest);
  uint64_t mixed = 0;
  std::memcpy(&mixed, digest, sizeof mixed);
  OPENSSL_cleanse(digest, sizeof digest);
  return mixed ^ Next64();
}

uint64_t OsRandom::Next64() {
  uint64_t v = 0;
  ssize_t n;
  do {
    n = ::getrandom(&v, sizeof(v), 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(v))) std::abort();
  return v;
}

uint64_t SeededRandom::Next64() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t SecureRandom::Next64() {
  uint64_t v = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof(v)) != 1) std::abort();
  return v;
}

}  // namespace mvr

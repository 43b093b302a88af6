// The platform labels of a runner that runs on a Lambda MicroVM: the platform is ARM64 Linux only,
// so a job whose runs-on names another architecture or OS (x64, windows, ...) must never be run
// on one, and every runner mvr registers says what it is (self-hosted, linux, ARM64), never x64.
// GitHub compares labels case-insensitively; so do these.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mvr::github {

// GitHub's architecture label of an ARM64 runner.
inline constexpr std::string_view kArm64Label = "ARM64";

// Whether `label` names an architecture or OS a MicroVM is not: x64, X64, amd64, x86, x86_64,
// x86-64, arm (32-bit), arm32, armv7, windows, macos (case-insensitive).
bool IsForeignPlatformLabel(std::string_view label);

// The first of `labels` that IsForeignPlatformLabel, as written; nullopt when none.
std::optional<std::string> ForeignPlatformLabel(const std::vector<std::string>& labels);

// The labels to register an ARM64 MicroVM's runner with: "self-hosted", "linux", "ARM64", then
// `custom` in order, each once (case-insensitively), at most 100 (GitHub's limit). A foreign
// platform label in `custom` is dropped: callers refuse those before they register.
std::vector<std::string> Arm64RunnerLabels(const std::vector<std::string>& custom);

}  // namespace mvr::github

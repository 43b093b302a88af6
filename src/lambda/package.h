// The Lambda deployment package of the runner set: a zip for the provided.al2023 runtime holding
// `bootstrap` (a /bin/sh launcher), lib/mvr (the mvr executable for the function's
// architecture) and every shared library mvr needs, down to glibc and its dynamic loader, which
// `bootstrap` runs explicitly. So the package depends on nothing of the image but /bin/sh and the
// kernel (AL2023 ships glibc 2.34; Debian 12 builds against 2.36). The same inputs give the same
// bytes (base/zip_writer.h).
// Thread-safety: pure functions over the injected file reader.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "lambda/elf_info.h"

namespace mvr::lambda {

enum class LambdaArch { kX86_64, kArm64 };
// "x86_64" | "arm64" (Lambda's names); InvalidArgument otherwise.
Result<LambdaArch> ParseLambdaArch(const std::string& name);
const char* LambdaArchName(LambdaArch arch);
ElfMachine MachineOf(LambdaArch arch);
// The dynamic loader's file name: ld-linux-x86-64.so.2, ld-linux-aarch64.so.1.
const char* LoaderName(LambdaArch arch);
// Where Debian keeps that architecture's libraries (multiarch and cross paths).
std::vector<std::string> DefaultLibraryDirs(LambdaArch arch);

// The `bootstrap` script for `arch`.
std::string BootstrapScript(LambdaArch arch);

struct PackageInputs {
  LambdaArch arch = LambdaArch::kX86_64;
  std::string binary;  // the (stripped) mvr executable's bytes
  std::vector<std::string> library_dirs;
  // Reads a file's bytes (following symlinks); NotFound when there is none.
  std::function<Result<std::string>(const std::string& path)> read_file;
};

struct PackageContents {
  std::string zip;
  std::vector<std::string> libraries;  // the file names bundled under lib/, sorted
};

// How a binary was built, read from the marker src/cli/version_command.cpp leaves in its bytes:
// build_type is CMake's (Release, RelWithDebInfo, Quick, ...), flavour "mvr-lambda" (the bootstrap
// build: `lambda` and `version`, no libcurl) or "mvr" (everything). Both empty when no marker.
struct BuildMarker {
  std::string build_type;
  std::string flavour;
};
BuildMarker BuildMarkerOf(std::string_view binary);

// What `mvr package lambda` warns about the binary it packs, one line each: the whole mvr instead
// of the bootstrap build (more than twice the cold start: 37 libraries instead of 10), or a build
// type without full optimisation (the test tiers' Quick, -O1: about 1.5 times the CPU; Debug);
// empty for a release mvr-lambda.
std::vector<std::string> PackageWarnings(const BuildMarker& marker);

// InvalidArgument when the binary is not an ELF executable for `arch`; NotFound naming a library
// found in none of the directories.
Result<PackageContents> BuildLambdaPackage(const PackageInputs& inputs);

}  // namespace mvr::lambda

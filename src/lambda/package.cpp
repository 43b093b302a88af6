#include "lambda/package.h"

#include <algorithm>
#include <deque>
#include <map>

#include "base/zip_writer.h"

namespace mvr::lambda {

Result<LambdaArch> ParseLambdaArch(const std::string& name) {
  if (name == "x86_64") return LambdaArch::kX86_64;
  if (name == "arm64") return LambdaArch::kArm64;
  return InvalidArgument("--arch: '" + name + "' is not a Lambda architecture (x86_64 or arm64)");
}

const char* LambdaArchName(LambdaArch arch) {
  return arch == LambdaArch::kArm64 ? "arm64" : "x86_64";
}

ElfMachine MachineOf(LambdaArch arch) {
  return arch == LambdaArch::kArm64 ? ElfMachine::kAarch64 : ElfMachine::kX86_64;
}

const char* LoaderName(LambdaArch arch) {
  return arch == LambdaArch::kArm64 ? "ld-linux-aarch64.so.1" : "ld-linux-x86-64.so.2";
}

std::vector<std::string> DefaultLibraryDirs(LambdaArch arch) {
  if (arch == LambdaArch::kArm64) {
    return {"/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/aarch64-linux-gnu/lib"};
  }
  return {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/lib64"};
}

std::string BootstrapScript(LambdaArch arch) {
  // ${0%/*} rather than $(dirname "$0"): no extra process on the cold-start path.
  return std::string(
             "#!/bin/sh\n"
             "# mvr on AWS Lambda (provided.al2023): the bundled mvr with its own glibc and\n"
             "# libraries; _HANDLER picks the function (docs/lambda.md).\n"
             "case \"$0\" in */*) here=\"${0%/*}\" ;; *) here=. ;; esac\n"
             "exec \"$here/lib/") +
         LoaderName(arch) + "\" --library-path \"$here/lib\" \"$here/lib/mvr\" lambda \"$@\"\n";
}

BuildMarker BuildMarkerOf(std::string_view binary) {
  constexpr std::string_view kTag = "mvr-build-marker:";
  BuildMarker m;
  const size_t at = binary.find(kTag);
  if (at == std::string_view::npos) return m;
  std::string_view rest = binary.substr(at + kTag.size(), 64);
  const size_t semi1 = rest.find(';');
  const size_t semi2 = semi1 == std::string_view::npos ? semi1 : rest.find(';', semi1 + 1);
  if (semi2 == std::string_view::npos) return m;
  m.build_type = std::string(rest.substr(0, semi1));
  m.flavour = std::string(rest.substr(semi1 + 1, semi2 - semi1 - 1));
  return m;
}

std::vector<std::string> PackageWarnings(const BuildMarker& marker) {
  std::vector<std::string> out;
  if (marker.flavour.empty()) {
    out.push_back(
        "the binary carries no build marker (not an mvr of this version?): its cold "
        "start cannot be vouched for; pack this version's mvr-lambda");
    return out;
  }
  if (marker.flavour != "mvr-lambda") {
    out.push_back(
        "packing the whole " + marker.flavour +
        " (libcurl and its ~30 libraries): a cold start more than twice the "
        "bootstrap build's; build the mvr-lambda target beside it (ninja -C TREE mvr-lambda) or "
        "pass --binary TREE/src/cli/mvr-lambda");
  }
  const std::string& t = marker.build_type;
  if (t != "Release" && t != "RelWithDebInfo" && t != "MinSizeRel") {
    out.push_back(
        "the binary was built with CMAKE_BUILD_TYPE=" + (t.empty() ? "(none)" : t) +
        ", not for deployment (Quick is the test tiers' -O1): its cold start takes "
        "about 1.5 times a release build's CPU; build a release tree for the package: bash "
        "scripts/build.sh build-release -DCMAKE_BUILD_TYPE=RelWithDebInfo (docs/lambda.md)");
  }
  return out;
}

Result<PackageContents> BuildLambdaPackage(const PackageInputs& in) {
  MVR_ASSIGN_OR_RETURN(ElfInfo bin, ReadElfInfo(in.binary));
  if (bin.machine != MachineOf(in.arch)) {
    return InvalidArgument(std::string("the mvr binary is not an ") + LambdaArchName(in.arch) +
                           " executable: build mvr for that architecture and pass it with "
                           "--binary");
  }
  std::map<std::string, std::string> libs;  // file name → bytes
  auto find = [&](const std::string& name) -> Result<std::string> {
    for (const std::string& dir : in.library_dirs) {
      Result<std::string> bytes = in.read_file(dir + "/" + name);
      if (bytes.ok()) return bytes;
    }
    return NotFound("the shared library " + name + " is in none of the library directories (" +
                    std::to_string(in.library_dirs.size()) + " searched); install its " +
                    LambdaArchName(in.arch) + " package");
  };
  std::deque<std::string> todo(bin.needed.begin(), bin.needed.end());
  todo.push_back(LoaderName(in.arch));
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (libs.count(name)) continue;
    MVR_ASSIGN_OR_RETURN(std::string bytes, find(name));
    MVR_ASSIGN_OR_RETURN(ElfInfo info, ReadElfInfo(bytes));
    for (const std::string& n : info.needed) todo.push_back(n);
    libs.emplace(name, std::move(bytes));
  }
  PackageContents out;
  std::vector<ZipEntry> entries;
  entries.push_back({"bootstrap", BootstrapScript(in.arch), 0755});
  entries.push_back({"lib/mvr", in.binary, 0755});
  for (auto& [name, bytes] : libs) {
    out.libraries.push_back(name);
    entries.push_back({"lib/" + name, std::move(bytes), 0755});
  }
  MVR_ASSIGN_OR_RETURN(out.zip, WriteZip(std::move(entries)));
  return out;
}

}  // namespace mvr::lambda

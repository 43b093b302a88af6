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

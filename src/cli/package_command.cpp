// `mvr package lambda --arch arm64|x86_64 --output FILE.zip [--binary PATH]`: the runner set's
// Lambda deployment package for provided.al2023 (src/lambda/package.h says what is inside). The
// binary defaults to `mvr-lambda` beside this mvr (the bootstrap build without libcurl), else
// this mvr, when the architecture is this machine's; it is stripped (with
// `strip`, or `aarch64-linux-gnu-strip` for arm64) into a temporary copy first. Same inputs →
// same zip bytes.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "base/files.h"
#include "cli/commands.h"
#include "lambda/package.h"
#include "process/process_runner.h"

namespace mvr::cli {
namespace {

struct PackageFlags {
  std::string arch;
  std::string output;
  std::string binary;
  bool no_strip = false;
};

Result<std::string> StrippedBinary(const PackageFlags& f, lambda::LambdaArch arch,
                                   const std::string& binary) {
  if (f.no_strip) return ReadFile(binary, "--binary");
  MVR_ASSIGN_OR_RETURN(TemporaryDirectory tmp, TemporaryDirectory::Create("mvr-package"));
  const std::string out = tmp.path() + "/mvr";
  process::PosixProcessRunner runner;
  process::ProcessSpec spec;
  spec.argv = {arch == lambda::LambdaArch::kArm64 ? "aarch64-linux-gnu-strip" : "strip",
               "--strip-all", "-o", out, binary};
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  MVR_ASSIGN_OR_RETURN(process::CommandResult r, runner.Run(spec, Duration(120'000)));
  if (!r.exit.ok()) {
    return InvalidArgument("stripping " + binary + " with " + spec.argv[0] +
                           " failed (install binutils, or pass --no-strip)");
  }
  return ReadFile(out, "stripped binary");
}

int RunPackageLambda(const PackageFlags& f) {
  auto fail = [](const Status& s) {
    std::cerr << "mvr package lambda: " << s.message() << std::endl;
    return 2;
  };
  Result<lambda::LambdaArch> arch = lambda::ParseLambdaArch(f.arch);
  if (!arch.ok()) return fail(arch.status());
  std::string binary = f.binary;
  if (binary.empty()) {
    // Resolved here: handed to strip, /proc/self/exe would name strip itself.
    std::error_code ec;
    binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return fail(InvalidArgument("cannot find this mvr's executable: pass --binary"));
    // The bootstrap build (no libcurl: a faster cold start) when it was built beside mvr.
    const std::string bootstrap = binary.substr(0, binary.rfind('/') + 1) + "mvr-lambda";
    if (std::filesystem::exists(bootstrap, ec)) binary = bootstrap;
  }
  Result<std::string> bytes = StrippedBinary(f, *arch, binary);
  if (!bytes.ok()) return fail(bytes.status());
  const lambda::BuildMarker marker = lambda::BuildMarkerOf(*bytes);
  for (const std::string& w : lambda::PackageWarnings(marker)) {
    std::cerr << "mvr package lambda: warning: " << w << std::endl;
  }
  lambda::PackageInputs in;
  in.arch = *arch;
  in.binary = std::move(*bytes);
  in.library_dirs = lambda::DefaultLibraryDirs(*arch);
  in.read_file = [](const std::string& path) { return ReadFile(path, "shared library"); };
  Result<lambda::PackageContents> pkg = lambda::BuildLambdaPackage(in);
  if (!pkg.ok()) return fail(pkg.status());
  const std::string tmp = f.output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(pkg->zip.data(), static_cast<std::streamsize>(pkg->zip.size()));
    if (!out) return fail(InvalidArgument("--output: cannot write " + tmp));
  }
  if (std::rename(tmp.c_str(), f.output.c_str()) != 0) {
    return fail(InvalidArgument("--output: cannot move " + tmp + " to " + f.output));
  }
  std::cout << "mvr package lambda: " << f.output << " (" << lambda::LambdaArchName(*arch) << ", "
            << pkg->zip.size() << " bytes, bootstrap + "
            << (marker.flavour.empty() ? "mvr" : marker.flavour) << " ("
            << (marker.build_type.empty() ? "unknown build" : marker.build_type) << ") + "
            << pkg->libraries.size() << " libraries)" << std::endl;
  return 0;
}

}  // namespace

void AddPackageCommand(CLI::App& app, Context& ctx) {
  auto* package = app.add_subcommand("package", "Build deployment packages");
  package->require_subcommand(1);
  auto* lambda = package->add_subcommand(
      "lambda", "The runner set's Lambda zip for provided.al2023 (docs/lambda.md)");
  auto f = std::make_shared<PackageFlags>();
  lambda->add_option("--arch", f->arch, "x86_64 or arm64")->required();
  lambda->add_option("--output", f->output, "the zip to write")->required();
  lambda->add_option("--binary", f->binary,
                     "the mvr executable for that architecture (default: this one)");
  lambda->add_flag("--no-strip", f->no_strip, "bundle the binary as it is");
  lambda->callback([&ctx, f] { ctx.exit_code = RunPackageLambda(*f); });
}

}  // namespace mvr::cli

// The Lambda deployment package: a deterministic zip, every shared library the binary needs
// inside it (down to glibc and its loader, so AL2023's glibc 2.34 is never used), and the
// unpacked zip serving a webhook event against the local fake Runtime API. The arm64 package is
// checked the same way under qemu-user-static when an arm64 mvr is given (MVR_LAMBDA_ARM64_BINARY,
// or build-lambda-arm64/src/cli/mvr beside the build tree), and skipped with a message otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>

#include "base/encoding.h"
#include "base/files.h"
#include "github/workflow_job_payloads.h"
#include "lambda/elf_info.h"
#include "lambda/fake_runtime_api.h"
#include "lambda/package.h"
#include "process/process_runner.h"

namespace mvr::lambda {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kSecret[] = "package-test-webhook-secret-3e1";
const std::string kMvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TemporaryDirectory::Create("mvr-package-test");
    ASSERT_TRUE(dir.ok());
    dir_ = std::make_unique<TemporaryDirectory>(std::move(*dir));
  }

  process::CommandResult Run(std::vector<std::string> argv) {
    process::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    process::RunOptions options;
    options.timeout = Duration(300'000);
    options.capture_stderr = true;
    auto r = processes_.Run(spec, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : process::CommandResult{};
  }

  // Builds the package and unpacks it; returns the directory.
  std::string PackageAndUnpack(const std::string& arch, const std::string& binary,
                               const std::string& name) {
    const std::string zip = dir_->path() + "/" + name + ".zip";
    std::vector<std::string> argv = {kMvr, "package", "lambda", "--arch", arch, "--output", zip};
    if (!binary.empty()) argv.insert(argv.end(), {"--binary", binary});
    auto r = Run(argv);
    EXPECT_TRUE(r.exit.ok()) << r.output << r.error_output;
    const std::string out = dir_->path() + "/" + name;
    auto u = Run({"unzip", "-q", zip, "-d", out});
    EXPECT_TRUE(u.exit.ok()) << u.output << u.error_output;
    return out;
  }

  // Every ELF file under lib/ finds each library it names under lib/ as well.
  void ExpectSelfContained(const std::string& root, ElfMachine machine) {
    std::set<std::string> present;
    for (const auto& e : fs::directory_iterator(root + "/lib")) {
      present.insert(e.path().filename().string());
    }
    int elves = 0;
    for (const std::string& name : present) {
      auto info = ReadElfInfo(Slurp(root + "/lib/" + name));
      ASSERT_TRUE(info.ok()) << name << ": " << info.status().ToString();
      EXPECT_EQ(info->machine, machine) << name;
      ++elves;
      for (const std::string& needed : info->needed) {
        EXPECT_TRUE(present.count(needed)) << name << " needs " << needed << ", not in the zip";
      }
    }
    EXPECT_GT(elves, 2);
    EXPECT_TRUE(present.count("libc.so.6")) << "glibc is bundled, so AL2023's 2.34 is not used";
  }

  // Runs the unpacked function (through `command`) against a fake Runtime API with one signed
  // ~10 KB workflow_job delivery and expects a 202 launch answer.
  void ExpectServesAWebhook(const std::vector<std::string>& command) {
    FakeRuntimeApi fake;
    ASSERT_TRUE(fake.Start().ok());
    github::testing::PayloadOptions o;
    o.labels = {"self-hosted", "lambda-mvm-small"};
    const std::string body = github::testing::WorkflowJobPayload(o);
    json event = {{"version", "2.0"},
                  {"rawPath", "/"},
                  {"headers",
                   {{"x-github-event", "workflow_job"},
                    {"x-github-delivery", "d-1"},
                    {"x-hub-signature-256", "sha256=" + HexEncode(HmacSha256(kSecret, body))}}},
                  {"requestContext", {{"http", {{"method", "POST"}}}}},
                  {"body", Base64Encode(body)},
                  {"isBase64Encoded", true}};
    const std::string id = fake.Enqueue(event.dump());
    json config = {{"runnerSetId", "pkg"},
                   {"github",
                    {{"repository", "octo-org/widget-service"},
                     {"patFile", "env:MVR_PAT"},
                     {"webhookSecretFile", "env:MVR_WEBHOOK_SECRET"}}},
                   {"classes", json::array({{{"label", "lambda-mvm-small"}, {"image", "img-1"}}})},
                   {"store", "sqlite:" + dir_->path() + "/state.db"},
                   {"queue", {{"uri", "sqlite:" + dir_->path() + "/state.db"}}}};
    process::ProcessSpec spec;
    spec.argv = command;
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", fake.endpoint()},
                {"_HANDLER", "webhook"},
                {"MVR_CONFIG", config.dump()},
                {"MVR_WEBHOOK_SECRET", kSecret},
                {"MVR_PAT", "unused-pat-value"},
                {"AWS_REGION", "us-east-1"},
                {"PATH", "/usr/bin:/bin"}};
    spec.output_path = dir_->path() + "/function.log";
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    auto answer = fake.WaitAnswer(id, Duration(120'000));
    fake.Stop();
    (void)processes_.Wait(*pid);
    ASSERT_TRUE(answer.has_value()) << Slurp(spec.output_path);
    ASSERT_EQ(answer->kind, FakeRuntimeApi::Answer::Kind::kResponse) << answer->body;
    json r = json::parse(answer->body);
    EXPECT_EQ(r["statusCode"], 202) << answer->body;
    EXPECT_EQ(Slurp(spec.output_path).find(kSecret), std::string::npos);
  }

  std::unique_ptr<TemporaryDirectory> dir_;
  process::PosixProcessRunner processes_;
};

TEST(ElfInfoTest, ReadsMachineNeededLibrariesAndGlibcVersions) {
  auto info = ReadElfInfo(Slurp(kMvr));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->machine, ElfMachine::kX86_64);
  EXPECT_NE(std::find(info->needed.begin(), info->needed.end(), "libc.so.6"), info->needed.end());
  EXPECT_FALSE(info->version_needs["libc.so.6"].empty());
  EXPECT_EQ(GlibcVersion("GLIBC_2.34"), std::make_pair(2, 34));
  EXPECT_EQ(GlibcVersion("GLIBCXX_3.4"), std::make_pair(0, 0));
  EXPECT_FALSE(ReadElfInfo("#!/bin/sh\n").ok());
}

TEST_F(PackageTest, PackageIsReproducible) {
  const std::string a = dir_->path() + "/a.zip", b = dir_->path() + "/b.zip";
  for (const std::string& out : {a, b}) {
    auto r = Run({kMvr, "package", "lambda", "--arch", "x86_64", "--output", out});
    ASSERT_TRUE(r.exit.ok()) << r.output << r.error_output;
  }
  EXPECT_EQ(Slurp(a), Slurp(b));
}

TEST_F(PackageTest, X86PackageIsSelfContainedAndServesAWebhookEvent) {
  const std::string root = PackageAndUnpack("x86_64", "", "x86");
  struct stat st {};
  ASSERT_EQ(::stat((root + "/bootstrap").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR) << "bootstrap must stay executable";
  ExpectSelfContained(root, ElfMachine::kX86_64);
  ExpectServesAWebhook({root + "/bootstrap"});
}

// The cold start doubles when the package holds the whole mvr or a test build (docs/lambda.md,
// "Cold start"): the marker in the binary says which, and the package command warns.
TEST(BuildMarkerTest, ReadsTheMarkerAndWarnsOnWholeOrUnoptimisedBuilds) {
  std::string bytes(
      "\x7f"
      "ELF junk",
      8);
  bytes += std::string("mvr-build-marker:Release;mvr-lambda;\0more", 42);
  BuildMarker m = BuildMarkerOf(bytes);
  EXPECT_EQ(m.build_type, "Release");
  EXPECT_EQ(m.flavour, "mvr-lambda");
  EXPECT_TRUE(PackageWarnings(m).empty());
  EXPECT_TRUE(PackageWarnings({"RelWithDebInfo", "mvr-lambda"}).empty());

  auto quick = PackageWarnings({"Quick", "mvr-lambda"});
  ASSERT_EQ(quick.size(), 1u);
  EXPECT_NE(quick[0].find("CMAKE_BUILD_TYPE=Quick"), std::string::npos) << quick[0];
  EXPECT_NE(quick[0].find("-DCMAKE_BUILD_TYPE=RelWithDebInfo"), std::string::npos) << quick[0];

  auto whole = PackageWarnings({"Release", "mvr"});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_NE(whole[0].find("mvr-lambda"), std::string::npos) << whole[0];
  EXPECT_EQ(PackageWarnings({"Debug", "mvr"}).size(), 2u);

  EXPECT_TRUE(BuildMarkerOf("no marker here").flavour.empty());
  EXPECT_TRUE(BuildMarkerOf("mvr-build-marker:Release").flavour.empty()) << "unterminated";
  EXPECT_EQ(PackageWarnings(BuildMarkerOf("")).size(), 1u);
}

TEST(BuildMarkerTest, TheBuiltBinariesCarryTheirMarker) {
  BuildMarker whole = BuildMarkerOf(Slurp(kMvr));
  EXPECT_EQ(whole.flavour, "mvr");
  EXPECT_FALSE(whole.build_type.empty());
  const std::string bootstrap = std::string(MVR_BINARY_DIR) + "/src/cli/mvr-lambda";
  if (!fs::exists(bootstrap)) GTEST_SKIP() << "mvr-lambda not built in this tree";
  EXPECT_EQ(BuildMarkerOf(Slurp(bootstrap)).flavour, "mvr-lambda");
}

TEST_F(PackageTest, PackingAWholeMvrWarnsAndNamesIt) {
  auto r = Run({kMvr, "package", "lambda", "--arch", "x86_64", "--output", dir_->path() + "/w.zip",
                "--binary", kMvr});
  ASSERT_TRUE(r.exit.ok()) << r.output << r.error_output;
  EXPECT_NE(r.error_output.find("warning: packing the whole mvr"), std::string::npos)
      << r.error_output;
  EXPECT_NE(r.output.find("bootstrap + mvr ("), std::string::npos) << r.output;
}

TEST_F(PackageTest, WrongArchitectureBinaryIsRefused) {
  auto r = Run({kMvr, "package", "lambda", "--arch", "arm64", "--output", dir_->path() + "/x.zip",
                "--binary", kMvr, "--no-strip"});
  EXPECT_FALSE(r.exit.ok());
  EXPECT_NE(r.error_output.find("not an arm64 executable"), std::string::npos) << r.error_output;
}

TEST_F(PackageTest, Arm64PackageIsSelfContainedAndServesAWebhookEventUnderQemu) {
  std::string binary;
  if (const char* b = std::getenv("MVR_LAMBDA_ARM64_BINARY")) binary = b;
  if (binary.empty()) binary = std::string(MVR_BINARY_DIR) + "/../build-lambda-arm64/src/cli/mvr";
  if (!fs::exists(binary)) {
    GTEST_SKIP() << "no arm64 mvr at " << binary
                 << " (cross-build mvr for arm64 and set MVR_LAMBDA_ARM64_BINARY)";
  }
  if (Run({"sh", "-c", "command -v qemu-aarch64-static"}).exit.code != 0) {
    GTEST_SKIP() << "qemu-aarch64-static is not installed (Debian: qemu-user-static)";
  }
  const std::string root = PackageAndUnpack("arm64", binary, "arm64");
  ExpectSelfContained(root, ElfMachine::kAarch64);
  // No binfmt_misc here: run what bootstrap runs, under qemu.
  ExpectServesAWebhook({"qemu-aarch64-static", root + "/lib/ld-linux-aarch64.so.1",
                        "--library-path", root + "/lib", root + "/lib/mvr", "lambda"});
}

}  // namespace
}  // namespace mvr::lambda

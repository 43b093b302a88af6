// `mvr image build` end to end, every part a real process: moto's S3, `mvr emulate microvms`
// reading s3:// artifacts from it (--s3-endpoint-url), and `mvr image build` pointed at both
// through AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_LAMBDA_MICROVMS. The image's program is the
// emulator tests' guest. Checks: a first build creates, builds from the S3 object and activates;
// a re-run with the same inputs reuses it; a build whose /validate fails exits 1 with the
// service's stateReason and leaves neither a version nor the artifact; `mvr image pack` gives the
// same bytes twice. IAM is enforced: `mvr image build` runs as a moto user holding only
// deploy/iam/image-build.json (moto checks S3, the emulator --iam-policies the MicroVMs calls and
// iam:PassRole), and the emulator reads the artifact as a user holding image-build-role.json (on
// AWS the service assumes that role). Labels e2e and moto; skips without moto_server.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "aws/services/s3.h"
#include "base/json_text.h"
#include "base/time_format.h"
#include "emulate/microvms/emulator_harness.h"
#include "emulate/microvms/host/host_processes.h"
#include "process/process_runner.h"
#include "support/iam_documents.h"
#include "support/moto.h"
#include "support/moto_iam.h"

namespace mvr::imagebuild {
namespace {

using emulate::microvms::GuestBinary;
using emulate::microvms::HostProcessSpec;
using emulate::microvms::MakeTempDir;
using emulate::microvms::ReadText;
using nlohmann::json;
namespace fs = std::filesystem;

std::string MvrBinary() {
  const char* binary = std::getenv("MVR_BINARY");
  return binary != nullptr ? binary : std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class ImageBuildE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_WITH_OR_SKIP(moto_, mvr::testing::EnforcingMotoOptions(MVR_SOURCE_DIR));
    work_ = MakeTempDir("mvr-image-e2e");
    http::CurlHttpClient http;
    http::HttpRequest bucket;
    bucket.method = "PUT";
    bucket.url = moto_->url() + "/artifacts";
    ASSERT_TRUE(http.Send(bucket).ok());
    ASSERT_NO_FATAL_FAILURE(CreateUsers());
    StartEmulator();
    ASSERT_NO_FATAL_FAILURE(StartGitHub("2.337.0", 1));
  }
  void TearDown() override {
    StopEmulator();
    StopGitHub();
    std::error_code ec;
    if (!work_.empty()) fs::remove_all(work_, ec);
  }

  // The builder's and the build role's moto users, the emulator's policies file, then IAM on.
  void CreateUsers() {
    std::map<std::string, std::string> values = mvr::testing::DefaultIamValues();
    values["runner_set"] = "e2e";
    values["bucket"] = "artifacts";
    values["build_role"] = "build";
    mvr::testing::MotoIam iam(moto_->url());
    auto builder = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "image-build.json", values);
    auto role = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "image-build-role.json", values);
    ASSERT_TRUE(builder.ok() && role.ok());
    auto builder_key = iam.CreateUser("mvr-image-build", *builder);
    auto role_key = iam.CreateUser("mvr-build-role", *role);
    ASSERT_TRUE(builder_key.ok() && role_key.ok());
    builder_ = *builder_key;
    auto role_without = iam.CreateUser("mvr-build-role-without-ReadArtifacts",
                                       mvr::testing::WithoutStatement(*role, 0));
    ASSERT_TRUE(role_without.ok()) << role_without.status().ToString();
    build_role_without_ = *role_without;
    as_ = builder_;
    build_role_ = *role_key;
    // The test's own unsigned look-ups (Api) may read anything.
    json policies = {{builder_.access_key_id, json::array({*builder})},
                     {"", json::array({mvr::testing::AllowAll()})}};
    // One more user per statement, holding the policy without it (the least-privilege test).
    const std::vector<std::string> sids = mvr::testing::StatementSids(*builder);
    for (size_t i = 0; i < sids.size(); ++i) {
      const json without = mvr::testing::WithoutStatement(*builder, i);
      auto key = iam.CreateUser("mvr-image-build-without-" + sids[i], without);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      without_[sids[i]] = *key;
      policies[key->access_key_id] = json::array({without});
    }
    Write(fs::path(work_) / "iam-policies.json", JsonText(policies));
    ASSERT_TRUE(iam.Enforce().ok());
  }

  std::map<std::string, std::string> Env() const {
    return {{"HOME", work_},
            {"AWS_ACCESS_KEY_ID", as_.access_key_id},
            {"AWS_SECRET_ACCESS_KEY", as_.secret_access_key.Reveal()},
            {"AWS_REGION", "us-east-1"},
            {"AWS_CONFIG_FILE", work_ + "/none"},
            {"AWS_SHARED_CREDENTIALS_FILE", work_ + "/none"},
            {"AWS_ENDPOINT_URL_S3", moto_->url()},
            {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS", url_}};
  }

  void StopEmulator() {
    if (emulator_pid_ <= 0) return;
    processes_.Signal(emulator_pid_, SIGTERM).IgnoreError();
    const TimePoint deadline = clock_.Now() + Duration(30'000);
    while (!process::PollExit(processes_, emulator_pid_)) {
      if (clock_.Now() > deadline) processes_.Signal(emulator_pid_, SIGKILL).IgnoreError();
      sleeper_.Sleep(Duration(20));
    }
    emulator_pid_ = 0;
    url_.clear();
    std::error_code ec;
    fs::remove(work_ + "/emulator.log", ec);  // a next StartEmulator reads its own URL there
  }

  void StartEmulator() {
    process::ProcessSpec spec =
        HostProcessSpec({MvrBinary(), "emulate", "microvms", "--listen", "127.0.0.1:0",
                         "--state-dir", work_ + "/state", "--s3-endpoint-url", moto_->url(),
                         "--iam-policies", work_ + "/iam-policies.json"});
    spec.output_path = work_ + "/emulator.log";
    spec.env = {{"AWS_ACCESS_KEY_ID", build_role_.access_key_id},
                {"AWS_SECRET_ACCESS_KEY", build_role_.secret_access_key.Reveal()}};
    spec.unset_env = {"AWS_PROFILE", "AWS_ENDPOINT_URL"};
    Result<int> pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    emulator_pid_ = *pid;
    const std::string marker = "listening on ";
    for (int i = 0; i < 1000 && url_.empty(); ++i) {
      std::string log = ReadText(spec.output_path);
      size_t at = log.find(marker);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        url_ = log.substr(at + marker.size(), log.find('\n', at) - at - marker.size());
      }
      sleeper_.Sleep(Duration(20));
    }
    ASSERT_FALSE(url_.empty()) << ReadText(spec.output_path);
  }

  // `mvr emulate github` answering GET /repos/actions/runner/releases/latest with `latest`,
  // published `days_ago` days ago (what `mvr image build` judges the image's runner against).
  void StartGitHub(const std::string& latest, int days_ago) {
    StopGitHub();
    const std::string published = FormatRfc3339(clock_.Now() - std::chrono::hours(24 * days_ago));
    process::ProcessSpec spec = HostProcessSpec(
        {MvrBinary(), "emulate", "github", "--listen", "127.0.0.1:0", "--repo", "o/r", "--pat",
         "e2e-token", "--latest-runner-release", latest, "--latest-runner-released-at", published});
    spec.output_path = work_ + "/github.log";
    Result<int> pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    github_pid_ = *pid;
    const std::string marker = "listening on ";
    for (int i = 0; i < 1000 && github_url_.empty(); ++i) {
      std::string log = ReadText(spec.output_path);
      size_t at = log.find(marker);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        github_url_ = log.substr(at + marker.size(), log.find('\n', at) - at - marker.size());
      }
      sleeper_.Sleep(Duration(20));
    }
    ASSERT_FALSE(github_url_.empty()) << ReadText(spec.output_path);
  }
  void StopGitHub() {
    if (github_pid_ <= 0) return;
    processes_.Signal(github_pid_, SIGTERM).IgnoreError();
    while (!process::PollExit(processes_, github_pid_)) sleeper_.Sleep(Duration(20));
    github_pid_ = 0;
    github_url_.clear();
    std::error_code ec;
    fs::remove(work_ + "/github.log", ec);
  }

  // A build context: a Dockerfile running the test guest, hooks, and a "bundle" directory.
  std::string MakeContext(const std::string& name, const std::string& env_line,
                          const std::string& runner = "2.337.0") {
    fs::path ctx = fs::path(work_) / name;
    Write(ctx / "image/Dockerfile",
          "FROM public.ecr.aws/amazonlinux/amazonlinux:2023\n"
          "ARG RUNNER_VERSION=" +
              runner + "\n" + env_line + "CMD [\"" + GuestBinary() + "\"]\n");
    Write(ctx / "image/hooks.json",
          R"({"port": 9000, "microvmImageHooks": {"ready": "ENABLED", "readyTimeoutInSeconds": 30,
              "validate": "ENABLED", "validateTimeoutInSeconds": 10},
              "microvmHooks": {"run": "ENABLED", "runTimeoutInSeconds": 10}})");
    Write(ctx / "bundle/lib/mvr", "stand-in for the ARM64 supervisor bundle\n");
    return ctx.string();
  }

  struct Ran {
    int code = -1;
    std::string output;
    json result;  // the last JSON line on stdout
  };
  Ran Run(std::vector<std::string> args) {
    std::vector<std::string> argv = {MvrBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    process::ProcessSpec spec = HostProcessSpec(argv);
    spec.env = Env();
    spec.unset_env = {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"};
    process::RunOptions options;
    options.timeout = Duration(120'000);
    options.capture_stderr = true;
    Ran ran;
    Result<process::CommandResult> done = processes_.Run(spec, options);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    if (!done.ok()) return ran;
    ran.code = done->timed_out || done->exit.signaled ? -1 : done->exit.code;
    ran.output = done->error_output + done->output;
    std::istringstream lines(ran.output);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line[0] == '{') ran.result = json::parse(line, nullptr, false);
    }
    return ran;
  }

  std::vector<std::string> BuildArgs(const std::string& ctx) {
    return {"image",
            "build",
            "--context",
            ctx,
            "--include",
            "image",
            "bundle",
            "--runner-set-id",
            "e2e",
            "--class-index",
            "0",
            "--bucket",
            "artifacts",
            "--base-image-arn",
            "arn:aws:lambda:us-east-1:aws:microvm-image:al2023",
            "--build-role-arn",
            "arn:aws:iam::123456789012:role/build",
            "--poll-seconds",
            "0.2",
            "--timeout-seconds",
            "120",
            "--github-api-url",
            github_url_};
  }

  json Api(const std::string& path) {
    http::CurlHttpClient http;
    http::HttpRequest req;
    req.url = url_ + path;
    auto resp = http.Send(req);
    if (!resp.ok()) return json();
    return json::parse(resp->body, nullptr, false);
  }

  bool ObjectExists(const std::string& key) {
    aws::StaticCredentialsProvider provider(builder_);
    http::CurlHttpClient http;
    aws::S3ClientOptions o;
    o.endpoint = {moto_->url(), "us-east-1", "s3", "AWS_ENDPOINT_URL_S3"};
    aws::S3Client s3(o, http, provider, Seam{clock_, sleeper_, random_, random_, logger_});
    Result<aws::S3ObjectInfo> head = s3.HeadObject({"artifacts", key});
    if (!head.ok() && head.status().code() != Code::kNotFound) {
      ADD_FAILURE() << head.status().ToString();
    }
    return head.ok();
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  SystemClock clock_;
  RealSleeper sleeper_;
  SeededRandom random_{7};
  MemorySink log_sink_;
  Logger logger_{log_sink_, clock_};
  process::PosixProcessRunner processes_;
  std::string work_, url_;
  int emulator_pid_ = 0;
  std::string github_url_;  // `mvr emulate github`
  int github_pid_ = 0;
  aws::AwsCredentials builder_, build_role_;  // moto users of image-build(-role).json
  aws::AwsCredentials build_role_without_;    // image-build-role.json without its statement
  aws::AwsCredentials as_;                    // whom `mvr image build` runs as
  std::map<std::string, aws::AwsCredentials> without_;  // Sid → a user without that statement
};

TEST_F(ImageBuildE2eTest, BuildsFromS3ActivatesAndReusesOnARerun) {
  const std::string ctx = MakeContext("ok", "");
  Ran first = Run(BuildArgs(ctx));
  ASSERT_EQ(first.code, 0) << first.output;
  const std::string name = first.result.value("name", "");
  EXPECT_TRUE(std::regex_match(name, std::regex("e2e_0-[0-9a-f]{8}"))) << name;
  EXPECT_EQ(first.result.value("outcome", ""), "created");
  EXPECT_TRUE(first.result.value("uploaded", false));
  EXPECT_EQ(first.result.value("artifact", ""), "s3://artifacts/mvr/" + name + ".zip");
  EXPECT_TRUE(ObjectExists("mvr/" + name + ".zip"));
  const std::string version = first.result.value("imageVersion", "");
  json v = Api("/2025-09-09/microvm-images/" + name + "/versions/" + version);
  EXPECT_EQ(v.value("state", ""), "SUCCESSFUL") << v.dump();
  EXPECT_EQ(v.value("status", ""), "ACTIVE") << v.dump();
  EXPECT_EQ(v["codeArtifact"].value("uri", ""), "s3://artifacts/mvr/" + name + ".zip");
  // The runner image runs Docker: its application needs every OS capability (docs/image.md).
  EXPECT_EQ(v.value("additionalOsCapabilities", json()), json::array({"ALL"})) << v.dump();

  Ran again = Run(BuildArgs(ctx));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_EQ(again.result.value("name", ""), name);
  EXPECT_EQ(again.result.value("outcome", ""), "reused");
  EXPECT_FALSE(again.result.value("uploaded", true));
  EXPECT_EQ(again.result.value("imageVersion", ""), version);
  for (const Ran* r : {&first, &again}) {
    EXPECT_EQ(r->output.find(builder_.secret_access_key.Reveal()), std::string::npos);
  }
}

// Least privilege shown: without any one statement of image-build.json a first build (or, for
// retiring versions, a rebuild with new inputs) is denied. FindArtifacts (s3:ListBucket) stays
// for a reason moto cannot show: without it S3 answers HeadObject of a missing key 403, not 404.
TEST_F(ImageBuildE2eTest, WithoutAnyOneStatementABuildIsDenied) {
  ASSERT_EQ(without_.size(), 5u);
  for (const auto& [sid, key] : without_) {
    if (sid == "FindArtifacts") continue;
    as_ = key;
    const std::string ctx = MakeContext("without-" + sid, "ENV MVR_VARIANT=" + sid + "\n");
    Ran first = Run(BuildArgs(ctx));
    std::vector<std::string> args = BuildArgs(ctx);
    args.insert(args.end(), {"--memory-mib", "4096", "--keep-inactive-versions", "0"});
    Ran second = first.code == 0 ? Run(args) : Ran{};
    const std::string output = first.output + second.output;
    // A denied HeadObject is a bare 403 (a HEAD answer has no body to name the error).
    const bool head_refused =
        output.find("HeadObject s3://artifacts/mvr/e2e_0-") != std::string::npos &&
        output.find(": HTTP 403") != std::string::npos;
    const bool denied = output.find("AccessDenied") != std::string::npos || head_refused;
    EXPECT_TRUE(denied) << "nothing needs " << sid << ":\n" << output;
    std::printf("without %s: build exit %d, rebuild exit %d, denied: %s\n", sid.c_str(), first.code,
                second.code, denied ? "yes" : "no");
  }
}

// image-build-role.json's one statement: without it the service (the emulator, reading as the
// role) cannot fetch the artifact and the build fails with that reason.
TEST_F(ImageBuildE2eTest, WithoutReadArtifactsTheBuildRoleCannotFetchTheArtifact) {
  StopEmulator();
  build_role_ = build_role_without_;
  ASSERT_NO_FATAL_FAILURE(StartEmulator());
  Ran build = Run(BuildArgs(MakeContext("no-read", "")));
  EXPECT_EQ(build.code, 1) << build.output;
  EXPECT_NE(build.output.find("GetObject s3://artifacts/mvr/e2e_0-"), std::string::npos)
      << build.output;
  EXPECT_NE(build.output.find("HTTP 403 AccessDenied"), std::string::npos) << build.output;
  std::printf("without ReadArtifacts: %s\n", build.output.c_str());
}

TEST_F(ImageBuildE2eTest, FailedValidationPrintsTheReasonAndCleansUp) {
  const std::string ctx = MakeContext("bad", "ENV MVR_TEST_VALIDATE_STATUS=500\n");
  Ran failed = Run(BuildArgs(ctx));
  EXPECT_EQ(failed.code, 1) << failed.output;
  EXPECT_NE(failed.output.find("/validate"), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find("HTTP 500"), std::string::npos) << failed.output;
  EXPECT_EQ(failed.output.find(builder_.secret_access_key.Reveal()), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(failed.output, m, std::regex("image (e2e_0-[0-9a-f]{8})")))
      << failed.output;
  const std::string name = m[1];
  EXPECT_FALSE(ObjectExists("mvr/" + name + ".zip"));
  json versions = Api("/2025-09-09/microvm-images/" + name + "/versions");
  EXPECT_TRUE(versions.value("items", json::array()).empty()) << versions.dump();
}

TEST_F(ImageBuildE2eTest, WaitTimesOutOfRangeAreRefusedBeforeAnyCall) {
  const std::string ctx = MakeContext("times", "");
  // 1e30 seconds once reached a conversion to milliseconds that overflowed.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--poll-seconds", "1e30"},
                                                        {"--poll-seconds", "0"},
                                                        {"--timeout-seconds", "0"},
                                                        {"--timeout-seconds", "604801"}}) {
    std::vector<std::string> args = BuildArgs(ctx);
    auto at = std::find(args.begin(), args.end(), flag);
    ASSERT_NE(at, args.end());
    *std::next(at) = value;
    Ran refused = Run(args);
    EXPECT_NE(refused.code, 0) << flag << " " << value << ": " << refused.output;
    EXPECT_NE(refused.output.find(flag), std::string::npos) << refused.output;
    EXPECT_TRUE(refused.result.is_null()) << refused.output;
  }
  json images = Api("/2025-09-09/microvm-images");
  EXPECT_TRUE(images.value("items", json::array()).empty()) << images.dump();
}

// --capabilities none leaves additionalOsCapabilities out (and is another configuration, so a
// new version); a value the service model does not know is refused before any call.
TEST_F(ImageBuildE2eTest, CapabilitiesNoneLeavesThemOutAndAnUnknownOneIsRefused) {
  const std::string ctx = MakeContext("caps", "");
  std::vector<std::string> args = BuildArgs(ctx);
  args.insert(args.end(), {"--capabilities", "SYS_ADMIN"});
  Ran refused = Run(args);
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--capabilities must be ALL"), std::string::npos) << refused.output;
  json images = Api("/2025-09-09/microvm-images");
  EXPECT_TRUE(images.value("items", json::array()).empty()) << images.dump();

  args.back() = "none";
  Ran none = Run(args);
  ASSERT_EQ(none.code, 0) << none.output;
  json v = Api("/2025-09-09/microvm-images/" + none.result.value("name", "") + "/versions/" +
               none.result.value("imageVersion", ""));
  EXPECT_FALSE(v.contains("additionalOsCapabilities")) << v.dump();
  Ran all = Run(BuildArgs(ctx));
  ASSERT_EQ(all.code, 0) << all.output;
  EXPECT_EQ(all.result.value("outcome", ""), "updated") << all.output;
}

// A Dockerfile pinning a runner GitHub would refuse is refused before any AWS call, with the fix:
// below GitHub's minimum, or behind a release published more than 30 days ago. Nothing is
// uploaded and no image is made.
TEST_F(ImageBuildE2eTest, ARunnerGitHubWouldRefuseIsRefusedBeforeAnyCall) {
  Ran old = Run(BuildArgs(MakeContext("old", "", "2.321.0")));
  EXPECT_EQ(old.code, 2) << old.output;
  EXPECT_NE(old.output.find("runner 2.321.0 is below 2.329.0"), std::string::npos) << old.output;
  EXPECT_NE(old.output.find("ARG RUNNER_VERSION"), std::string::npos) << old.output;

  ASSERT_NO_FATAL_FAILURE(StartGitHub("2.337.0", 31));
  Ran behind = Run(BuildArgs(MakeContext("behind", "", "2.336.0")));
  EXPECT_EQ(behind.code, 2) << behind.output;
  EXPECT_NE(behind.output.find("older than the latest release 2.337.0"), std::string::npos)
      << behind.output;
  Ran current = Run(BuildArgs(MakeContext("current", "", "2.337.0")));
  EXPECT_EQ(current.code, 0) << current.output;
  EXPECT_NE(current.output.find("runner 2.337.0 (latest release 2.337.0)"), std::string::npos)
      << current.output;
  // Only the current one was uploaded: the refused builds made no call.
  const json images = Api("/2025-09-09/microvm-images");
  EXPECT_EQ(images.value("items", json::array()).size(), 1u) << images.dump();
}

TEST_F(ImageBuildE2eTest, PackIsReproducible) {
  const std::string ctx = MakeContext("pack", "");
  std::vector<std::string> args = {"image",     "pack",  "--context", ctx,
                                   "--include", "image", "bundle",    "--output"};
  args.push_back(work_ + "/a.zip");
  Ran a = Run(args);
  ASSERT_EQ(a.code, 0) << a.output;
  fs::last_write_time(fs::path(ctx) / "bundle/lib/mvr",
                      fs::file_time_type::clock::now() - std::chrono::hours(24));
  args.back() = work_ + "/b.zip";
  Ran b = Run(args);
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_EQ(ReadText(work_ + "/a.zip"), ReadText(work_ + "/b.zip"));
  EXPECT_EQ(a.result.value("sha256", ""), b.result.value("sha256", ""));
  EXPECT_EQ(a.result.value("files", 0), 4);
}

}  // namespace
}  // namespace mvr::imagebuild

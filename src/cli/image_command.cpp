// `mvr image pack` and `mvr image build` (docs/image.md): the runner image's reproducible
// artifact, and the flow that puts it in S3 and builds and activates the class's MicroVM image.
// AWS settings come from the environment like the SDKs' (region, AWS_ENDPOINT_URL[_S3|
// _LAMBDA_MICROVMS], credentials chain).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "aws/microvms/microvms_client.h"
#include "aws/microvms/microvms_json.h"
#include "aws/services/s3.h"
#include "aws/signing/credentials_chain.h"
#include "aws/signing/credentials_profile.h"
#include "aws/signing/endpoints.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/time_format.h"
#include "cli/commands.h"
#include "github/runner_release.h"
#include "http/curl_client.h"
#include "imagebuild/artifact.h"
#include "imagebuild/image_build.h"

namespace mvr::cli {
namespace {

struct PackFlags {
  std::string context = ".";
  std::string dockerfile;  // default <context>/image/Dockerfile
  std::vector<std::string> include = {"image", "build-arm64/supervisor-bundle"};
  std::string output;
};

struct BuildFlags {
  PackFlags pack;
  std::string runner_set_id;
  int class_index = -1;
  std::string bucket;
  std::string key_prefix = "mvr/";
  std::string base_image_arn;
  std::string base_image_version;
  std::string build_role_arn;
  int memory_mib = 0;
  std::string hooks_file;  // default <context>/image/hooks.json
  std::string capabilities = "ALL";
  int keep_inactive_versions = 2;
  int timeout_seconds = 3600;
  double poll_seconds = 10;
  std::string region;
  std::string github_api_url;  // default: GITHUB_API_URL, else https://api.github.com
};

void AddPackFlags(CLI::App* cmd, PackFlags& f) {
  cmd->add_option("--context", f.context, "the build context: the repository root (default .)");
  cmd->add_option("--dockerfile", f.dockerfile,
                  "stored as the artifact's Dockerfile (default CONTEXT/image/Dockerfile)");
  cmd->add_option("--include", f.include,
                  "files or directories of the context to pack, as the Dockerfile COPYs them "
                  "(default: image build-arm64/supervisor-bundle)")
      ->take_all();
}

Result<imagebuild::Artifact> Pack(const PackFlags& f) {
  imagebuild::ArtifactSources sources;
  sources.context_dir = f.context;
  sources.dockerfile = f.dockerfile.empty() ? f.context + "/image/Dockerfile" : f.dockerfile;
  sources.include = f.include;
  MVR_ASSIGN_OR_RETURN(std::vector<ZipEntry> files, imagebuild::CollectArtifactFiles(sources));
  return imagebuild::PackArtifact(std::move(files));
}

int Fail(const char* command, const Status& s, int code = 1) {
  std::fprintf(stderr, "mvr image %s: %s\n", command, s.message().c_str());
  return code;
}

int RunPack(const PackFlags& f) {
  Result<imagebuild::Artifact> artifact = Pack(f);
  if (!artifact.ok()) return Fail("pack", artifact.status(), 2);
  std::ofstream out(f.output, std::ios::binary | std::ios::trunc);
  out.write(artifact->zip.data(), static_cast<std::streamsize>(artifact->zip.size()));
  out.close();
  if (!out) return Fail("pack", InvalidArgument("--output: cannot write " + f.output));
  nlohmann::json doc = {{"artifact", f.output},
                        {"bytes", artifact->zip.size()},
                        {"files", artifact->files},
                        {"sha256", artifact->sha256},
                        {"runnerVersion", artifact->runner_version}};
  std::cout << JsonText(doc) << std::endl;
  return 0;
}

// image/hooks.json is the `hooks` member of CreateMicrovmImage as the service model spells it;
// it is read through the same reader as the service's answers, strictly.
Result<aws::Hooks> ReadHooks(const std::string& path) {
  MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "--hooks"));
  nlohmann::json hooks = nlohmann::json::parse(text, nullptr, false);
  if (hooks.is_discarded() || !hooks.is_object()) {
    return InvalidArgument("--hooks " + path + " is not a JSON object");
  }
  nlohmann::json version = {{"imageArn", "arn:aws:lambda:us-east-1:000000000000:microvm-image:x"},
                            {"imageVersion", "1"},
                            {"hooks", hooks}};
  Result<aws::MicrovmImageVersion> read = aws::ParseMicrovmImageVersion(version, true);
  if (!read.ok()) return read.status().Annotate("--hooks " + path);
  if (!read->config.hooks) return InvalidArgument("--hooks " + path + " holds no hooks");
  return *read->config.hooks;
}

// --capabilities: the image's additionalOsCapabilities, whose one value the service model knows is
// ALL. The runner image's Docker engine needs it: without it the service runs the image's
// application with a container's capability set, and dockerd can neither mount its storage nor
// make its bridge.
Result<std::vector<std::string>> ParseCapabilities(const std::string& flag) {
  if (flag == "ALL") return std::vector<std::string>{"ALL"};
  if (flag == "none") return std::vector<std::string>{};
  return InvalidArgument(
      "--capabilities must be ALL (every OS capability, which the image's "
      "Docker engine needs) or none (an image without Docker), not '" +
      flag + "'");
}

Result<imagebuild::ImageBuildRequest> BuildRequest(const BuildFlags& f) {
  imagebuild::ImageBuildRequest r;
  r.runner_set_id = f.runner_set_id;
  r.class_index = f.class_index;
  r.bucket = f.bucket;
  r.key_prefix = f.key_prefix;
  r.base_image_arn = f.base_image_arn;
  r.base_image_version = f.base_image_version;
  r.build_role_arn = f.build_role_arn;
  if (f.memory_mib > 0) r.memory_mib = f.memory_mib;
  MVR_ASSIGN_OR_RETURN(
      r.hooks,
      ReadHooks(f.hooks_file.empty() ? f.pack.context + "/image/hooks.json" : f.hooks_file));
  MVR_ASSIGN_OR_RETURN(r.os_capabilities, ParseCapabilities(f.capabilities));
  r.keep_inactive_versions = f.keep_inactive_versions;
  if (f.timeout_seconds <= 0) return InvalidArgument("--timeout-seconds must be more than 0");
  if (f.poll_seconds <= 0) return InvalidArgument("--poll-seconds must be more than 0");
  r.build_timeout = Duration(static_cast<int64_t>(f.timeout_seconds) * 1000);
  r.poll_interval = Duration(static_cast<int64_t>(f.poll_seconds * 1000));
  return r;
}

// GitHub must accept the runner the Dockerfile pins: at least its minimum, and not past the 30-day
// deadline of a newer release (read from GitHub now, on the context's clock). Refused before any
// AWS call, with the fix.
Status CheckImageRunner(Context& ctx, const BuildFlags& f, const imagebuild::Artifact& artifact) {
  const std::string fix =
      "; set ARG RUNNER_VERSION and RUNNER_SHA256 in the Dockerfile to a current actions/runner "
      "release (docs/image.md, \"Moving the runner pin\")";
  if (artifact.runner_version.empty()) {
    return InvalidArgument(
        "the Dockerfile has no ARG RUNNER_VERSION=<version>, so mvr cannot "
        "tell which runner the image carries" +
        fix);
  }
  std::string api = f.github_api_url;
  if (api.empty()) api = ctx.env.Get("GITHUB_API_URL").value_or("https://api.github.com");
  std::optional<Secret> token;
  if (std::optional<std::string> t = ctx.env.Get("GITHUB_TOKEN"); t && !t->empty()) {
    token = Secret(*t);
    ctx.logger.redactor().Add(*token);
  }
  http::CurlHttpClient http;
  Result<github::RunnerRelease> latest = github::FetchLatestRunnerRelease(http, api, token);
  if (!latest.ok()) {
    return Status(
        latest.status().code(),
        "cannot read the runner's latest release, so the 30-day rule cannot be checked: " +
            latest.status().message() +
            " (check --github-api-url or GITHUB_API_URL, and GITHUB_TOKEN)");
  }
  const github::RunnerJudgement j =
      github::JudgeRunnerVersion(artifact.runner_version, *latest, ctx.clock.Now());
  if (j.verdict == github::RunnerJudgement::Verdict::kRefused) {
    return InvalidArgument("GitHub would refuse this image's runner: " + j.why + fix);
  }
  std::fprintf(stderr, "mvr image build: runner %s (latest release %s)%s\n",
               artifact.runner_version.c_str(), latest->version.c_str(),
               j.deadline ? (": accepted until " + FormatRfc3339(*j.deadline)).c_str() : "");
  return Status::Ok();
}

int RunBuild(Context& ctx, const BuildFlags& f) {
  Result<imagebuild::ImageBuildRequest> request = BuildRequest(f);
  if (!request.ok()) return Fail("build", request.status(), 2);
  Result<imagebuild::Artifact> artifact = Pack(f.pack);
  if (!artifact.ok()) return Fail("build", artifact.status(), 2);
  if (Status s = CheckImageRunner(ctx, f, *artifact); !s.ok()) return Fail("build", s, 2);

  http::CurlHttpClient http;
  aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
  std::optional<std::string> region;
  if (!f.region.empty()) region = f.region;
  Result<aws::ServiceEndpoint> s3_endpoint =
      aws::ResolveEndpoint(aws::AwsService::kS3, ctx.env, shared, region);
  if (!s3_endpoint.ok()) return Fail("build", s3_endpoint.status(), 2);
  Result<aws::ServiceEndpoint> microvms_endpoint =
      aws::ResolveEndpoint(aws::AwsService::kLambdaMicrovms, ctx.env, shared, region);
  if (!microvms_endpoint.ok()) return Fail("build", microvms_endpoint.status(), 2);
  aws::DefaultCredentialsChain credentials(ctx.env, http, ctx.clock);
  aws::S3ClientOptions so;
  so.endpoint = *s3_endpoint;
  aws::S3Client s3(so, http, credentials, ctx.seam());
  aws::MicrovmsClientOptions mo;
  mo.endpoint = *microvms_endpoint;
  aws::MicrovmsClient microvms(mo, aws::MicrovmsClientDeps{http, credentials, ctx.seam()});

  imagebuild::ImageBuilder builder(
      imagebuild::ImageBuildDeps{ctx.seam(), s3, microvms, [](const std::string& line) {
                                   std::fprintf(stderr, "mvr image build: %s\n", line.c_str());
                                 }});
  Result<imagebuild::ImageBuildResult> r = builder.Build(*request, *artifact);
  if (!r.ok()) return Fail("build", r.status());
  nlohmann::json doc = {{"name", r->name},
                        {"imageArn", r->image_arn},
                        {"imageVersion", r->image_version},
                        {"artifact", r->artifact_uri},
                        {"artifactSha256", artifact->sha256},
                        {"uploaded", r->uploaded},
                        {"outcome", imagebuild::OutcomeName(r->outcome)},
                        {"deactivated", r->deactivated},
                        {"deleted", r->deleted}};
  std::cout << JsonText(doc) << std::endl;
  return 0;
}

}  // namespace

void AddImageCommand(CLI::App& app, Context& ctx) {
  auto* image = app.add_subcommand("image", "The runner image (docs/image.md)");
  image->require_subcommand(1);

  auto pack = std::make_shared<PackFlags>();
  auto* pack_cmd = image->add_subcommand(
      "pack", "Write the image's code artifact (a reproducible zip) without uploading it");
  AddPackFlags(pack_cmd, *pack);
  pack_cmd->add_option("--output", pack->output, "the zip to write")->required();
  pack_cmd->callback([&ctx, pack] { ctx.exit_code = RunPack(*pack); });

  auto f = std::make_shared<BuildFlags>();
  auto* build = image->add_subcommand(
      "build", "Pack, upload to S3, build and activate a runner class's MicroVM image");
  AddPackFlags(build, f->pack);
  build->add_option("--runner-set-id", f->runner_set_id, "the runner set's id")->required();
  build
      ->add_option("--class-index", f->class_index,
                   "the runner class's position in the set's classes (0, 1, ...)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  build->add_option("--bucket", f->bucket, "S3 bucket for the artifact")->required();
  build->add_option("--key-prefix", f->key_prefix, "S3 key prefix (default mvr/)");
  build
      ->add_option("--base-image-arn", f->base_image_arn,
                   "the managed base image (aws lambda-microvms list-managed-microvm-images)")
      ->required();
  build->add_option("--base-image-version", f->base_image_version, "its version (default: latest)");
  build
      ->add_option("--build-role-arn", f->build_role_arn,
                   "the role the service builds with; it must read the artifact")
      ->required();
  build->add_option("--memory-mib", f->memory_mib, "the VM's memory, fixed by the image");
  build->add_option("--hooks", f->hooks_file, "hooks JSON (default CONTEXT/image/hooks.json)");
  build->add_option("--capabilities", f->capabilities,
                    "the image's additionalOsCapabilities: ALL (default; Docker in the VM needs "
                    "it) or none");
  build->add_option("--keep-inactive-versions", f->keep_inactive_versions,
                    "inactive versions kept beside the active one (default 2)");
  build
      ->add_option("--timeout-seconds", f->timeout_seconds,
                   "how long to wait for the build (default 3600)")
      ->check(CLI::Range(1, 7 * 24 * 3600));
  build->add_option("--poll-seconds", f->poll_seconds, "between build polls (default 10)")
      ->check(CLI::Range(0.1, 3600.0));
  build->add_option("--region", f->region, "AWS region (default: AWS_REGION, the profile)");
  build->add_option("--github-api-url", f->github_api_url,
                    "where to read the runner's latest release (default: GITHUB_API_URL, else "
                    "https://api.github.com; GITHUB_TOKEN is sent when set)");
  build->callback([&ctx, f] { ctx.exit_code = RunBuild(ctx, *f); });
}

}  // namespace mvr::cli

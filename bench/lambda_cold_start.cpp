// Cold start of the `webhook` Lambda function: from exec of `bootstrap` to the answer of its first
// event, a signed ~10 KB workflow_job delivery behind a Function URL (signature verified, parsed,
// routed, the launch intent queued), against the local fake Runtime API. Each run is a fresh
// process with the event already waiting, as Lambda has it when it starts a container for a
// request. The queue is the in-memory one (`memory:`), so the figure is mvr's own start and work,
// not a network round trip to SQS. Besides the wall time it prints the CPU time each run's
// process used (user + system, whole life), which a loaded machine inflates far less.
//
//   lambda_cold_start [--bootstrap PATH] [--runs N] [--zip FILE.zip]
//
// --bootstrap: an unpacked package's bootstrap (default: this build's mvr-lambda, run as
// `mvr-lambda lambda`).
// Prints each run, then min / median / max in milliseconds (and the zip's size when given).
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/encoding.h"
#include "base/files.h"
#include "github/workflow_job_payloads.h"
#include "lambda/fake_runtime_api.h"
#include "process/process_runner.h"

namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;
constexpr char kSecret[] = "cold-start-bench-webhook-secret";

std::string Event(const std::string& body) {
  return json{{"version", "2.0"},
              {"rawPath", "/"},
              {"headers",
               {{"x-github-event", "workflow_job"},
                {"x-github-delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
                {"x-hub-signature-256", "sha256=" + mvr::HexEncode(mvr::HmacSha256(kSecret, body))},
                {"content-type", "application/json"},
                {"user-agent", "GitHub-Hookshot/044aadd"}}},
              {"requestContext", {{"http", {{"method", "POST"}, {"path", "/"}}}}},
              {"body", mvr::Base64Encode(body)},
              {"isBase64Encoded", true}}
      .dump();
}

}  // namespace

int main(int argc, char** argv) {
  std::string bootstrap, zip;
  int runs = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bootstrap")) bootstrap = argv[i + 1];
    if (!std::strcmp(argv[i], "--runs")) runs = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--zip")) zip = argv[i + 1];
  }
  std::vector<std::string> command = {bootstrap};
  if (bootstrap.empty()) command = {std::string(MVR_BINARY_DIR) + "/src/cli/mvr-lambda", "lambda"};

  mvr::github::testing::PayloadOptions o;
  o.labels = {"self-hosted", "linux", "arm64", "lambda-mvm-small"};
  const std::string body =
      mvr::github::testing::InGitHubOrder(json::parse(mvr::github::testing::WorkflowJobPayload(o)));
  const std::string event = Event(body);
  std::printf("cold start of %s: a %zu-byte workflow_job delivery, %d runs\n", command[0].c_str(),
              body.size(), runs);

  mvr::process::PosixProcessRunner processes;
  std::vector<double> ms, cpu;
  for (int run = 0; run < runs; ++run) {
    auto dir = mvr::TemporaryDirectory::Create("mvr-cold-start");
    if (!dir.ok()) return 1;
    const std::string db = "memory:";
    json config = {{"runnerSetId", "bench"},
                   {"github",
                    {{"repository", "octo-org/widget-service"},
                     {"patFile", "env:MVR_PAT"},
                     {"webhookSecretFile", "env:MVR_WEBHOOK_SECRET"}}},
                   {"classes", json::array({{{"label", "lambda-mvm-small"}, {"image", "img-1"}}})},
                   {"store", db},
                   {"queue", {{"uri", db}}}};
    mvr::lambda::FakeRuntimeApi fake;
    if (!fake.Start().ok()) return 1;
    const std::string id = fake.Enqueue(event);
    mvr::process::ProcessSpec spec;
    spec.argv = command;
    spec.env = {{"AWS_LAMBDA_RUNTIME_API", fake.endpoint()},
                {"_HANDLER", "webhook"},
                {"MVR_CONFIG", config.dump()},
                {"MVR_WEBHOOK_SECRET", kSecret},
                {"MVR_PAT", "unused"},
                {"AWS_REGION", "us-east-1"},
                {"PATH", "/usr/bin:/bin"}};
    spec.output_path = dir->path() + "/function.log";
    rusage before{};
    ::getrusage(RUSAGE_CHILDREN, &before);
    const auto start = Steady::now();
    auto pid = processes.Spawn(spec);
    if (!pid.ok()) return 1;
    auto answer = fake.WaitAnswer(id, mvr::Duration(60'000));
    const auto end = Steady::now();
    fake.Stop();
    (void)processes.Wait(*pid);
    rusage after{};
    ::getrusage(RUSAGE_CHILDREN, &after);
    auto cpu_ms = [](const rusage& r) {
      return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
             (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
    };
    cpu.push_back(cpu_ms(after) - cpu_ms(before));
    if (!answer || answer->body.find("\"statusCode\":202") == std::string::npos) {
      std::fprintf(stderr, "run %d: no 202 answer (see %s)\n", run, spec.output_path.c_str());
      dir->Keep();
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    std::printf("  run %2d: %.2f ms (process CPU %.2f ms)\n", run + 1, ms.back(), cpu.back());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  std::printf("exec → first answer: min %.2f ms, median %.2f ms, max %.2f ms\n", sorted.front(),
              median, sorted.back());
  if (!zip.empty()) {
    std::error_code ec;
    auto size = std::filesystem::file_size(zip, ec);
    if (!ec) std::printf("package %s: %ju bytes\n", zip.c_str(), static_cast<uintmax_t>(size));
  }
  return 0;
}

// Webhook throughput: what one webhook handler does per delivery - verify X-Hub-Signature-256
// over the raw body, parse the workflow_job event, match its labels against the runner classes -
// on realistic payloads of about 2 KB (a queued job, trimmed repository object) and 20 KB (a
// completed job with its steps and the full repository object github.com sends).
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "github/labels.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"
#include "github/workflow_job_payloads.h"  // tests/github: shared payload builder

namespace mvr::github {
namespace {

const Secret kSecret("bench-webhook-secret-0123456789abcdef");

const std::vector<std::vector<std::string>> kClasses = {
    {"linux", "arm64", "lambda-mvm-small"},
    {"linux", "arm64", "lambda-mvm-large"},
    {"linux", "arm64", "lambda-mvm-xlarge", "docker"}};

std::string Payload(size_t target_kb) {
  testing::PayloadOptions o;
  if (target_kb <= 2) {
    // A queued job as a GHES or repository webhook sends it with a short owner object.
    o.full_repository = false;
    o.organization = false;
    nlohmann::json event = testing::WorkflowJobJson(o);
    event["repository"]["owner"] = {
        {"login", "octo-org"}, {"id", 21031067}, {"type", "Organization"}};
    return event.dump();
  }
  o.action = "completed";
  o.runner_name = "lambda-mvm-3f9a0c51d2";
  o.runner_id = 4242;
  // Add steps until the body reaches the target size, as a long job's completed event does.
  for (o.steps = 1; o.steps < 500; ++o.steps) {
    if (testing::WorkflowJobPayload(o).size() >= target_kb * 1024) break;
  }
  return testing::WorkflowJobPayload(o);
}

void BM_WebhookVerifyParseMatch(benchmark::State& state) {
  const std::string body = Payload(static_cast<size_t>(state.range(0)));
  const std::string signature = WebhookSignature(kSecret, body);
  int matched = 0;
  for (auto _ : state) {
    Status verified = VerifyWebhookSignature(kSecret, signature, body);
    if (!verified.ok()) throw std::runtime_error(verified.ToString());
    Result<WorkflowJobEvent> event = ParseWorkflowJobEvent("workflow_job", "delivery-1", body);
    if (!event.ok()) throw std::runtime_error(event.status().ToString());
    for (const auto& labels : kClasses) {
      if (JobLabelsMatch(event->workflow_job.labels, labels)) {
        ++matched;
        break;
      }
    }
    benchmark::DoNotOptimize(matched);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
  state.counters["payload_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_WebhookVerifyParseMatch)->Arg(2)->Arg(20);

void BM_WebhookVerifyOnly(benchmark::State& state) {
  const std::string body = Payload(static_cast<size_t>(state.range(0)));
  const std::string signature = WebhookSignature(kSecret, body);
  for (auto _ : state) {
    benchmark::DoNotOptimize(VerifyWebhookSignature(kSecret, signature, body).ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["payload_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_WebhookVerifyOnly)->Arg(2)->Arg(20);

void BM_WebhookParseOnly(benchmark::State& state) {
  const std::string body = Payload(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(ParseWorkflowJobEvent("workflow_job", "delivery-1", body).ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["payload_bytes"] = static_cast<double>(body.size());
}
BENCHMARK(BM_WebhookParseOnly)->Arg(2)->Arg(20);

void BM_LabelMatchOnly(benchmark::State& state) {
  const std::vector<std::string> job = {"self-hosted", "Linux", "ARM64", "lambda-mvm-xlarge",
                                        "docker"};
  for (auto _ : state) {
    int hit = -1;
    for (size_t i = 0; i < kClasses.size() && hit < 0; ++i) {
      if (JobLabelsMatch(job, kClasses[i])) hit = static_cast<int>(i);
    }
    benchmark::DoNotOptimize(hit);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LabelMatchOnly);

}  // namespace
}  // namespace mvr::github

BENCHMARK_MAIN();

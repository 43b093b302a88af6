// The runner set's webhook per delivery, on one core: verify X-Hub-Signature-256, read the
// workflow_job members, and route to an intent - each step alone and the whole path, on
// real-shaped deliveries of about 10 KB (a queued job; a completed job with its steps), next to
// the path it replaces (one-shot HMAC, nlohmann parse of the whole event, label match).
// Target (issue 14): the whole path within 10 µs per ~10 KB delivery.
// Run: ninja -C build webhook_bench && build/bench/webhook_bench
#include <benchmark/benchmark.h>

#include <stdexcept>

#include "base/encoding.h"
#include "github/labels.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"
#include "github/workflow_job_payloads.h"  // tests/github: shared payload builder
#include "runnerset/intake/webhook_router.h"
#include "runnerset/intake/workflow_job_reader.h"

namespace mvr::runnerset {
namespace {

using github::testing::PayloadOptions;

constexpr size_t kTargetBytes = 10 * 1024;
const Secret kSecret("bench-webhook-secret-0123456789abcdef");
const std::vector<std::string> kClassLabels = {"mvr-small", "mvr-large", "mvr-xlarge"};
const TimePoint kNow(Duration(1'767'225'600'000));

// Arg 0: a queued job as github.com sends it to an organisation's hook (full repository object,
// organisation, enterprise, sender, installation), with a longer sender object that brings it to
// ~10 KB. Arg 1: the same job completed on one of the set's runners, with steps up to ~10 KB.
std::string Payload(int64_t kind) {
  PayloadOptions o;
  o.labels = {"self-hosted", "linux", "arm64", "mvr-small"};
  if (kind == 0) {
    nlohmann::json event = github::testing::WorkflowJobJson(o);
    event["enterprise"] = github::testing::UserObject("octo-enterprise", 11468, "Enterprise");
    for (int i = 0; event.dump().size() < kTargetBytes; ++i) {
      event["sender"]["extra_" + std::to_string(i)] = std::string(40, 'x');
    }
    return github::testing::InGitHubOrder(event);
  }
  o.action = "completed";
  o.runner_name = "mvr-demo_29679449-1a2b3c";
  o.runner_id = 4242;
  for (o.steps = 1; o.steps < 500; ++o.steps) {
    if (github::testing::WorkflowJobPayload(o).size() >= kTargetBytes) break;
  }
  return github::testing::InGitHubOrder(github::testing::WorkflowJobJson(o));
}

void Label(benchmark::State& state, const std::string& body) {
  state.SetLabel(state.range(0) == 0 ? "queued" : "completed");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
  state.counters["payload_bytes"] = static_cast<double>(body.size());
}

WebhookRouter Router() {
  WebhookRouterConfig c;
  c.secret = kSecret;
  for (const auto& label : kClassLabels) c.classes.push_back(RunnerClass{.label = label});
  c.runner_name_prefix = RunnerNamePrefix("demo");
  auto router = WebhookRouter::Create(std::move(c));
  if (!router.ok()) throw std::runtime_error(router.status().ToString());
  return std::move(router).value();
}

// --- the new path ---

void BM_Verify(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  const github::WebhookSignatureVerifier verifier(kSecret);
  const std::string signature = verifier.Sign(body);
  for (auto _ : state) benchmark::DoNotOptimize(verifier.Verify(signature, body).ok());
  Label(state, body);
}

void BM_Read(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  WorkflowJobReader reader;
  for (auto _ : state) {
    Result<WorkflowJobFields> fields = reader.Read(body);
    if (!fields.ok()) throw std::runtime_error(fields.status().ToString());
    benchmark::DoNotOptimize(fields);
  }
  Label(state, body);
}

void BM_WholePath(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  const std::string signature = github::WebhookSignature(kSecret, body);
  const WebhookRouter router = Router();
  const WebhookVerdict want =
      state.range(0) == 0 ? WebhookVerdict::kLaunch : WebhookVerdict::kTerminate;
  for (auto _ : state) {
    WebhookDecision d = router.Route(
        WebhookDelivery{"workflow_job", "72d3162e-cc78-11e3-81ab-4c9367dc0958", signature, body},
        kNow);
    if (d.verdict != want) throw std::runtime_error(d.message);
    benchmark::DoNotOptimize(d);
  }
  Label(state, body);
}

// The same through the http::Headers overload, as the HTTP handler calls it.
void BM_WholePathFromHeaders(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  const http::Headers headers{{"Content-Type", "application/json"},
                              {"User-Agent", "GitHub-Hookshot/044aadd"},
                              {"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
                              {"X-GitHub-Event", "workflow_job"},
                              {"X-GitHub-Hook-ID", "292430182"},
                              {"X-Hub-Signature-256", github::WebhookSignature(kSecret, body)}};
  const WebhookRouter router = Router();
  for (auto _ : state) {
    WebhookDecision d = router.Route(headers, body, kNow);
    if (!d.intent) throw std::runtime_error(d.message);
    benchmark::DoNotOptimize(d);
  }
  Label(state, body);
}

// --- the path it replaces ---

void BM_OldVerifyOneShotHmac(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  const std::string signature = github::WebhookSignature(kSecret, body);
  for (auto _ : state) {
    Result<std::string> given = HexDecode(std::string_view(signature).substr(7));
    std::string expected = HmacSha256(kSecret.Reveal(), body);
    benchmark::DoNotOptimize(given.ok() && ConstantTimeEquals(expected, *given));
  }
  Label(state, body);
}

void BM_OldParseNlohmann(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  for (auto _ : state) {
    auto event = github::ParseWorkflowJobEvent("workflow_job", "delivery-1", body);
    if (!event.ok()) throw std::runtime_error(event.status().ToString());
    benchmark::DoNotOptimize(event);
  }
  Label(state, body);
}

void BM_OldWholePath(benchmark::State& state) {
  const std::string body = Payload(state.range(0));
  const std::string signature = github::WebhookSignature(kSecret, body);
  for (auto _ : state) {
    Result<std::string> given = HexDecode(std::string_view(signature).substr(7));
    if (!given.ok() || !ConstantTimeEquals(HmacSha256(kSecret.Reveal(), body), *given)) {
      throw std::runtime_error("signature");
    }
    auto event = github::ParseWorkflowJobEvent("workflow_job", "delivery-1", body);
    if (!event.ok()) throw std::runtime_error(event.status().ToString());
    bool matched = false;
    for (const std::string& label : kClassLabels) {
      for (const std::string& have : event->workflow_job.labels) {
        matched = matched || github::LabelEquals(label, have);
      }
    }
    benchmark::DoNotOptimize(matched);
  }
  Label(state, body);
}

BENCHMARK(BM_Verify)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Read)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WholePath)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WholePathFromHeaders)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OldVerifyOneShotHmac)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OldParseNlohmann)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OldWholePath)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mvr::runnerset

BENCHMARK_MAIN();

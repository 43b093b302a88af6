// External calls as simulated actors make them: the real MicroVMs client and the Action's
// MicrovmLifecycle (retries, polling) against the in-process MicroVMs model, whose timers run as
// an actor of their own, in virtual time, with lost responses and throttling from the seed.
#include "sim/sim_http.h"

#include <gtest/gtest.h>

#include <atomic>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials.h"
#include "emulate/microvms/front/inprocess_microvms.h"
#include "fleet/microvm_lifecycle.h"
#include "sim/seams.h"

namespace mvr::sim {
namespace {

constexpr char kKeyId[] = "AKIDSIM";

struct HttpWorld {
  HttpWorld(uint64_t seed, FaultRates rates)
      : scheduler(Options(seed)),
        faults(seed * 31 + 7, rates),
        service(services_seam, ServiceOptions()),
        http(scheduler, service.api(), faults, "microvms") {}

  static Scheduler::Options Options(uint64_t seed) {
    Scheduler::Options o;
    o.seed = seed;
    return o;
  }
  static emulate::microvms::InProcessMicrovmsOptions ServiceOptions() {
    emulate::microvms::InProcessMicrovmsOptions o;
    o.model.latency.run.low = Duration(9'900);  // seed 000's RunMicrovm → RUNNING p50
    o.front.sigv4_keys = {{kKeyId, "sim-secret"}};
    return o;
  }
  aws::MicrovmsClient Client(http::HttpClient& via, const Seam& seam) {
    aws::MicrovmsClientOptions o;
    o.endpoint = {service.api_url(), "us-east-1", "lambda", "sim"};
    return aws::MicrovmsClient(o, aws::MicrovmsClientDeps{via, creds, seam});
  }
  // The model's timers as an actor: it sleeps to the next deadline and applies what is due,
  // until `done`.
  void SpawnEffects(const std::atomic<bool>& done) {
    scheduler.Spawn("microvms-effects", [this, &done] {
      while (!done) {
        std::optional<TimePoint> next = service.NextDeadline();
        Duration wait = next ? std::max(*next - scheduler.Now(), Duration(1)) : Duration(1'000);
        effects_seam.sleeper.Sleep(wait);
        service.RunDue();
      }
    });
  }
  size_t VmsInTheModel() {
    aws::MicrovmsClient truth = Client(service.api(), truth_seam.seam);
    Result<aws::ListMicrovmsResponse> listed = truth.ListMicrovms({});
    return listed.ok() ? listed->items.size() : 999;
  }

  Scheduler scheduler;
  // The service reads virtual time under its own lock: no scheduling point there.
  VirtualClock services_clock{scheduler};
  SimSleeper services_sleeper{scheduler};
  SeededRandom services_random{5};
  MemorySink services_sink;
  Logger services_logger{services_sink, services_clock};
  Seam services_seam{services_clock, services_sleeper, services_random, services_random,
                     services_logger};
  Faults faults;
  emulate::microvms::InProcessMicrovms service;
  SimHttpClient http;
  ActorSeam launcher_seam{scheduler};
  ActorSeam effects_seam{scheduler};
  ActorSeam truth_seam{scheduler};
  aws::StaticCredentialsProvider creds{
      aws::AwsCredentials{kKeyId, Secret("sim-secret"), Secret(), std::nullopt, "sim"}};
};

// One launch, as the runner set's launcher makes it: RunMicrovm with a clientToken, then
// polling to RUNNING. Returns the launch's result.
Result<aws::Microvm> LaunchOne(HttpWorld& w) {
  Result<aws::Microvm> result = Internal("not run");
  std::atomic<bool> done{false};
  w.SpawnEffects(done);
  w.scheduler.Spawn("launcher", [&] {
    aws::MicrovmsClient client = w.Client(w.http, w.launcher_seam.seam);
    fleet::MicrovmLifecycle vms(w.launcher_seam.seam, client);
    aws::RunMicrovmRequest run;
    run.image_identifier = "img-1";
    run.client_token = "mvr-launch-attempt-1";
    const TimePoint deadline = w.scheduler.Now() + Duration(300'000);
    Result<aws::Microvm> vm = vms.Launch(run, deadline);
    result = vm.ok() ? vms.WaitRunning(vm->microvm_id, deadline) : vm;
    done = true;
  });
  Scheduler::RunResult r = w.scheduler.Run(TimePoint::max());
  EXPECT_TRUE(r.idle);
  EXPECT_TRUE(r.failures.empty());
  return result;
}

TEST(SimHttpTest, ALaunchWithoutFaultsRunsInVirtualTime) {
  HttpWorld w(1, FaultRates{});
  Result<aws::Microvm> vm = LaunchOne(w);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(vm->state, aws::MicrovmState::kRunning);
  EXPECT_GE(w.scheduler.Now() - HttpWorld::Options(1).start, Duration(9'900));
  EXPECT_EQ(w.VmsInTheModel(), 1u);
}

// A RunMicrovm whose response is lost took effect; the retry carries the same clientToken, so
// the service answers with the same VM and no second one is made, whatever the seed.
TEST(SimHttpTest, LostResponsesAreRetriedAndNeverMakeASecondVm) {
  int lost_runs = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    HttpWorld w(seed, FaultRates{.throttle = 0.15, .fail_after = 0.3});
    Result<aws::Microvm> vm = LaunchOne(w);
    EXPECT_TRUE(vm.ok()) << "seed " << seed << ": " << vm.status().ToString();
    EXPECT_EQ(w.VmsInTheModel(), 1u) << "seed " << seed;
    auto counts = w.faults.counts();
    lost_runs += counts["microvms POST /2025-09-09/microvms failed after"];
  }
  EXPECT_GT(lost_runs, 0) << "no seed lost a RunMicrovm response: the test proved nothing";
}

TEST(SimHttpTest, RequestNamesLeaveOutHostAndQuery) {
  http::HttpRequest r;
  r.method = "GET";
  r.url = "https://lambda.us-east-1.amazonaws.com/2025-09-09/microvms?maxResults=5";
  EXPECT_EQ(RequestName(r), "GET /2025-09-09/microvms");
  r.url = "http://127.0.0.1:8080";
  EXPECT_EQ(RequestName(r), "GET /");
}

}  // namespace
}  // namespace mvr::sim

// The hooks' edges beyond the plan's list: the /run body raw or wrapped, networking checked and
// random state reseeded on /resume, nothing left between warm jobs (the runner's process group,
// every container), and malformed or invalid-UTF-8 input answered without an exception.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "supervisor/servers.h"
#include "supervisor_harness.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;
using testing::Harness;
using testing::Hook;
using testing::kVm;
using testing::StartBody;

TEST(RunHookBody, RawPayloadAsTheWholeBodyStartsTheEphemeralRunner) {
  Harness h;
  std::string payload = *EncodeRunPayload(RunPayload::Ephemeral(Secret("jit-raw-0001")));
  auto r = Hook(h, "run", payload + "\n");
  ASSERT_EQ(r.status, 200) << r.body;
  int pid = h.processes.WaitForSpawn("runner");
  EXPECT_EQ(h.processes.child(pid).spec.secret_env.at(kJitConfigEnv).Reveal(), "jit-raw-0001");
  EXPECT_EQ(h.supervisor->Snapshot().mode, "ephemeral");
}

TEST(RunHookBody, WrappedPayloadStartsTheEphemeralRunnerAndNamesTheVm) {
  Harness h;
  std::string payload = *EncodeRunPayload(RunPayload::Ephemeral(Secret("jit-wrapped-01")));
  auto r = Hook(h, "run", json{{"runHookPayload", payload}, {"microvmId", kVm}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  int pid = h.processes.WaitForSpawn("runner");
  EXPECT_EQ(h.processes.child(pid).spec.secret_env.at(kJitConfigEnv).Reveal(), "jit-wrapped-01");
  EXPECT_EQ(h.supervisor->Snapshot().microvm_id, kVm);
}

TEST(RunHookBody, RawWarmPayloadReachesIdle) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", *EncodeRunPayload(RunPayload::Warm())).status, 200);
  EXPECT_EQ(h.state(), State::kIdle);
  EXPECT_EQ(h.supervisor->Snapshot().mode, "warm");
}

TEST(RunHookBody, RawPayloadAsAJsonStringIsAccepted) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", json(*EncodeRunPayload(RunPayload::Warm())).dump()).status, 200);
  EXPECT_EQ(h.state(), State::kIdle);
}

TEST(RunHookBody, RawGarbageIsRefusedWithoutChangingState) {
  Harness h;
  auto r = Hook(h, "run", "not a payload");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"], "bad_payload");
  EXPECT_EQ(Hook(h, "run", "v7.AAAA").status, 400);
  EXPECT_EQ(h.state(), State::kSnapshotted);
}

// A warm VM that is IDLE after one suspend; `network` decides what /resume finds.
struct ResumeFixture {
  explicit ResumeFixture(const std::string& route, const std::string& resolv) {
    dir = std::filesystem::temp_directory_path() /
          ("mvr-net-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "route") << route;
    std::ofstream(dir / "resolv.conf") << resolv;
    SupervisorConfig config = testing::FakeConfig();
    config.network.route_table = (dir / "route").string();
    config.network.resolv_conf = (dir / "resolv.conf").string();
    config.network.command = {"net-check"};
    h = std::make_unique<Harness>(config);
  }
  ~ResumeFixture() {
    h.reset();
    std::filesystem::remove_all(dir);
  }
  void SuspendWhileIdle() {
    ASSERT_EQ(Hook(*h, "run", json{{"microvmId", kVm}}.dump()).status, 200);
    ASSERT_EQ(Hook(*h, "suspend").status, 200);
  }
  static inline int counter = 0;
  std::filesystem::path dir;
  std::unique_ptr<Harness> h;
};

const char* kRouteHeader =
    "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n";
const std::string kGoodRoute =
    std::string(kRouteHeader) + "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";

TEST(ResumeNetworking, HealthyNetworkReturnsToIdle) {
  ResumeFixture f(kGoodRoute, "nameserver 192.0.2.53\n");
  f.SuspendWhileIdle();
  auto r = Hook(*f.h, "resume");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.h->state(), State::kIdle);
  EXPECT_EQ(f.h->processes.RunCount("net-check"), 1u);
}

TEST(ResumeNetworking, NoRouteUpMovesToFailedWithTheReason) {
  ResumeFixture f(std::string(kRouteHeader) +
                      "lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n" +
                      "eth0\t00000000\t010200C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n",
                  "nameserver 192.0.2.53\n");
  f.SuspendWhileIdle();
  auto r = Hook(*f.h, "resume");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(f.h->state(), State::kFailed);
  EXPECT_NE(f.h->supervisor->Snapshot().failure.find("no network route is up"), std::string::npos)
      << f.h->supervisor->Snapshot().failure;
}

TEST(ResumeNetworking, NoNameserverMovesToFailed) {
  ResumeFixture f(kGoodRoute, "# empty\nsearch example.internal\n");
  f.SuspendWhileIdle();
  EXPECT_EQ(Hook(*f.h, "resume").status, 500);
  EXPECT_NE(f.h->supervisor->Snapshot().failure.find("DNS"), std::string::npos);
}

// A MicroVM's resolv.conf names only its 127.0.0.53 stub: containers get no resolver unless
// dockerd is given one (docker.dns, the VPC resolver by default).
TEST(ResumeNetworking, OnlyALoopbackStubWithoutDockerDnsMovesToFailed) {
  {
    ResumeFixture f(kGoodRoute, "nameserver 127.0.0.53\n");
    f.SuspendWhileIdle();
    EXPECT_EQ(Hook(*f.h, "resume").status, 200);
    EXPECT_EQ(f.h->state(), State::kIdle);
  }
  ResumeFixture f(kGoodRoute, "nameserver 127.0.0.53\n");
  f.h.reset();
  SupervisorConfig config = testing::FakeConfig();
  config.network.route_table = (f.dir / "route").string();
  config.network.resolv_conf = (f.dir / "resolv.conf").string();
  config.network.command = {"net-check"};
  config.docker.dns.clear();
  f.h = std::make_unique<Harness>(config);
  f.SuspendWhileIdle();
  EXPECT_EQ(Hook(*f.h, "resume").status, 500);
  EXPECT_EQ(f.h->state(), State::kFailed);
  EXPECT_NE(f.h->supervisor->Snapshot().failure.find("containers cannot resolve names"),
            std::string::npos)
      << f.h->supervisor->Snapshot().failure;
}

TEST(ResumeNetworking, FailingCheckCommandMovesToFailed) {
  ResumeFixture f(kGoodRoute, "nameserver 192.0.2.53\n");
  f.h->processes.SetRunResult("net-check", 1);
  f.SuspendWhileIdle();
  EXPECT_EQ(Hook(*f.h, "resume").status, 500);
  EXPECT_EQ(f.h->state(), State::kFailed);
  EXPECT_NE(f.h->supervisor->Snapshot().failure.find("network check"), std::string::npos);
  // A FAILED supervisor takes no runner.
  EXPECT_EQ(HandleRunnerStart(*f.h->supervisor, StartBody("r1", "jit-111111"), 1024).status, 409);
}

// The harness with a reseedable random source and a distinct entropy source.
struct ReseedFixture {
  ReseedFixture() {
    h = std::make_unique<Harness>();
    // Rebuild the supervisor with the random sources wired in.
    h->supervisor.reset();
    h->supervisor = std::make_unique<Supervisor>(
        testing::FakeConfig(), SupervisorDeps{h->processes, h->terminator, h->seam(), &jitter,
                                              [this](std::string_view unique) {
                                                uniques.emplace_back(unique);
                                                return entropy.Next64();
                                              }});
  }
  SeededRandom jitter{42};
  SeededRandom entropy{7};
  std::vector<std::string> uniques;  // what each reseed was given
  std::unique_ptr<Harness> h;
};

TEST(ReseedOnClone, RunAndResumeEachStartANewSequence) {
  ReseedFixture f;
  ASSERT_EQ(Hook(*f.h, "run").status, 200);
  EXPECT_NE(f.jitter.Next64(), SeededRandom(42).Next64())
      << "/run kept the random state the snapshot captured";
  ASSERT_EQ(Hook(*f.h, "suspend").status, 200);
  f.jitter.Reseed(99);  // the state the suspend snapshot captures
  ASSERT_EQ(Hook(*f.h, "resume").status, 200);
  EXPECT_NE(f.jitter.Next64(), SeededRandom(99).Next64())
      << "/resume kept the random state the snapshot captured";
}

TEST(ReseedOnClone, SeedComesFromTheEntropySourceAndStatusShowsTheFirstDraw) {
  ReseedFixture f;
  EXPECT_EQ(f.h->supervisor->Snapshot().clone_check, "");
  ASSERT_EQ(Hook(*f.h, "run").status, 200);
  SeededRandom expected(SeededRandom(7).Next64());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(expected.Next64()));
  EXPECT_EQ(f.h->supervisor->Snapshot().clone_check, hex);
  EXPECT_EQ(f.jitter.Next64(), expected.Next64());
}

// The /run payload is what differs between VMs cloned from one snapshot: the reseed mixes it in
// (the JIT config is a secret: it goes to the mixer only, never to a log).
TEST(ReseedOnClone, RunMixesThePayloadAndResumeMixesNothingOfItsOwn) {
  ReseedFixture f;
  ASSERT_EQ(Hook(*f.h, "run", json{{"microvmId", kVm}}.dump()).status, 200);
  ASSERT_EQ(f.uniques.size(), 1u);
  EXPECT_NE(f.uniques[0].find(kVm), std::string::npos);
  ASSERT_EQ(Hook(*f.h, "suspend").status, 200);
  ASSERT_EQ(Hook(*f.h, "resume").status, 200);
  ASSERT_EQ(f.uniques.size(), 2u);
  EXPECT_EQ(f.uniques[1], "");
}

// Without reseeding (the supervisor's --keep-cloned-random, for tests) the state stays as cloned.
TEST(ReseedOnClone, WithoutReseedingTheClonedStateIsKept) {
  ReseedFixture f;
  f.h->supervisor.reset();
  SupervisorDeps deps{f.h->processes, f.h->terminator, f.h->seam(), &f.jitter,
                      [](std::string_view) { return uint64_t{5}; }};
  deps.reseed = false;
  f.h->supervisor = std::make_unique<Supervisor>(testing::FakeConfig(), deps);
  ASSERT_EQ(Hook(*f.h, "run").status, 200);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(SeededRandom(42).Next64()));
  EXPECT_EQ(f.h->supervisor->Snapshot().clone_check, hex);
}

// A restored VM's clock continues from its snapshot's: /run and /resume set it from the API's
// Date when it is more than 3 s off, and leave it alone otherwise.
struct ClockFixture {
  explicit ClockFixture(bool correct = true) {
    SupervisorConfig config = testing::FakeConfig();
    config.clock_correct_after_restore = correct;
    h = std::make_unique<Harness>(config);
    h->supervisor.reset();
    SupervisorDeps deps{h->processes, h->terminator, h->seam()};
    deps.reference_time = [this]() -> Result<TimePoint> {
      if (!api_time.ok()) return api_time.status();
      return *api_time;
    };
    deps.set_wall_clock = [this](TimePoint t) {
      set_to.push_back(t);
      return Status::Ok();
    };
    h->supervisor = std::make_unique<Supervisor>(config, deps);
  }
  Result<TimePoint> api_time = Internal("unset");
  std::vector<TimePoint> set_to;
  std::unique_ptr<Harness> h;
};

TEST(ClockAfterRestore, RunSetsAClockThatIsBehindAndStatusSaysByHowMuch) {
  ClockFixture f;
  f.api_time = f.h->clock.Now() + std::chrono::hours(5);  // the snapshot is 5 h old
  ASSERT_EQ(Hook(*f.h, "run").status, 200);
  ASSERT_EQ(f.set_to.size(), 1u);
  EXPECT_EQ(f.set_to[0], f.h->clock.Now() + std::chrono::hours(5) + Duration(500));
  EXPECT_NEAR(f.h->supervisor->Snapshot().clock_corrected_seconds, 5 * 3600 + 0.5, 0.001);
}

TEST(ClockAfterRestore, ResumeLeavesAClockWithinThreeSecondsAlone) {
  ClockFixture f;
  f.api_time = f.h->clock.Now() + Duration(2000);
  ASSERT_EQ(Hook(*f.h, "run").status, 200);
  ASSERT_EQ(Hook(*f.h, "suspend").status, 200);
  f.api_time = f.h->clock.Now() - Duration(3000);
  ASSERT_EQ(Hook(*f.h, "resume").status, 200);
  EXPECT_TRUE(f.set_to.empty());
  const TimePoint behind = f.h->clock.Now() - Duration(60'000);  // the clock is ahead: set back
  f.api_time = behind;
  ASSERT_EQ(Hook(*f.h, "suspend").status, 200);
  ASSERT_EQ(Hook(*f.h, "resume").status, 200);
  ASSERT_EQ(f.set_to.size(), 1u);
  EXPECT_EQ(f.set_to[0], behind + Duration(500));
}

TEST(ClockAfterRestore, NothingIsSetWhenTurnedOffOrTheTimeCannotBeRead) {
  ClockFixture off(false);
  off.api_time = off.h->clock.Now() + std::chrono::hours(1);
  ASSERT_EQ(Hook(*off.h, "run").status, 200);
  EXPECT_TRUE(off.set_to.empty());
  ClockFixture unreadable;
  unreadable.api_time = Transient("connection refused");
  ASSERT_EQ(Hook(*unreadable.h, "run").status, 200) << "a clock it cannot check fails no hook";
  EXPECT_TRUE(unreadable.set_to.empty());
  bool warned = false;
  for (const std::string& line : unreadable.h->sink.lines()) {
    warned = warned || line.find("cannot read the time") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(WarmLeftovers, RunnerGroupIsKilledAndEveryContainerRemovedBeforeIdle) {
  Harness h;
  h.processes.SetRunResult("docker-ps", 0, "aaa111\nbbb222\n");
  ASSERT_EQ(Hook(h, "run", json{{"microvmId", kVm}}.dump()).status, 200);
  ASSERT_EQ(HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024).status, 202);
  int pid = h.processes.WaitForSpawn("runner");
  ASSERT_TRUE(h.WaitForState(State::kRunning));
  h.processes.Exit(pid, 0);
  ASSERT_TRUE(h.WaitForState(State::kIdle));
  // The group the runner led gets SIGKILL even though its leader already exited.
  auto signals = h.processes.child(pid).signals;
  EXPECT_NE(std::find(signals.begin(), signals.end(), SIGKILL), signals.end());
  // Every container, running ones too: listed with --all and removed by id with --force.
  std::vector<process::ProcessSpec> rm;
  for (const auto& run : h.processes.runs()) {
    if (run.argv[0] == "docker-rm") rm.push_back(run);
  }
  ASSERT_EQ(rm.size(), 1u);
  EXPECT_EQ(rm[0].argv, (std::vector<std::string>{"docker-rm", "aaa111", "bbb222"}));
}

TEST(WarmLeftovers, DefaultCommandsRemoveRunningContainers) {
  SupervisorConfig defaults;
  EXPECT_EQ(defaults.docker.list_containers,
            (std::vector<std::string>{"docker", "ps", "--all", "--quiet", "--no-trunc"}));
  EXPECT_EQ(defaults.docker.remove_containers,
            (std::vector<std::string>{"docker", "rm", "--force", "--volumes"}));
}

TEST(HookInput, InvalidUtf8AndMalformedBodiesGetJsonErrorsNotExceptions) {
  Harness h;
  const std::string bad = "\xff\xfe\xc3(";
  for (const std::string& hook : {std::string("run"), std::string("reboot") + bad, bad}) {
    http::HttpResponse r;
    ASSERT_NO_THROW(r = Hook(h, hook, bad));
    EXPECT_GE(r.status, 400) << hook;
    EXPECT_FALSE(json::parse(r.body, nullptr, false).is_discarded()) << r.body;
  }
  for (const std::string& body :
       {std::string("{\"runHookPayload\":\"") + bad + "\"}", std::string("v1.") + bad,
        std::string("{\"microvmId\":\"\\udc00\"}"), std::string("\"v2.") + bad + "\"",
        std::string("[1,2"), std::string(5000, '{')}) {
    http::HttpResponse r;
    ASSERT_NO_THROW(r = Hook(h, "run", body));
    EXPECT_EQ(r.status, 400) << r.body;
  }
  ASSERT_EQ(Hook(h, "run", json{{"microvmId", kVm}}.dump()).status, 200);
  for (const std::string& body :
       {std::string("{\"requestId\":\"r\",\"microvmId\":\"") + bad + "\",\"jit\":\"j\"}",
        std::string("{\"requestId\":\"") + bad + "\",\"microvmId\":\"m\",\"jit\":\"j\"}",
        std::string("{\"requestId\":\"r\",\"microvmId\":\"mvm-\xe2\x82\",\"jit\":\"j\"}"),
        std::string("{\"requestId\":[],\"microvmId\":{},\"jit\":null}")}) {
    http::HttpResponse r;
    ASSERT_NO_THROW(r = HandleRunnerStart(*h.supervisor, body, 16 * 1024));
    EXPECT_GE(r.status, 400) << body;
    EXPECT_LT(r.status, 500) << r.body;
    EXPECT_FALSE(json::parse(r.body, nullptr, false).is_discarded()) << r.body;
  }
  EXPECT_EQ(h.state(), State::kIdle);
}

TEST(HookInput, RefusalNamingAnInvalidUtf8VmIdStillAnswersJson) {
  SupervisorConfig config = testing::FakeConfig();
  config.microvm_id = "mvm-\xff";  // e.g. from MVR_MICROVM_ID
  Harness h(config);
  ASSERT_EQ(Hook(h, "run").status, 200);
  http::HttpResponse r;
  ASSERT_NO_THROW(r = HandleRunnerStart(*h.supervisor, StartBody("r1", "jit-111111"), 1024));
  EXPECT_EQ(r.status, 403);
  EXPECT_FALSE(json::parse(r.body, nullptr, false).is_discarded()) << r.body;
  ASSERT_NO_THROW(r = HandleStatus(*h.supervisor));
  EXPECT_EQ(r.status, 200);
}

}  // namespace
}  // namespace mvr::supervisor

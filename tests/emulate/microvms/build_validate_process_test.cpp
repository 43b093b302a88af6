// Image builds with real guest processes: /validate goes to a fresh test instance (another
// process, another directory) than the one /ready was polled on during the build; a guest that
// refuses /validate, or never answers it within validateTimeoutInSeconds, fails the version with
// a reason naming the hook; and no instance directory or process is left behind either way.
#include <signal.h>

#include <cerrno>

#include "emulator_harness.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct HookCall {
  std::string hook;
  int pid = 0;
  std::string dir;
};

std::vector<HookCall> ReadHookPids(const std::string& path) {
  std::vector<HookCall> calls;
  std::istringstream lines(ReadText(path));
  HookCall c;
  while (lines >> c.hook >> c.pid >> c.dir) calls.push_back(c);
  return calls;
}

bool GroupGone(int pgid) { return kill(-pgid, 0) != 0 && errno == ESRCH; }

class BuildValidateProcessTest : public ::testing::Test {
 protected:
  // Writes a Dockerfile app whose guest logs hook pids to <work>/<name>.pids and answers
  // /validate with `validate_status`; creates image `name` with /ready and /validate enabled.
  void CreateImage(EmulatorHarness& h, const std::string& name, int validate_status,
                   int validate_timeout_s = 20) {
    const std::string app = h.work() + "/" + name;
    json create =
        GuestImageRequest(name, app,
                          "MVR_TEST_HOOK_PIDS=" + PidLog(h, name) +
                              " MVR_TEST_VALIDATE_STATUS=" + std::to_string(validate_status),
                          {{"port", 9000},
                           {"microvmImageHooks",
                            {{"ready", "ENABLED"},
                             {"readyTimeoutInSeconds", 30},
                             {"validate", "ENABLED"},
                             {"validateTimeoutInSeconds", validate_timeout_s}}}});
    auto created = h.Call("POST", "/2025-09-09/microvm-images", create);
    ASSERT_EQ(created.status, 201) << created.body.dump();
  }

  static std::string PidLog(EmulatorHarness& h, const std::string& name) {
    return h.work() + "/" + name + ".pids";
  }

  // Polls version 1 of `name` until SUCCESSFUL or FAILED (bounded).
  json WaitForBuild(EmulatorHarness& h, const std::string& name) {
    json version;
    const TimePoint deadline = h.clock().Now() + Duration(30'000);
    while (h.clock().Now() < deadline) {
      version = h.Call("GET", "/2025-09-09/microvm-images/" + name + "/versions/1").body;
      const std::string state = version.value("state", "");
      if (state == "SUCCESSFUL" || state == "FAILED") break;
      h.sleeper().Sleep(Duration(50));
    }
    return version;
  }

  // Every instance the build started is gone: directory removed, process group reaped.
  void ExpectNothingLeft(EmulatorHarness& h, const std::vector<HookCall>& calls) {
    const TimePoint deadline = h.clock().Now() + Duration(10'000);
    auto all_gone = [&] {
      for (const HookCall& c : calls) {
        if (fs::exists(c.dir) || !GroupGone(c.pid)) return false;
      }
      return true;
    };
    while (!all_gone() && h.clock().Now() < deadline) h.sleeper().Sleep(Duration(20));
    for (const HookCall& c : calls) {
      EXPECT_FALSE(fs::exists(c.dir)) << c.hook << ": directory " << c.dir << " left behind";
      EXPECT_TRUE(GroupGone(c.pid)) << c.hook << ": process group " << c.pid << " left behind";
    }
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(h.state_dir() + "/vms", ec)) {
      ADD_FAILURE() << "left in vms/: " << entry.path();
    }
  }
};

TEST_F(BuildValidateProcessTest, ValidateGoesToAFreshTestInstanceNotTheBuildProcess) {
  EmulatorHarness h(Emulator::Options{});
  CreateImage(h, "checked", 200);
  json version = WaitForBuild(h, "checked");
  ASSERT_EQ(version["state"], "SUCCESSFUL") << version.dump();
  EXPECT_EQ(version["status"], "ACTIVE");

  std::vector<HookCall> calls = ReadHookPids(PidLog(h, "checked"));
  ASSERT_EQ(calls.size(), 3u) << ReadText(PidLog(h, "checked"));
  EXPECT_EQ(calls[0].hook, "ready");  // the build instance
  EXPECT_EQ(calls[1].hook, "ready");  // the test instance coming up
  EXPECT_EQ(calls[2].hook, "validate");
  EXPECT_NE(calls[2].pid, calls[0].pid) << "/validate reached the build process";
  EXPECT_NE(calls[2].dir, calls[0].dir) << "/validate ran in the build's directory";
  EXPECT_EQ(calls[2].pid, calls[1].pid);
  EXPECT_EQ(calls[2].dir, calls[1].dir);
  ExpectNothingLeft(h, calls);
}

TEST_F(BuildValidateProcessTest, RefusedOrSilentValidateFailsTheVersionAndCleansUp) {
  EmulatorHarness h(Emulator::Options{});
  CreateImage(h, "refused", 500);
  CreateImage(h, "silent", 503, /*validate_timeout_s=*/1);  // 503 forever: times out

  json refused = WaitForBuild(h, "refused");
  EXPECT_EQ(refused["state"], "FAILED") << refused.dump();
  EXPECT_EQ(refused["status"], "INACTIVE");
  const std::string why = refused.value("stateReason", "");
  EXPECT_NE(why.find("/validate hook failed on the test MicroVM: answered HTTP 500"),
            std::string::npos)
      << why;

  json silent = WaitForBuild(h, "silent");
  EXPECT_EQ(silent["state"], "FAILED") << silent.dump();
  const std::string timeout = silent.value("stateReason", "");
  EXPECT_NE(timeout.find("/validate hook failed on the test MicroVM: no 200 within 1s"),
            std::string::npos)
      << timeout;

  auto builds = h.Call("GET", "/2025-09-09/microvm-images/refused/versions/1/builds");
  ASSERT_EQ(builds.status, 200) << builds.body.dump();
  ASSERT_EQ(builds.body["items"].size(), 1u);
  EXPECT_EQ(builds.body["items"][0]["buildState"], "FAILED");
  EXPECT_EQ(h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "refused"}}).status, 404);

  std::vector<HookCall> calls = ReadHookPids(PidLog(h, "refused"));
  std::vector<HookCall> more = ReadHookPids(PidLog(h, "silent"));
  ASSERT_EQ(calls.size(), 3u) << ReadText(PidLog(h, "refused"));
  EXPECT_EQ(calls[2].hook, "validate");
  EXPECT_NE(calls[2].pid, calls[0].pid);
  calls.insert(calls.end(), more.begin(), more.end());
  ExpectNothingLeft(h, calls);
}

}  // namespace
}  // namespace mvr::emulate::microvms

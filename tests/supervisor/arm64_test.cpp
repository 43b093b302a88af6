// The ARM64 supervisor bundle (scripts/build-supervisor-arm64.sh) starts under qemu-aarch64-static
// with its own glibc and answers /ready, then terminates on /terminate. Skips with a message when
// qemu or the bundle is absent. Label: arm64.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "script_fixture.h"

namespace mvr::supervisor {
namespace {

std::string FindQemu() {
  for (const char* p : {"/usr/bin/qemu-aarch64-static", "/usr/bin/qemu-aarch64"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

std::string BundleDir() {
  const char* env = std::getenv("MVR_ARM64_BUNDLE");
  if (env != nullptr && *env != '\0') return env;
  return std::string(MVR_SOURCE_DIR) + "/build-arm64/supervisor-bundle";
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

TEST(Arm64Supervisor, BundleStartsUnderQemuAndAnswersReady) {
  std::string qemu = FindQemu();
  if (qemu.empty())
    GTEST_SKIP() << "qemu-aarch64-static is not installed (apt-get install qemu-user-static)";
  std::string bundle = BundleDir();
  if (!std::filesystem::exists(bundle + "/lib/mvr.bin")) {
    GTEST_SKIP() << "no ARM64 bundle at " << bundle
                 << "; build it with scripts/build-supervisor-arm64.sh (needs "
                    "g++-aarch64-linux-gnu and root once for the arm64 -dev packages)";
  }
  process::PosixProcessRunner processes;
  testing::ScriptDir dir("mvr-arm64");
  std::vector<std::string> launch = {qemu, bundle + "/lib/ld-linux-aarch64.so.1", "--library-path",
                                     bundle + "/lib", bundle + "/lib/mvr.bin"};

  process::ProcessSpec version;
  version.argv = launch;
  version.argv.push_back("version");
  version.env = {{"PATH", "/usr/bin:/bin"}};
  auto v = processes.Run(version, Duration(120'000));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->exit.code, 0);
  EXPECT_EQ(v->output.rfind("mvr ", 0), 0u) << v->output;

  int hook_port = FreePort();
  int control_port = FreePort();
  process::ProcessSpec spec;
  spec.argv = launch;
  for (const char* a :
       {"supervisor", "--host", "127.0.0.1", "--no-docker", "--runner-command", "/bin/sh"}) {
    spec.argv.push_back(a);
  }
  spec.env = {{"PATH", "/usr/bin:/bin"},
              {"MVR_HOOK_PORT", std::to_string(hook_port)},
              {"MVR_PORT_8080", std::to_string(control_port)},
              {"MVR_SELF_TERMINATE", "poweroff"}};
  spec.output_path = dir.file("supervisor.log");
  auto pid = processes.Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();

  http::CurlHttpClient client;
  RealSleeper sleeper;
  auto post = [&](const std::string& hook) {
    http::HttpRequest req;
    req.method = "POST";
    req.url =
        "http://127.0.0.1:" + std::to_string(hook_port) + "/aws/lambda-microvms/runtime/v1/" + hook;
    req.timeout = Duration(10'000);
    return client.Send(req);
  };
  int status = 0;
  for (int i = 0; i < 600 && status != 200; ++i) {
    auto r = post("ready");
    status = r.ok() ? r->status : 0;
    if (status != 200) sleeper.Sleep(Duration(100));
  }
  EXPECT_EQ(status, 200) << dir.Read("supervisor.log");
  auto t = post("terminate");
  EXPECT_TRUE(t.ok() && t->status == 200);
  auto exited = processes.Wait(*pid);
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->code, 0) << dir.Read("supervisor.log");
}

}  // namespace
}  // namespace mvr::supervisor

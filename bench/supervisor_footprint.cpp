// The supervisor's footprint in an idle VM (issue 34): from exec to its first 200 from /ready,
// then, once it has been idle past its handler threads' idle exit, its resident memory and
// thread count. The readiness checks it runs are the image's: the runner command exists, and a
// `docker info` probe (here a stand-in that exits 1 at once, as the real CLI does when no daemon
// runs) shows Docker is not already running.
//
//   supervisor_footprint [--mvr PATH] [--runs N] [--idle-ms MS]
//
// --mvr: the binary to measure (default: this build's mvr). bench/supervisor-footprint.sh builds
// the one that goes into the image (the supervisor-only Release build) and passes it here.
// Prints each run, then min / median / max of each figure. docs/supervisor.md has the figures.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/files.h"
#include "http/socket_client.h"
#include "process/process_runner.h"

namespace {

using Steady = std::chrono::steady_clock;

// A loopback port that was free a moment ago.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// VmRSS (kB) and Threads from /proc/PID/status.
std::pair<long, long> RssAndThreads(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  long rss = -1, threads = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::atol(line.c_str() + 6);
    if (line.rfind("Threads:", 0) == 0) threads = std::atol(line.c_str() + 8);
  }
  return {rss, threads};
}

struct Figures {
  std::vector<double> ready_ms, rss_kb, threads;
};

void PrintSpread(const char* what, std::vector<double> v, const char* unit) {
  std::sort(v.begin(), v.end());
  const double median =
      v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  std::printf("%s: min %.2f %s, median %.2f %s, max %.2f %s\n", what, v.front(), unit, median, unit,
              v.back(), unit);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mvr = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  int runs = 10;
  int idle_ms = 3000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mvr")) mvr = argv[i + 1];
    if (!std::strcmp(argv[i], "--runs")) runs = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--idle-ms")) idle_ms = std::max(0, std::atoi(argv[i + 1]));
  }
  std::printf("supervisor footprint of %s, %d runs, idle %d ms before reading memory\n",
              mvr.c_str(), runs, idle_ms);
  mvr::process::PosixProcessRunner processes;
  mvr::http::SocketHttpClient client(mvr::http::SocketHttpClient::Options{});
  Figures f;
  for (int run = 0; run < runs; ++run) {
    auto dir = mvr::TemporaryDirectory::Create("mvr-supervisor-footprint");
    if (!dir.ok()) return 1;
    const std::string config = dir->path() + "/supervisor.json";
    std::ofstream(config) << R"({"docker": {"containerd": [], "dockerd": ["/bin/true"],)"
                          << R"( "info": ["/bin/false"]}})";
    const int hook_port = FreePort();
    int control_port = FreePort();
    while (control_port == hook_port) control_port = FreePort();
    mvr::process::ProcessSpec spec;
    spec.argv = {mvr,
                 "supervisor",
                 "--config",
                 config,
                 "--host",
                 "127.0.0.1",
                 "--hook-port",
                 std::to_string(hook_port),
                 "--control-port",
                 std::to_string(control_port),
                 "--runner-command",
                 "/bin/sh"};
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"MVR_SELF_TERMINATE", "poweroff"}};
    spec.output_path = dir->path() + "/supervisor.log";
    mvr::http::HttpRequest ready;
    ready.method = "POST";
    ready.url =
        "http://127.0.0.1:" + std::to_string(hook_port) + "/aws/lambda-microvms/runtime/v1/ready";
    ready.timeout = mvr::Duration(2'000);
    const auto start = Steady::now();
    auto pid = processes.Spawn(spec);
    if (!pid.ok()) return 1;
    bool up = false;
    while (Steady::now() - start < std::chrono::seconds(30)) {
      auto answer = client.Send(ready);
      if (answer.ok() && answer->status == 200) {
        up = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto end = Steady::now();
    if (!up) {
      std::fprintf(stderr, "run %d: no 200 from /ready in 30 s (see %s)\n", run,
                   spec.output_path.c_str());
      dir->Keep();
      (void)processes.Signal(*pid, SIGKILL);
      (void)processes.Wait(*pid);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    auto [rss, threads] = RssAndThreads(*pid);
    (void)processes.Signal(*pid, SIGKILL);
    (void)processes.Wait(*pid);
    f.ready_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    f.rss_kb.push_back(static_cast<double>(rss));
    f.threads.push_back(static_cast<double>(threads));
    std::printf("  run %2d: exec -> /ready 200 %.2f ms; idle: %ld kB resident, %ld threads\n",
                run + 1, f.ready_ms.back(), rss, threads);
  }
  PrintSpread("exec -> /ready 200", f.ready_ms, "ms");
  PrintSpread("idle resident memory", f.rss_kb, "kB");
  PrintSpread("idle threads", f.threads, "");
  return 0;
}

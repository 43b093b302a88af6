// Demo: `mvr demo`, the whole Action path on one machine with no cloud account. It starts the
// GitHub emulator and the MicroVMs emulator (whose image runs the real `mvr supervisor` with the
// stand-in runner), then serves queued jobs through the real `mvr start` / `mvr stop` commands as
// a workflow would: a few ephemeral jobs at once, then a warm pair on one server. It prints
// progress, a table of latency segments (p50/p95) and the outcome, and fails if any job failed
// or anything (a VM, a runner) was left behind.
// Thread-safety: Run is called once.
#pragma once

#include <string>

#include "base/seam.h"
#include "http/client.h"
#include "process/process_runner.h"

namespace mvr::testbed {

struct DemoOptions {
  std::string mvr_path;    // the mvr binary to run for every part
  int ephemeral_jobs = 3;  // run concurrently
  bool warm_pair = true;
  std::string work_dir;  // "" = a new temporary directory, removed afterwards
  bool keep_work_dir = false;
  std::string run_body = "raw";    // the /run hook body form (`mvr emulate microvms --run-body`)
  std::string vm = "process";      // what stands behind a MicroVM (`mvr emulate microvms --vm`)
  std::string vm_arch = "x86_64";  // with vm qemu: the guests' machine (x86_64, arm64)
};

class Demo {
 public:
  Demo(const Seam& seam, process::ProcessRunner& processes, http::HttpClient& http,
       DemoOptions options)
      : seam_(seam), processes_(processes), http_(http), options_(std::move(options)) {}

  // 0 when every job succeeded and nothing was left behind; 1 otherwise.
  int Run();

 private:
  Seam seam_;
  process::ProcessRunner& processes_;
  http::HttpClient& http_;
  DemoOptions options_;
};

}  // namespace mvr::testbed

// RunnerSetDemo: `mvr demo`, the runner set on one machine with no cloud account. It starts the
// GitHub emulator (signing its workflow_job webhooks to `mvr serve`), the MicroVMs emulator whose
// images run the real `mvr supervisor` with the stand-in runner, and `mvr serve` itself on SQLite;
// queues a burst of jobs over two runner classes; shows progress while they run; then prints a
// p50/p95 table of every segment from queued to completed (from mvr serve's GET /timeline and
// its own polling of the emulator) and the outcome: jobs completed, VMs left, runners left. Any
// failed job or leftover makes it fail. With a warm pool, mvr-small's pool is filled before the
// burst and its members at the end are not leftovers.
// Thread-safety: Run is called once.
#pragma once

#include <string>

#include "base/seam.h"
#include "http/client.h"
#include "process/process_runner.h"

namespace mvr::testbed {

struct RunnerSetDemoOptions {
  std::string mvr_path;  // the mvr binary to run for every part
  int jobs = 20;         // queued at once, alternating between the two classes
  int job_seconds = 1;   // how long each job runs (a shell sleep)
  std::string work_dir;  // "" = a new temporary directory, removed afterwards
  bool keep_work_dir = false;
  // The emulators' knobs.
  double run_rate = 5;              // RunMicrovm calls per second (the platform's quota)
  int vm_boot_ms = 0;               // median RunMicrovm → program start (log-normal); 0 = at once
  double boot_failure = 0;          // probability a launched VM never boots
  int webhook_delay_ms = 0;         // webhook deliveries are delayed uniformly up to this
  double webhook_duplication = 0;   // probability a webhook is delivered twice
  int runner_startup_ms = 0;        // the stand-in runner's start-up delay (and registration's)
  int runner_registration_ms = -1;  // its registration delay alone (-1 = runner_startup_ms)
  int runner_offline_after_seconds = 60;  // GitHub shows a silent idle runner offline after this
  double runner_busy_lies = 0;        // probability GitHub's REST says busy:false for a busy runner
  std::string assignment = "oldest";  // which idle runner GitHub hands a job: oldest or random
  std::string rate_limits = "off";    // "github": the emulator enforces GitHub's secondary limits
  std::string min_runner_version;     // GitHub refuses runners older than this ("" = none)
  std::string microvms_config;     // a `mvr emulate microvms --config` file (overrides the above)
  std::string run_body = "raw";    // the /run hook body form (`mvr emulate microvms --run-body`)
  std::string vm = "process";      // what stands behind a MicroVM (`mvr emulate microvms --vm`)
  std::string vm_arch = "x86_64";  // with vm qemu: the guests' machine (x86_64, arm64)
  int timeout_seconds = 600;       // for the whole burst to complete
  int warm_pool = 0;        // mvr-small keeps this many suspended VMs (filled before the burst)
  int hot_pool = 0;         // ... and this many suspended VMs with their runners connected
  std::string report_html;  // "" = none; else mvr serve's status page is saved here at the end
};

class RunnerSetDemo {
 public:
  RunnerSetDemo(const Seam& seam, process::ProcessRunner& processes, http::HttpClient& http,
                RunnerSetDemoOptions options)
      : seam_(seam), processes_(processes), http_(http), options_(std::move(options)) {}

  // 0 when every job completed successfully and nothing was left behind; 1 otherwise.
  int Run();

 private:
  Seam seam_;
  process::ProcessRunner& processes_;
  http::HttpClient& http_;
  RunnerSetDemoOptions options_;
};

}  // namespace mvr::testbed

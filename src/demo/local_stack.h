// LocalStack: the two emulators as child processes of one `mvr` binary, on loopback ports they
// pick themselves. The MicroVMs emulator's image "mvr-runner" runs the real `mvr supervisor`
// (without Docker) whose runner is the stand-in `mvr emulate runner`. Used by `mvr demo` and by
// the end-to-end tests.
// Thread-safety: Start and Stop from one thread; the accessors afterwards from any.
#pragma once

#include <string>
#include <vector>

#include "base/seam.h"
#include "base/secret.h"
#include "supervisor/process_runner.h"

namespace mvr::demo {

inline constexpr char kDemoImage[] = "mvr-runner";
inline constexpr char kDemoRepository[] = "demo/app";
inline constexpr char kDemoRegion[] = "us-east-1";

class LocalStack {
 public:
  LocalStack(const Seam& seam, supervisor::ProcessRunner& processes, std::string mvr_path,
             std::string work_dir)
      : seam_(seam), processes_(processes), mvr_(std::move(mvr_path)), dir_(std::move(work_dir)) {}
  ~LocalStack() { Stop(); }

  // Starts both emulators and waits (up to 30 s) for each to print its URL.
  Status Start();
  // SIGTERM to each emulator (which terminates its VMs), then waits for it.
  void Stop();

  const std::string& github_url() const { return github_url_; }
  const std::string& microvms_url() const { return microvms_url_; }
  const Secret& token() const { return token_; }
  const std::string& dir() const { return dir_; }
  // The environment a workflow step would have for `mvr start`/`mvr stop` (no secrets: pass
  // token() through ProcessSpec::secret_env as INPUT_GITHUB_TOKEN).
  std::map<std::string, std::string> StepEnvironment(const std::string& run_id,
                                                     const std::string& job) const;

 private:
  Result<std::string> WaitForUrl(const std::string& log_path, const std::string& what, int pid);

  const Seam& seam_;
  supervisor::ProcessRunner& processes_;
  std::string mvr_;
  std::string dir_;
  Secret token_;
  std::string github_url_, microvms_url_;
  std::vector<int> pids_;
};

}  // namespace mvr::demo

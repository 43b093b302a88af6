// MotoServer: starts moto's standalone server (`moto_server`, a local AWS emulator) on 127.0.0.1
// and a free port for a test, waits until it answers, and stops exactly the process it started,
// by pid. Header-only so any test binary can include it (tests/support is not a library).
//
//   MVR_START_MOTO_OR_SKIP(moto_);   // in a fixture's SetUp; moto_ a unique_ptr<MotoServer>
//   ... endpoint moto_->url() ...
//
// Every request that reaches moto through url() is first held to botocore's model of its service
// (DynamoDB, SQS, SSM, S3; support/aws_contract_proxy.h): a breach fails the owning test when the
// MotoServer is destroyed (or at ExpectNoContractViolations()), naming the operation and field.
// Requests to services with no model here (IAM, STS) pass unchecked and are counted.
//
// moto_server is looked up on PATH, then as /root/.pyenv/versions/*/bin/moto_server (the machine
// image's pyenv Python, which a non-interactive shell does not put on PATH). When it is absent,
// Start() returns NotFound with a message fit for GTEST_SKIP.
// Thread-safety: one owner; Start and Stop are not meant to race.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aws/contracts/aws_contracts.h"
#include "base/clock.h"
#include "base/host_port.h"
#include "base/status.h"
#include "http/curl_client.h"
#include "support/aws_contract_proxy.h"

extern char** environ;

namespace mvr::testing {

inline std::optional<std::string> FindMotoServer() {
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t colon = p.find(':', start);
      if (colon == std::string::npos) colon = p.size();
      std::string candidate = p.substr(start, colon - start) + "/moto_server";
      // A pyenv shim hides which Python runs moto; the real script is found below instead.
      const bool shim = candidate.find("/.pyenv/shims/") != std::string::npos;
      if (colon > start && !shim && ::access(candidate.c_str(), X_OK) == 0) return candidate;
      start = colon + 1;
    }
  }
  glob_t g{};
  std::optional<std::string> found;
  if (::glob("/root/.pyenv/versions/*/bin/moto_server", 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc && !found; ++i) {
      if (::access(g.gl_pathv[i], X_OK) == 0) found = g.gl_pathv[i];
    }
  }
  ::globfree(&g);
  return found;
}

inline bool ContractsWanted() {
  const char* v = std::getenv("MVR_MOTO_CHECK_CONTRACTS");
  return v == nullptr || std::string(v) != "0";
}

class MotoServer {
 public:
  struct Options {
    std::map<std::string, std::string> env;  // extra environment, e.g. INITIAL_NO_AUTH_ACTION_COUNT
    Duration startup_timeout{60'000};
    // Serve one request at a time (moto_server's own werkzeug server is threaded, and its DynamoDB
    // backend holds no lock, so two concurrent conditional writes can both pass there; DynamoDB
    // checks and writes each item atomically). Races then test the client, not moto.
    bool one_request_at_a_time = false;
    // Put the contract-checking proxy in front of moto (url() is then the proxy's address). On
    // unless MVR_MOTO_CHECK_CONTRACTS=0 is set (to time the suites without it).
    bool check_contracts = ContractsWanted();
    // Where botocore's service models are read from (awscli's copy; plain or .gz files).
    std::string botocore_data = std::string(aws::kAwscliBotocoreData);
  };

  static Result<std::unique_ptr<MotoServer>> Start() { return Start(Options()); }

  static Result<std::unique_ptr<MotoServer>> Start(const Options& options) {
    auto binary = FindMotoServer();
    if (!binary) {
      return NotFound(
          "moto_server not found (not on PATH, no /root/.pyenv/versions/*/bin/moto_server); "
          "install moto[server] to run the moto-backed tests");
    }
    RealSleeper sleeper;
    SystemClock clock;
    Status last = Internal("not started");
    for (int attempt = 0; attempt < 3; ++attempt) {  // a picked port can be taken meanwhile
      MVR_ASSIGN_OR_RETURN(int port, PickFreeLoopbackPort());
      std::unique_ptr<MotoServer> server(new MotoServer(port));
      last = server->Spawn(*binary, options);
      if (!last.ok()) continue;
      last = server->WaitReady(options.startup_timeout, clock, sleeper);
      if (!last.ok()) continue;
      if (options.check_contracts) MVR_RETURN_IF_ERROR(server->StartProxy(options.botocore_data));
      return server;
    }
    return last;
  }

  ~MotoServer() {
    Stop();
    ExpectNoContractViolations();
    if (!log_path_.empty()) ::unlink(log_path_.c_str());
  }
  MotoServer(const MotoServer&) = delete;
  MotoServer& operator=(const MotoServer&) = delete;

  // Where clients connect: the contract proxy's port, or moto's own when it is off.
  int port() const { return proxy_ ? proxy_->port() : port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  // moto itself, bypassing the contract check (for requests meant to break the contract).
  std::string moto_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Fails the current test once per recorded contract breach, and forgets them.
  void ExpectNoContractViolations() {
    if (!proxy_) return;
    for (const std::string& v : proxy_->TakeViolations()) {
      ADD_FAILURE() << "request breaks botocore's model: " << v;
    }
  }
  // The breaches recorded so far (kept; the destructor still reports them).
  std::vector<std::string> ContractViolations() const {
    return proxy_ ? proxy_->Violations() : std::vector<std::string>();
  }
  std::vector<std::string> TakeContractViolations() {
    return proxy_ ? proxy_->TakeViolations() : std::vector<std::string>();
  }
  AwsContractProxy::Counts ContractCounts() const {
    return proxy_ ? proxy_->counts() : AwsContractProxy::Counts();
  }
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // Stops the proxy (its violations are kept), then moto: SIGTERM, then SIGKILL if it has not
  // exited within a few seconds. Idempotent.
  void Stop() {
    if (proxy_) proxy_->Stop();
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    RealSleeper sleeper;
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      sleeper.Sleep(Duration(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  explicit MotoServer(int port) : port_(port) {}

  Status StartProxy(const std::string& botocore_data) {
    proxy_ = std::make_unique<AwsContractProxy>(port_, botocore_data);
    Status started = proxy_->Start();
    if (!started.ok()) {
      proxy_.reset();
      Stop();
      // Not NotFound: a missing model must fail the moto tests, not skip them.
      return Internal("cannot check requests against botocore's models: " + started.message() +
                      " (or set MotoServer::Options::check_contracts = false)");
    }
    return Status::Ok();
  }

  Status Spawn(const std::string& binary, const Options& options) {
    log_path_ =
        "/tmp/mvr-moto-" + std::to_string(::getpid()) + "-" + std::to_string(port_) + ".log";
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string kv = *e;
      std::string key = kv.substr(0, kv.find('='));
      if (options.env.count(key) == 0) env_strings.push_back(kv);
    }
    for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string port_text = std::to_string(port_);
    std::vector<std::string> args = {binary, "-H", "127.0.0.1", "-p", port_text};
    std::string program = binary;
    if (options.one_request_at_a_time) {
      auto python = ScriptInterpreter(binary);
      if (!python) {
        return NotFound("cannot serve moto one request at a time: " + binary +
                        " is not a Python script with a #! line (a pyenv shim?)");
      }
      program = *python;
      args = {program,
              "-c",
              "import sys, moto.server as m\n"
              "serve = m.run_simple\n"
              "m.run_simple = lambda *a, **k: serve(*a, **dict(k, threaded=False))\n"
              "m.main(sys.argv[1:])\n",
              "-H",
              "127.0.0.1",
              "-p",
              port_text};
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Internal("could not start " + binary + ": error " + std::to_string(rc));
    pid_ = pid;
    return Status::Ok();
  }

  // The interpreter named by a script's "#!" line, when it is a Python.
  static std::optional<std::string> ScriptInterpreter(const std::string& script) {
    FILE* f = std::fopen(script.c_str(), "r");
    if (f == nullptr) return std::nullopt;
    char line[512] = {0};
    const bool read = std::fgets(line, sizeof(line), f) != nullptr;
    std::fclose(f);
    std::string first = read ? line : "";
    if (first.rfind("#!", 0) != 0) return std::nullopt;
    first = first.substr(2, first.find_first_of(" \n") - 2);
    if (first.find("python") == std::string::npos || ::access(first.c_str(), X_OK) != 0) {
      return std::nullopt;
    }
    return first;
  }

  Status WaitReady(Duration timeout, const Clock& clock, Sleeper& sleeper) {
    http::CurlHttpClient http;
    const TimePoint deadline = clock.Now() + timeout;
    while (clock.Now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Transient("moto_server exited during start-up; see " + log_path_);
      }
      http::HttpRequest req;
      req.url = moto_url() + "/moto-api/";
      req.timeout = Duration(2'000);
      auto resp = http.Send(req);
      if (resp.ok() && resp->status == 200) return Status::Ok();
      sleeper.Sleep(Duration(100));
    }
    Stop();
    return Transient("moto_server did not answer within the start-up timeout; see " + log_path_);
  }

  int port_ = 0;
  pid_t pid_ = -1;
  std::unique_ptr<AwsContractProxy> proxy_;
  std::string log_path_;
};

}  // namespace mvr::testing

// In a fixture's SetUp (or a test): starts moto's server into `member`, a
// std::unique_ptr<MotoServer>; skips the test when moto_server is not installed and fails it when
// moto does not start.
#define MVR_START_MOTO_OR_SKIP(member) \
  MVR_START_MOTO_WITH_OR_SKIP(member, ::mvr::testing::MotoServer::Options())
// The same with MotoServer::Options (e.g. EnforcingMotoOptions, for IAM).
#define MVR_START_MOTO_WITH_OR_SKIP(member, options)                    \
  do {                                                                  \
    auto mvr_started_moto = ::mvr::testing::MotoServer::Start(options); \
    if (!mvr_started_moto.ok()) {                                       \
      if (mvr_started_moto.status().code() == ::mvr::Code::kNotFound) { \
        GTEST_SKIP() << mvr_started_moto.status().message();            \
      }                                                                 \
      FAIL() << mvr_started_moto.status().ToString();                   \
    }                                                                   \
    member = std::move(*mvr_started_moto);                              \
  } while (false)

// `mvr emulate microvms`: a local, wire-compatible Lambda MicroVMs service. Prints its URL once
// ready, serves until SIGINT or SIGTERM, then terminates its MicroVMs and exits 0.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "aws/services/s3.h"
#include "aws/signing/credentials_chain.h"
#include "aws/signing/credentials_profile.h"
#include "aws/signing/endpoints.h"
#include "base/files.h"
#include "base/host_port.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "emulate/microvms/emulator.h"
#include "emulate/microvms/host/guest_dns.h"
#include "emulate/microvms/host/network_namespaces.h"
#include "emulate/microvms/sigv4_keys.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

namespace mvr::cli {

namespace {

struct MicrovmsFlags {
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> images;
  std::vector<std::string> image_descriptions;  // NAME=TEXT
  std::string region = "us-east-1";
  std::string state_dir;
  std::vector<int> guest_ports;
  std::string config_file;
  int64_t memory_quota_mib = -1;
  double run_rate = -1;
  double run_burst = -1;
  std::string sigv4_keys_file;
  std::string iam_policies_file;
  std::string request_log;
  double idle_time_scale = 0;           // 0: not given
  double duration_time_scale = 0;       // 0: not given
  std::string program_exit;             // "": not given
  int64_t running_before_hook_ms = -1;  // -1: not given
  std::string run_body = "raw";
  bool require_image_arn = false;
  bool require_ingress_connector = false;
  std::string network = "host";
  std::string netns_range;
  std::string s3_endpoint_url;
  std::string vm = "process";
  std::string vm_kernel;
  std::string vm_arch = "x86_64";
  std::string vm_guest_bundle;
  std::string accel = "auto";
  int64_t vm_memory_mib = 512;
  std::vector<std::string> vm_dns_records;
  int64_t image_hook_timeout = 10;
  std::string image_capabilities = "ALL";
};

// Where scripts/setup.sh puts the guest kernel for --vm qemu (scripts/fetch-vm-kernel.sh).
constexpr char kDefaultVmKernelDir[] = "/var/cache/mvr/vm-kernel";
constexpr char kDefaultArm64VmKernelDir[] = "/var/cache/mvr/vm-kernel-arm64";

// The value of the environment variable `name`, else `fallback`.
std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Where s3:// code artifacts are read from: --s3-endpoint-url, else the usual AWS settings
// (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile, then AWS's regional endpoint), with the
// default credentials chain.
struct ArtifactReader {
  std::unique_ptr<aws::DefaultCredentialsChain> credentials;
  std::unique_ptr<aws::S3Client> s3;

  Status Fetch(const std::string& uri, const std::string& local_path) {
    MVR_ASSIGN_OR_RETURN(aws::S3Location at, aws::ParseS3Uri(uri));
    MVR_ASSIGN_OR_RETURN(std::string bytes, s3->GetObject(at));
    std::ofstream out(local_path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return Internal("cannot write " + local_path);
    return Status::Ok();
  }
};

// InvalidArgument for a malformed --s3-endpoint-url. Without the flag, AWS settings that do not
// resolve (a malformed AWS_ENDPOINT_URL...) leave s3:// builds failing with a stateReason that
// says so, rather than stopping an emulator that may never see one: null and a warning.
Result<std::unique_ptr<ArtifactReader>> NewArtifactReader(const MicrovmsFlags& f, Context& ctx,
                                                          http::HttpClient& http) {
  aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
  Result<aws::ServiceEndpoint> endpoint =
      aws::ResolveEndpoint(aws::AwsService::kS3, ctx.env, shared);
  if (!endpoint.ok()) {
    endpoint = aws::ResolveEndpoint(aws::AwsService::kS3, ctx.env, shared, f.region);
  }
  if (!f.s3_endpoint_url.empty()) {
    auto parsed = http::ParseUrl(f.s3_endpoint_url);
    if (!parsed.ok() || f.s3_endpoint_url.find("://") == std::string::npos) {
      return InvalidArgument("--s3-endpoint-url is not an http(s) URL: " + f.s3_endpoint_url);
    }
    if (!endpoint.ok()) endpoint = aws::ServiceEndpoint{"", f.region, "s3", ""};
    endpoint->url = f.s3_endpoint_url;
    while (!endpoint->url.empty() && endpoint->url.back() == '/') endpoint->url.pop_back();
    endpoint->source = "--s3-endpoint-url";
  }
  if (!endpoint.ok()) {
    ctx.logger.Warn("s3:// code artifacts cannot be read; builds from them will fail",
                    {{"error", endpoint.status().message()}});
    return std::unique_ptr<ArtifactReader>();
  }
  auto reader = std::make_unique<ArtifactReader>();
  reader->credentials = std::make_unique<aws::DefaultCredentialsChain>(ctx.env, http, ctx.clock);
  aws::S3ClientOptions so;
  so.endpoint = *endpoint;
  reader->s3 = std::make_unique<aws::S3Client>(so, http, *reader->credentials, ctx.seam());
  return reader;
}

using MicrovmsOptions = emulate::microvms::Emulator::Options;

// --config and the flags that set the service model's knobs (quotas, rate limits, time scales,
// the hooks' form and the stricter readings).
Status ApplyModelFlags(const MicrovmsFlags& f, emulate::microvms::MicrovmModelOptions& model) {
  model.region = f.region;
  if (!f.config_file.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(f.config_file, "--config"));
    nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
    if (config.is_discarded()) return InvalidArgument(f.config_file + " is not valid JSON");
    MVR_RETURN_IF_ERROR(model.ApplyJson(config).Annotate(f.config_file));
  }
  if (f.memory_quota_mib >= 0) model.memory_quota_mib = f.memory_quota_mib;
  if (f.run_rate > 0 && f.run_rate < 0.001) {
    return InvalidArgument("--run-rate must be 0 (no limit) or from 0.001 to 1000000");
  }
  if (f.run_rate >= 0) {
    model.rate_limits["RunMicrovm"].per_second = f.run_rate;
    model.rate_limits["RunMicrovm"].burst = f.run_burst >= 0 ? f.run_burst : f.run_rate;
  } else if (f.run_burst >= 0) {
    model.rate_limits["RunMicrovm"].burst = f.run_burst;
  }
  if (f.idle_time_scale > 0) model.idle_time_scale = f.idle_time_scale;
  if (f.duration_time_scale > 0) model.duration_time_scale = f.duration_time_scale;
  if (!f.program_exit.empty()) model.program_exit_terminates = f.program_exit == "terminate";
  model.registered_hook_timeout_seconds = static_cast<int>(f.image_hook_timeout);
  if (f.image_capabilities != "ALL" && f.image_capabilities != "none") {
    return InvalidArgument("--image-capabilities must be ALL or none (got " + f.image_capabilities +
                           ")");
  }
  model.registered_all_os_capabilities = f.image_capabilities == "ALL";
  if (f.running_before_hook_ms >= 0) model.running_before_hook = Duration(f.running_before_hook_ms);
  Result<emulate::microvms::RunBody> run_body = emulate::microvms::ParseRunBody(f.run_body);
  if (!run_body.ok()) return run_body.status().Annotate("--run-body");
  model.run_body = *run_body;
  if (f.require_image_arn) model.require_image_arn = true;
  if (f.require_ingress_connector) model.require_ingress_connector = true;
  return Status::Ok();
}

// --network and --netns-range: loopback ports on the host, or a namespace per VM (root only).
Status ApplyNetworkFlags(const MicrovmsFlags& f, MicrovmsOptions& o) {
  if (f.network == "namespace") {
    MVR_RETURN_IF_ERROR(emulate::microvms::CheckNamespaceModeAllowed(geteuid()));
    o.network = MicrovmsOptions::Network::kNamespace;
    if (!f.netns_range.empty()) o.namespace_range = f.netns_range;
    return emulate::microvms::Ipv4Range::Parse(o.namespace_range).status();
  }
  if (f.network != "host") {
    return InvalidArgument("--network must be host (the default) or namespace (got " + f.network +
                           ")");
  }
  if (!f.netns_range.empty()) {
    return InvalidArgument("--netns-range only applies with --network namespace");
  }
  return Status::Ok();
}

// --vm qemu and its --vm-* flags (which only apply with it): where the guest kernel and the
// guest tools come from.
Status ApplyVmFlags(const MicrovmsFlags& f, MicrovmsOptions& o) {
  if (f.vm != "qemu") {
    if (f.vm != "process") {
      return InvalidArgument("--vm must be process (the default) or qemu (got " + f.vm + ")");
    }
    if (!f.vm_kernel.empty() || f.vm_arch != "x86_64" || !f.vm_guest_bundle.empty() ||
        !f.vm_dns_records.empty()) {
      return InvalidArgument(
          "--vm-kernel, --vm-arch, --vm-guest-bundle and --vm-dns-record only apply with --vm "
          "qemu");
    }
    return Status::Ok();
  }
  if (o.network != MicrovmsOptions::Network::kHost) {
    return InvalidArgument("--vm qemu brings its own network: leave out --network namespace");
  }
  o.vm = MicrovmsOptions::Vm::kQemu;
  const bool arm64 = f.vm_arch == "arm64";
  o.qemu.arch = f.vm_arch;
  o.qemu.kernel_dir = !f.vm_kernel.empty()
                          ? f.vm_kernel
                          : (arm64 ? EnvOr("MVR_VM_KERNEL_DIR_ARM64", kDefaultArm64VmKernelDir)
                                   : EnvOr("MVR_VM_KERNEL_DIR", kDefaultVmKernelDir));
  o.qemu.accel = f.accel;
  o.qemu.memory_mib = static_cast<int>(f.vm_memory_mib);
  auto records = emulate::microvms::ParseDnsRecords(f.vm_dns_records);
  if (!records.ok()) return records.status().Annotate("--vm-dns-record");
  o.qemu.dns_records = *records;
  std::error_code ec;
  o.qemu.mvr_binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Internal("cannot find this program's path: " + ec.message());
  // A source checkout's ARM64 guest tools sit beside its build tree (build/src/cli/mvr).
  const std::string beside =
      (std::filesystem::path(o.qemu.mvr_binary).parent_path() / "../../../build-arm64/guest-bundle")
          .lexically_normal()
          .string();
  o.qemu.guest_bundle =
      !f.vm_guest_bundle.empty() ? f.vm_guest_bundle : EnvOr("MVR_VM_GUEST_BUNDLE", beside);
  return Status::Ok();
}

// --image NAME=COMMAND and --image-description NAME=TEXT: the images registered at start.
Status ApplyImageFlags(const MicrovmsFlags& f, MicrovmsOptions& o) {
  for (const std::string& image : f.images) {
    size_t eq = image.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == image.size()) {
      return InvalidArgument("--image must be NAME=COMMAND (got " + image + ")");
    }
    o.images.emplace_back(image.substr(0, eq), image.substr(eq + 1));
  }
  for (const std::string& d : f.image_descriptions) {
    const size_t eq = d.find('=');
    const std::string name = d.substr(0, eq);
    if (eq == std::string::npos ||
        std::none_of(o.images.begin(), o.images.end(),
                     [&](const auto& image) { return image.first == name; })) {
      return InvalidArgument("--image-description must be NAME=TEXT for an --image NAME (got " + d +
                             ")");
    }
    o.image_descriptions[name] = d.substr(eq + 1);
  }
  return Status::Ok();
}

// --verify-sigv4-keys and --iam-policies: who may call, and what each caller may do.
Status ApplyCallerFlags(const MicrovmsFlags& f, MicrovmsOptions& o) {
  if (!f.sigv4_keys_file.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(f.sigv4_keys_file, "--verify-sigv4-keys"));
    MVR_ASSIGN_OR_RETURN(o.sigv4_keys, emulate::microvms::ParseSigv4Keys(text, f.sigv4_keys_file));
  }
  if (!f.iam_policies_file.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(f.iam_policies_file, "--iam-policies"));
    MVR_ASSIGN_OR_RETURN(emulate::microvms::MicrovmsIamPolicies policies,
                         emulate::microvms::MicrovmsIamPolicies::Parse(
                             text, f.iam_policies_file, o.model.region, o.model.account_id));
    o.iam_policies =
        std::make_shared<const emulate::microvms::MicrovmsIamPolicies>(std::move(policies));
  }
  return Status::Ok();
}

Result<MicrovmsOptions> BuildOptions(const MicrovmsFlags& f) {
  MicrovmsOptions o;
  MVR_ASSIGN_OR_RETURN(HostPort listen, ParseHostPort(f.listen, "--listen"));
  o.listen_host = listen.host;
  o.listen_port = listen.port;
  MVR_RETURN_IF_ERROR(ApplyModelFlags(f, o.model));
  MVR_RETURN_IF_ERROR(ApplyNetworkFlags(f, o));
  MVR_RETURN_IF_ERROR(ApplyVmFlags(f, o));
  if (!f.guest_ports.empty()) o.guest_ports = f.guest_ports;
  MVR_RETURN_IF_ERROR(ApplyImageFlags(f, o));
  MVR_RETURN_IF_ERROR(ApplyCallerFlags(f, o));
  return o;
}

int RunMicrovmsEmulator(const MicrovmsFlags& flags, Context& ctx) {
  Result<emulate::microvms::Emulator::Options> options = BuildOptions(flags);
  if (!options.ok()) {
    std::fprintf(stderr, "mvr emulate microvms: %s\n", options.status().message().c_str());
    return 2;
  }
  std::optional<TemporaryDirectory> temp_dir;
  if (flags.state_dir.empty()) {
    auto created = TemporaryDirectory::Create("mvr-microvms");
    if (!created.ok()) {
      std::fprintf(stderr, "mvr emulate microvms: %s; or pass --state-dir\n",
                   created.status().message().c_str());
      return 1;
    }
    temp_dir.emplace(std::move(*created));
    options->state_dir = temp_dir->path();
  } else {
    options->state_dir = flags.state_dir;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log_file(nullptr, &std::fclose);
  std::unique_ptr<StreamSink> log_sink;
  if (!flags.request_log.empty()) {
    log_file.reset(std::fopen(flags.request_log.c_str(), "a"));
    if (!log_file) {
      std::fprintf(stderr, "mvr emulate microvms: cannot open %s\n", flags.request_log.c_str());
      return 2;
    }
    log_sink = std::make_unique<StreamSink>(log_file.get());
    options->request_log = log_sink.get();
  }

  // Every thread inherits the blocked mask (guest programs get a clean mask back before exec).
  StopSignals stop;

  http::CurlHttpClient http;
  Result<std::unique_ptr<ArtifactReader>> artifacts = NewArtifactReader(flags, ctx, http);
  if (!artifacts.ok()) {
    std::fprintf(stderr, "mvr emulate microvms: %s\n", artifacts.status().message().c_str());
    return 2;
  }
  if (*artifacts) {
    options->fetch_s3_artifact = [reader = artifacts->get()](const std::string& uri,
                                                             const std::string& path) {
      return reader->Fetch(uri, path);
    };
  }
  process::PosixProcessRunner processes;
  emulate::microvms::Emulator emulator(
      emulate::microvms::Emulator::Deps{ctx.seam(), http, processes}, *options);
  Result<std::string> url = emulator.Start();
  if (!url.ok()) {
    std::fprintf(stderr, "mvr emulate microvms: %s\n", url.status().message().c_str());
    return 1;
  }
  std::printf("mvr emulate microvms listening on %s\n", url->c_str());
  std::fflush(stdout);
  int received = stop.Wait();
  ctx.logger.Info("signal received; terminating MicroVMs", {{"signal", received}});
  emulator.Shutdown();
  return 0;
}

// The images registered at start, and what their hooks and programs get.
void AddImageOptions(CLI::App& cmd, MicrovmsFlags& f) {
  cmd.add_option(
      "--image", f.images,
      "NAME=COMMAND: pre-register an ACTIVE image running COMMAND (sh -c), all hooks on");
  cmd.add_option("--image-description", f.image_descriptions,
                 "NAME=TEXT: the description of --image NAME's version (as `mvr image build` "
                 "sets it: \"... runner=2.337.0\" names the image's runner version)");
  cmd.add_option("--image-hook-timeout", f.image_hook_timeout,
                 "Seconds the run, resume, suspend and terminate hooks of every --image get "
                 "(default 10; the service allows 1 to 60)")
      ->check(CLI::Range(int64_t{1}, int64_t{60}));
  cmd.add_option("--image-capabilities", f.image_capabilities,
                 "additionalOsCapabilities of every --image: ALL (default, as mvr image build "
                 "makes them) or none (--vm qemu then runs the program with a container's "
                 "capabilities)");
}

// The service model's knobs: quotas, rate limits, time scales, the /run hook's form and the
// stricter readings.
void AddModelOptions(CLI::App& cmd, MicrovmsFlags& f) {
  cmd.add_option("--config", f.config_file,
                 "JSON knobs: latency, failure probabilities, quotas, rate limits");
  cmd.add_option("--memory-quota-mib", f.memory_quota_mib,
                 "Memory of live VMs beyond which RunMicrovm answers 402 (0: none)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  cmd.add_option("--run-rate", f.run_rate,
                 "RunMicrovm requests per second (default 5; 0: no limit)")
      ->check(CLI::Range(0.0, 1e6));
  cmd.add_option("--run-burst", f.run_burst, "RunMicrovm burst (default 5)")
      ->check(CLI::Range(0.0, 1e6));
  cmd.add_option("--idle-time-scale", f.idle_time_scale,
                 "Run idle policy timers F times faster than requested (tests, demos; default 1)")
      ->check(
          CLI::Range(emulate::microvms::kMinIdleTimeScale, emulate::microvms::kMaxIdleTimeScale));
  cmd.add_option("--duration-time-scale", f.duration_time_scale,
                 "Run maximumDurationInSeconds F times faster than requested (tests; default 1)")
      ->check(
          CLI::Range(emulate::microvms::kMinIdleTimeScale, emulate::microvms::kMaxIdleTimeScale));
  cmd.add_option("--program-exit", f.program_exit,
                 "A VM whose program exits: terminate (default) or keep (it runs on until "
                 "terminated or its maximum duration; AWS documents neither)")
      ->check(CLI::IsMember({"terminate", "keep"}));
  cmd.add_option("--running-before-hook-ms", f.running_before_hook_ms,
                 "Report a booting or resuming VM RUNNING this many ms before its /run or "
                 "/resume hook (the eventual-consistency race; default 0)")
      ->check(CLI::Range(int64_t{0}, emulate::microvms::kMaxLatencyMs));
  cmd.add_option("--run-body", f.run_body,
                 "Body of the /run hook: raw (the runHookPayload itself; default), envelope "
                 "({\"runHookPayload\"}) or envelope-with-id (also \"microvmId\")");
  cmd.add_flag("--require-image-arn", f.require_image_arn,
               "Refuse a bare image name in RunMicrovm and ListMicrovms (the stricter reading)");
  cmd.add_flag("--require-ingress-connector", f.require_ingress_connector,
               "Let no traffic into a VM launched without an ingress network connector");
}

// What a VM is (host processes or a QEMU machine) and the network it gets.
void AddVmOptions(CLI::App& cmd, MicrovmsFlags& f) {
  cmd.add_option("--network", f.network,
                 "host (default): guests share the host network on loopback ports; namespace "
                 "(root only): each VM gets its own network namespace and the real ports");
  cmd.add_option("--vm", f.vm,
                 "process (default): each VM is a tree of host processes; qemu: a QEMU virtual "
                 "machine restored from its image's snapshot (docs/emulate-microvms.md)");
  cmd.add_option("--vm-kernel", f.vm_kernel,
                 "With --vm qemu: directory of the guest kernel (vmlinuz, modules/) "
                 "(default $MVR_VM_KERNEL_DIR, else /var/cache/mvr/vm-kernel)");
  cmd.add_option("--vm-arch", f.vm_arch,
                 "With --vm qemu: x86_64 (default) or arm64 (Graviton's machine, under software "
                 "emulation; its kernel default $MVR_VM_KERNEL_DIR_ARM64, else "
                 "/var/cache/mvr/vm-kernel-arm64: scripts/fetch-vm-kernel.sh --arch arm64)")
      ->check(CLI::IsMember({"x86_64", "arm64"}));
  cmd.add_option("--vm-guest-bundle", f.vm_guest_bundle,
                 "With --vm-arch arm64: the ARM64 guest tools (scripts/build-supervisor-arm64.sh; "
                 "default $MVR_VM_GUEST_BUNDLE, else build-arm64/guest-bundle beside this "
                 "program's build tree)");
  cmd.add_option("--accel", f.accel,
                 "With --vm qemu: auto (default: KVM if a test boot works, else TCG), kvm or tcg");
  cmd.add_option("--vm-memory-mib", f.vm_memory_mib,
                 "With --vm qemu: memory of each guest (default 512)")
      ->check(CLI::Range(int64_t{128}, int64_t{16384}));
  cmd.add_option("--vm-dns-record", f.vm_dns_records,
                 "With --vm qemu: NAME=IPV4, a name the guests' VPC resolver (169.254.169.253) "
                 "answers; no other name resolves in a guest");
  cmd.add_option("--netns-range", f.netns_range,
                 "IPv4 range the per-VM /30s come from in namespace mode (default 10.213.0.0/16)");
}

// Who may call and what they may do, and where s3:// code artifacts come from.
void AddCallerOptions(CLI::App& cmd, MicrovmsFlags& f) {
  cmd.add_option("--verify-sigv4-keys", f.sigv4_keys_file,
                 "File of 'ACCESS_KEY_ID SECRET' lines: require valid SigV4 signatures");
  cmd.add_option("--iam-policies", f.iam_policies_file,
                 "JSON file, access key id -> IAM policy documents: refuse with "
                 "AccessDeniedException what the caller's policies do not allow");
  cmd.add_option("--s3-endpoint-url", f.s3_endpoint_url,
                 "S3 endpoint for s3:// code artifacts (default: AWS_ENDPOINT_URL_S3, "
                 "AWS_ENDPOINT_URL, then AWS)");
}

}  // namespace

void AddEmulateMicrovmsCommand(CLI::App& emulate, Context& ctx) {
  auto flags = std::make_shared<MicrovmsFlags>();
  CLI::App* cmd = emulate.add_subcommand(
      "microvms", "Local Lambda MicroVMs service: VMs are local process groups");
  cmd->add_option("--listen", flags->listen, "HOST:PORT to serve the API on (port 0: any free)");
  cmd->add_option("--region", flags->region, "Region the emulator reports");
  cmd->add_option("--state-dir", flags->state_dir,
                  "Directory for VM disks, artifacts and guest logs (default: a temporary one)");
  cmd->add_option("--guest-port", flags->guest_ports,
                  "Guest port served through ingress, passed as MVR_PORT_<port> (default 8080)");
  cmd->add_option("--request-log", flags->request_log,
                  "Append one JSON line per API and ingress request (no secrets)");
  AddImageOptions(*cmd, *flags);
  AddModelOptions(*cmd, *flags);
  AddVmOptions(*cmd, *flags);
  AddCallerOptions(*cmd, *flags);
  cmd->callback([flags, &ctx] { ctx.exit_code = RunMicrovmsEmulator(*flags, ctx); });
}

}  // namespace mvr::cli

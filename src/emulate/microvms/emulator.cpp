#include "emulate/microvms/emulator.h"

#include <filesystem>

#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr::emulate::microvms {

Emulator::Emulator(Deps deps, Options options) : deps_(deps), options_(std::move(options)) {}

Emulator::~Emulator() { Shutdown(); }

Result<std::string> Emulator::Start() {
  if (options_.state_dir.empty()) return InvalidArgument("the emulator needs a state directory");
  std::error_code ec;
  // Guests get paths inside it and run elsewhere: it must not be relative.
  options_.state_dir = std::filesystem::absolute(options_.state_dir, ec).string();
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec) {
    return InvalidArgument("cannot create state directory " + options_.state_dir + ": " +
                           ec.message());
  }
  http::HttpServer::Options server_options;
  server_options.max_body_bytes = 8 << 20;
  api_ = std::make_unique<http::HttpServer>(
      [this](const http::ServerRequest& r) { return HandleApi(r); }, server_options);
  MVR_ASSIGN_OR_RETURN(int port, api_->Start(options_.listen_host, options_.listen_port));
  url_ = "http://" + options_.listen_host + ":" + std::to_string(port);

  VmHost::Options host_options;
  host_options.state_dir = options_.state_dir;
  host_options.api_url = url_;
  host_options.region = options_.model.region;
  host_options.guest_ports = options_.guest_ports;
  host_options.stop_grace = options_.stop_grace;
  host_options.fetch_s3 = options_.fetch_s3_artifact;
  if (options_.network == Options::Network::kNamespace) {
    NetworkNamespaces::Options netns_options;
    netns_options.range = options_.namespace_range;
    netns_options.scratch_dir = options_.state_dir + "/netns";
    Result<std::unique_ptr<NetworkNamespaces>> namespaces = NetworkNamespaces::Create(
        NetworkNamespaces::Deps{deps_.seam, deps_.processes}, netns_options);
    if (!namespaces.ok()) {
      api_->Stop();
      return namespaces.status();
    }
    namespaces_ = std::move(namespaces).value();
    host_options.open_guest_api = [this](const std::string& target, const std::string& address) {
      return OpenGuestApi(target, address);
    };
    host_options.close_guest_api = [this](const std::string& target) { CloseGuestApi(target); };
  }
  process_host_ = std::make_unique<VmHost>(
      VmHost::Deps{deps_.seam, deps_.http, deps_.processes, namespaces_.get()}, host_options);
  host_ = process_host_.get();
  if (options_.vm == Options::Vm::kQemu) {
    QemuHost::Options qemu = options_.qemu;
    qemu.state_dir = options_.state_dir;
    qemu.api_url = url_;
    qemu.region = options_.model.region;
    qemu.guest_ports = options_.guest_ports;
    qemu.stop_grace = options_.stop_grace;
    Result<std::unique_ptr<QemuHost>> made = QemuHost::Create(
        QemuHost::Deps{deps_.seam, deps_.http, deps_.processes, *process_host_}, qemu);
    if (!made.ok()) {
      api_->Stop();
      return made.status();
    }
    qemu_host_ = std::move(made).value();
    host_ = qemu_host_.get();
  }

  MicrovmModelOptions model_options = options_.model;
  model_options.endpoint_for = [this](const std::string& id) { return OpenIngress(id); };
  model_ = std::make_unique<MicrovmModel>(deps_.seam, model_options);
  for (const auto& [name, command] : options_.images) {
    ProgramSpec program;
    program.argv = {"/bin/sh", "-c", command};
    auto described = options_.image_descriptions.find(name);
    Status s = model_->RegisterImage(
        name, program, described == options_.image_descriptions.end() ? "" : described->second);
    if (!s.ok()) {
      api_->Stop();
      return s;
    }
  }
  ticker_ = std::thread([this] { TickLoop(); });
  deps_.seam.logger.Info("microvms emulator started",
                         {{"url", url_}, {"state_dir", options_.state_dir}});
  return url_;
}

void Emulator::Dispatch(std::vector<Effect> effects) {
  for (Effect& effect : effects) {
    {
      std::lock_guard<std::mutex> lock(workers_mu_);
      ++active_workers_;
    }
    std::thread([this, effect = std::move(effect)]() mutable {
      EffectOutcome outcome = host_->Execute(effect);
      if (!outcome.ok) {
        deps_.seam.logger.Warn("effect failed", {{"target", effect.target},
                                                 {"effect", EffectKindName(effect.kind)},
                                                 {"hook", HookName(effect.hook)},
                                                 {"reason", outcome.reason}});
      }
      std::vector<Effect> next;
      {
        std::lock_guard<std::mutex> lock(mu_);
        model_->Complete(effect.id, outcome);
        next = model_->TakeDueEffects();
      }
      Dispatch(std::move(next));
      std::lock_guard<std::mutex> lock(workers_mu_);
      --active_workers_;
      workers_cv_.notify_all();
    }).detach();
  }
}

void Emulator::TickLoop() {
  while (!stopping_.load()) {
    deps_.seam.sleeper.Sleep(options_.tick_interval);
    // waitpid happens before the model lock is taken.
    auto exits = host_->ReapUnexpectedExits();
    std::vector<Effect> due;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [target, how] : exits) model_->ProgramExited(target, how);
      model_->Tick();
      due = model_->TakeDueEffects();
    }
    Dispatch(std::move(due));
    CloseFinishedIngress();
  }
}

void Emulator::Shutdown() {
  if (shut_down_ || !api_) return;
  shut_down_ = true;
  if (model_ && ticker_.joinable()) {
    std::vector<Effect> due;
    {
      std::lock_guard<std::mutex> lock(mu_);
      model_->TerminateAll("the emulator is shutting down");
      due = model_->TakeDueEffects();
    }
    Dispatch(std::move(due));
    const TimePoint deadline = deps_.seam.clock.Now() + options_.shutdown_timeout;
    while (deps_.seam.clock.Now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (model_->Settled()) break;
      }
      deps_.seam.sleeper.Sleep(Duration(50));
    }
  }
  stopping_.store(true);
  if (ticker_.joinable()) ticker_.join();
  {
    std::unique_lock<std::mutex> lock(workers_mu_);
    workers_cv_.wait(lock, [this] { return active_workers_ == 0; });
  }
  // Anything a timed-out shutdown left behind: processes, directories, namespaces.
  if (host_) host_->StopLeftovers();  // null when Start failed before making it
  std::map<std::string, std::unique_ptr<http::HttpServer>> servers;
  {
    std::lock_guard<std::mutex> lock(ingress_mu_);
    servers.swap(ingress_);
  }
  {
    std::lock_guard<std::mutex> lock(guest_api_mu_);
    for (auto& [target, server] : guest_api_) servers["api:" + target] = std::move(server);
    guest_api_.clear();
  }
  // Each stop waits for its idle keep-alive connections; do them side by side.
  std::vector<std::thread> stoppers;
  stoppers.emplace_back([this] { api_->Stop(); });
  for (auto& [id, server] : servers) {
    stoppers.emplace_back([s = server.get()] { s->Stop(); });
  }
  for (std::thread& t : stoppers) t.join();
  deps_.seam.logger.Info("microvms emulator stopped", {{"url", url_}});
}

Result<std::string> Emulator::OpenGuestApi(const std::string& target,
                                           const std::string& host_address) {
  const std::string port = url_.substr(url_.rfind(':') + 1);
  if (options_.listen_host == "0.0.0.0" || options_.listen_host == "::") {
    // The main listener already answers on every address, the veth's included.
    return "http://" + host_address + ":" + port;
  }
  http::HttpServer::Options server_options;
  server_options.max_body_bytes = 8 << 20;
  server_options.threads = 2;
  auto server = std::make_unique<http::HttpServer>(
      [this](const http::ServerRequest& r) { return HandleApi(r); }, server_options);
  MVR_ASSIGN_OR_RETURN(int bound, server->Start(host_address, 0));
  std::lock_guard<std::mutex> lock(guest_api_mu_);
  guest_api_[target] = std::move(server);
  return "http://" + host_address + ":" + std::to_string(bound);
}

void Emulator::CloseGuestApi(const std::string& target) {
  std::unique_ptr<http::HttpServer> server;
  {
    std::lock_guard<std::mutex> lock(guest_api_mu_);
    auto it = guest_api_.find(target);
    if (it == guest_api_.end()) return;
    server = std::move(it->second);
    guest_api_.erase(it);
  }
  server->Stop();
}

void Emulator::LogRequest(nlohmann::json line) const {
  if (options_.request_log == nullptr) return;
  line["ts"] = FormatRfc3339Millis(deps_.seam.clock.Now());
  // A request path need not be UTF-8; the log line must still be written (and not throw).
  options_.request_log->Write(JsonText(line));
}

}  // namespace mvr::emulate::microvms

// The ingress proxy: one loopback listener per MicroVM (its `endpoint`). A request must carry
// X-aws-proxy-auth with a token the model accepts for this VM and the X-aws-proxy-port it names
// (default 8080); x-aws-proxy-* headers are stripped and the request goes to the loopback port
// where the guest serves that port (in namespace mode, to that port on the guest's own address).
// Each exchange counts as traffic for the idle policy, and a suspended VM with auto-resume is
// woken first.
#include <algorithm>
#include <cctype>

#include "base/numbers.h"
#include "emulate/microvms/emulator.h"
#include "emulate/microvms/front/ingress_rules.h"
#include "emulate/microvms/ingress_proxy.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

// Printable ASCII a URL can carry as is in a path or query (no space, '#' or '\').
bool IsPlainUrlText(const std::string& text) {
  for (unsigned char c : text) {
    if (c <= 0x20 || c >= 0x7f || c == '#' || c == '\\') return false;
  }
  return true;
}

// "a.b.c.d": four decimal numbers 0-255.
bool IsIpv4(std::string_view text) {
  int parts = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t dot = text.find('.', start);
    if (dot == std::string_view::npos) dot = text.size();
    if (dot - start > 3 || !ParseInt64InRange(text.substr(start, dot - start), 0, 255)) {
      return false;
    }
    ++parts;
    start = dot + 1;
    if (dot == text.size()) break;
  }
  return parts == 4;
}

constexpr Duration kResumeWait{90'000};
constexpr Duration kForwardTimeout{120'000};

bool IsHopByHop(std::string_view name) {
  for (const char* h : {"Host", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding",
                        "Upgrade", "Proxy-Connection", "TE", "Trailer"}) {
    if (http::HeaderNameEquals(name, h)) return true;
  }
  return false;
}

// The request as the guest gets it: the proxy's own headers and hop-by-hop headers dropped.
http::HttpRequest ForwardRequest(const http::ServerRequest& request, std::string url) {
  http::HttpRequest forward;
  forward.method = request.method;
  forward.url = std::move(url);
  for (const auto& [name, value] : request.headers) {
    if (IsProxyHeader(name) || IsHopByHop(name) ||
        http::HeaderNameEquals(name, "Accept-Encoding")) {
      continue;
    }
    forward.headers.Add(name, value);
  }
  forward.body = request.body;
  forward.timeout = kForwardTimeout;
  return forward;
}

// The guest's answer as the client gets it.
http::HttpResponse ForwardAnswer(http::HttpResponse answer) {
  http::HttpResponse out;
  out.status = answer.status;
  out.body = std::move(answer.body);
  for (const auto& [name, value] : answer.headers) {
    // The client library already decoded the body, so its encoding no longer applies.
    if (!IsHopByHop(name) && !http::HeaderNameEquals(name, "Content-Encoding")) {
      out.headers.Add(name, value);
    }
  }
  return out;
}

}  // namespace

Status CheckRequestTarget(const std::string& raw_path, const std::string& query) {
  if (raw_path.empty() || raw_path[0] != '/') {
    return InvalidArgument("the request target must be a path starting with '/'");
  }
  if (!IsPlainUrlText(raw_path) || !IsPlainUrlText(query)) {
    return InvalidArgument(
        "the request target holds a byte a URL cannot carry unencoded (space, control, '#', "
        "'\\' or non-ASCII); percent-encode it");
  }
  return Status::Ok();
}

Result<std::string> ForwardUrl(const std::string& guest_authority, const std::string& raw_path,
                               const std::string& query) {
  MVR_RETURN_IF_ERROR(CheckRequestTarget(raw_path, query));
  const size_t colon = guest_authority.rfind(':');
  if (colon == std::string::npos) return Internal("guest address has no port");
  const std::string_view address(guest_authority.data(), colon);
  const std::string_view port_text(guest_authority.data() + colon + 1,
                                   guest_authority.size() - colon - 1);
  const std::optional<int64_t> port = ParseInt64InRange(port_text, 1, 65535);
  if (!IsIpv4(address) || !port) {
    return Internal("guest address '" + guest_authority + "' is not IPv4:port");
  }
  return "http://" + std::string(address) + ":" + std::to_string(*port) + raw_path +
         (query.empty() ? "" : "?" + query);
}

std::string Emulator::OpenIngress(const std::string& microvm_id) {
  http::HttpServer::Options o;
  o.threads = 4;
  o.max_body_bytes = 16 << 20;
  auto server = std::make_unique<http::HttpServer>(
      [this, microvm_id](const http::ServerRequest& r) { return HandleIngress(microvm_id, r); }, o);
  Result<int> port = server->Start(options_.listen_host, 0);
  if (!port.ok()) {
    deps_.seam.logger.Error("cannot open the ingress listener",
                            {{"microvm_id", microvm_id}, {"error", port.status().message()}});
    return "http://" + options_.listen_host + ":1/";
  }
  std::lock_guard<std::mutex> lock(ingress_mu_);
  ingress_[microvm_id] = std::move(server);
  return "http://" + options_.listen_host + ":" + std::to_string(*port) + "/";
}

void Emulator::CloseFinishedIngress() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(ingress_mu_);
    for (const auto& [id, server] : ingress_) ids.push_back(id);
  }
  std::vector<std::string> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& id : ids) {
      auto state = model_->StateOf(id);
      if (!state || *state == MicrovmState::kTerminated) finished.push_back(id);
    }
  }
  std::vector<std::unique_ptr<http::HttpServer>> closing;
  {
    std::lock_guard<std::mutex> lock(ingress_mu_);
    for (const std::string& id : finished) {
      auto it = ingress_.find(id);
      if (it == ingress_.end()) continue;
      closing.push_back(std::move(it->second));
      ingress_.erase(it);
    }
  }
  // Stopping waits for idle keep-alive connections; the ticker must not wait with it.
  for (auto& server : closing) {
    {
      std::lock_guard<std::mutex> lock(workers_mu_);
      ++active_workers_;
    }
    std::thread([this, server = std::shared_ptr<http::HttpServer>(std::move(server))] {
      server->Stop();
      std::lock_guard<std::mutex> lock(workers_mu_);
      --active_workers_;
      workers_cv_.notify_all();
    }).detach();
  }
}

bool Emulator::WaitForResume(const std::string& microvm_id) {
  const TimePoint deadline = deps_.seam.clock.Now() + kResumeWait;
  while (true) {
    std::optional<MicrovmState> state;
    {
      std::lock_guard<std::mutex> lock(mu_);
      state = model_->StateOf(microvm_id);
    }
    if (state == MicrovmState::kRunning) return true;
    if (!state || *state == MicrovmState::kTerminating || *state == MicrovmState::kTerminated ||
        deps_.seam.clock.Now() >= deadline) {
      return false;
    }
    deps_.seam.sleeper.Sleep(Duration(20));
  }
}

// Checks the target and the port, asks the model for a grant (the token, the VM's state; a
// suspended VM with auto-resume is resumed and waited for), and forwards to the guest.
http::HttpResponse Emulator::HandleIngress(const std::string& microvm_id,
                                           const http::ServerRequest& request) {
  json log_line = {{"kind", "ingress"},
                   {"microvmId", microvm_id},
                   {"method", request.method},
                   {"path", request.path}};
  auto finish = [&](http::HttpResponse response) {
    log_line["status"] = response.status;
    LogRequest(log_line);
    return response;
  };
  // Before the token is even looked at: only an origin-form target can be forwarded.
  if (Status target = CheckRequestTarget(request.raw_path, request.query); !target.ok()) {
    return finish(ProxyError(400, target.message()));
  }
  const std::optional<int> port = ProxyPort(request.headers);
  if (!port) {
    return finish(ProxyError(400, "X-aws-proxy-port must be a port number from 1 to 65535"));
  }
  log_line["port"] = *port;
  std::optional<Secret> token;
  if (auto value = request.headers.Get("X-aws-proxy-auth")) token.emplace(*value);

  Result<MicrovmModel::IngressGrant> grant = MicrovmModel::IngressGrant();
  std::vector<Effect> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    grant = model_->AuthorizeIngress(microvm_id, token ? &*token : nullptr, *port);
    due = model_->TakeDueEffects();
  }
  Dispatch(std::move(due));
  if (!grant.ok()) return finish(RefusedGrant(grant.status()));
  if (grant->wait_for_resume && !WaitForResume(microvm_id)) {
    return finish(ProxyError(503, "the MicroVM did not resume"));
  }
  std::optional<std::string> authority = host_->GuestAuthority(microvm_id, *port);
  if (!authority) {
    return finish(ProxyError(502, "port " + std::to_string(*port) +
                                      " is not served by this MicroVM (give the emulator "
                                      "--guest-port " +
                                      std::to_string(*port) + ")"));
  }
  Result<std::string> url = ForwardUrl(*authority, request.raw_path, request.query);
  if (!url.ok()) return finish(ProxyError(502, url.status().message()));
  Result<http::HttpResponse> answer = deps_.http.Send(ForwardRequest(request, *std::move(url)));
  {
    std::lock_guard<std::mutex> lock(mu_);
    model_->RecordTraffic(microvm_id);
  }
  if (!answer.ok()) {
    return finish(ProxyError(502, "the MicroVM did not answer on port " + std::to_string(*port) +
                                      ": " + answer.status().message()));
  }
  // The injected fault ingressAnswerDelayMs: the guest has acted; its answer waits.
  if (const Duration hold = options_.model.IngressAnswerDelay(request.path); hold > Duration(0)) {
    log_line["heldMs"] = hold.count();
    deps_.seam.sleeper.Sleep(hold);
  }
  return finish(ForwardAnswer(*std::move(answer)));
}

}  // namespace mvr::emulate::microvms

// Auth tokens and ingress decisions of the model. A token is an opaque random string from the
// secure source; the model keeps only its SHA-256, with the VM, the allowed ports and the expiry.
#include "base/encoding.h"
#include "emulate/microvms/model/microvm_model.h"
#include "emulate/microvms/model/request_checks.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

namespace {

constexpr const char* kProxyAuthHeader = "X-aws-proxy-auth";

Result<std::vector<std::pair<int, int>>> ReadPorts(const json& in) {
  if (!in.contains("allowedPorts")) return Invalid("allowedPorts is required");
  const json& list = in["allowedPorts"];
  if (!list.is_array() || list.empty()) {
    return Invalid("allowedPorts must be a list with at least one port specification");
  }
  std::vector<std::pair<int, int>> ranges;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "allowedPorts[" + std::to_string(i) + "]";
    const json& spec = list[i];
    if (!spec.is_object() || spec.size() != 1) {
      return Invalid(where + " must set exactly one of port, range or allPorts");
    }
    auto valid = [](const json& p) {
      return p.is_number_integer() && p.get<int64_t>() >= 1 && p.get<int64_t>() <= 65535;
    };
    if (spec.contains("port")) {
      if (!valid(spec["port"])) return Invalid(where + ".port must be from 1 to 65535");
      ranges.emplace_back(spec["port"].get<int>(), spec["port"].get<int>());
    } else if (spec.contains("range")) {
      const json& r = spec["range"];
      if (!r.is_object() || !r.contains("startPort") || !r.contains("endPort") ||
          !valid(r["startPort"]) || !valid(r["endPort"])) {
        return Invalid(where + ".range needs startPort and endPort from 1 to 65535");
      }
      if (r["startPort"].get<int>() > r["endPort"].get<int>()) {
        return Invalid(where + ".range.startPort must not be above endPort");
      }
      ranges.emplace_back(r["startPort"].get<int>(), r["endPort"].get<int>());
    } else if (spec.contains("allPorts")) {
      if (!spec["allPorts"].is_object()) return Invalid(where + ".allPorts must be {}");
      ranges.emplace_back(1, 65535);
    } else {
      return Invalid(where + " must set exactly one of port, range or allPorts");
    }
  }
  return ranges;
}

}  // namespace

Result<json> MicrovmModel::CreateAuthToken(const json& in, bool shell) {
  MVR_ASSIGN_OR_RETURN(Vm * vm, FindVm(in));
  MVR_RETURN_IF_ERROR(RequiredInt(in, "expirationInMinutes", 1, 60).status());
  const int64_t minutes = in["expirationInMinutes"].get<int64_t>();
  std::vector<std::pair<int, int>> ports;
  if (!shell) {
    MVR_ASSIGN_OR_RETURN(ports, ReadPorts(in));
  }
  if (vm->state == MicrovmState::kTerminating || vm->state == MicrovmState::kTerminated) {
    return Conflict("MicroVM " + vm->id + " is " + MicrovmStateName(vm->state) +
                    "; tokens are only issued for live MicroVMs")
        .WithErrorType("ConflictException");
  }
  Secret token("mvmtok_" + seam_.secure_random.Hex(32));
  // Shell tokens are issued for API compatibility; the emulator serves no shell.
  if (!shell) {
    grants_[Sha256Hex(token.Reveal())] =
        Grant{vm->id, std::move(ports), Now() + std::chrono::minutes(minutes)};
  }
  return json{{"authToken", {{kProxyAuthHeader, token.Reveal()}}}};
}

Result<MicrovmModel::IngressGrant> MicrovmModel::AuthorizeIngress(const std::string& microvm_id,
                                                                  const Secret* token, int port) {
  auto it = vms_.find(microvm_id);
  if (it == vms_.end()) return NotFound("MicroVM " + microvm_id + " not found");
  Vm& vm = it->second;
  if (options_.require_ingress_connector && !vm.ingress) {
    return Unauthorized("MicroVM " + microvm_id +
                        " was launched without an ingress network connector, so its endpoint "
                        "takes no traffic; launch it with ingressNetworkConnectors (AWS's "
                        "ALL_INGRESS) (the emulator's requireIngressConnector)");
  }
  if (token == nullptr || token->empty()) {
    return Unauthorized(
        "the X-aws-proxy-auth header is missing; create a token with "
        "CreateMicrovmAuthToken");
  }
  auto grant = grants_.find(Sha256Hex(token->Reveal()));
  if (grant == grants_.end()) return Unauthorized("the auth token is not valid");
  if (Now() >= grant->second.expires_at) return Unauthorized("the auth token has expired");
  if (grant->second.microvm_id != microvm_id) {
    return Unauthorized("the auth token was issued for another MicroVM");
  }
  bool allowed = false;
  for (const auto& [low, high] : grant->second.ports) allowed |= port >= low && port <= high;
  if (!allowed) {
    return Unauthorized("the auth token does not allow port " + std::to_string(port));
  }
  IngressGrant out;
  switch (vm.state) {
    case MicrovmState::kRunning:
      vm.last_traffic = Now();
      return out;
    case MicrovmState::kSuspended:
    case MicrovmState::kSuspending:
      if (!vm.auto_resume) break;
      vm.last_traffic = Now();
      if (vm.state == MicrovmState::kSuspending) {
        vm.resume_after_suspend = true;
      } else if (!vm.seq.active) {
        BeginResume(vm);
      }
      out.wait_for_resume = true;
      return out;
    default:
      break;
  }
  return Transient("MicroVM " + microvm_id + " is " + MicrovmStateName(vm.state) +
                   " and cannot serve requests");
}

void MicrovmModel::RecordTraffic(const std::string& microvm_id) {
  auto it = vms_.find(microvm_id);
  if (it != vms_.end() && it->second.state == MicrovmState::kRunning)
    it->second.last_traffic = Now();
}

std::optional<MicrovmState> MicrovmModel::StateOf(const std::string& microvm_id) const {
  auto it = vms_.find(microvm_id);
  if (it == vms_.end()) return std::nullopt;
  return it->second.state;
}

}  // namespace mvr::emulate::microvms

// Enum names as the model spells them, small constructors, and the paging helpers.
#include "aws/microvms/microvms.h"

#include <array>
#include <set>
#include <utility>

#include "http/types.h"

namespace mvr::aws {
namespace {

template <typename Enum, size_t N>
const char* NameOf(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "UNKNOWN";
}

template <typename Enum, size_t N>
Enum Lookup(const std::array<std::pair<Enum, const char*>, N>& table, std::string_view name,
            Enum unknown) {
  for (const auto& [e, text] : table) {
    if (name == text) return e;
  }
  return unknown;
}

constexpr std::array<std::pair<MicrovmState, const char*>, 6> kMicrovmStates = {{
    {MicrovmState::kPending, "PENDING"},
    {MicrovmState::kRunning, "RUNNING"},
    {MicrovmState::kSuspending, "SUSPENDING"},
    {MicrovmState::kSuspended, "SUSPENDED"},
    {MicrovmState::kTerminating, "TERMINATING"},
    {MicrovmState::kTerminated, "TERMINATED"},
}};

constexpr std::array<std::pair<MicrovmImageState, const char*>, 9> kImageStates = {{
    {MicrovmImageState::kCreating, "CREATING"},
    {MicrovmImageState::kCreated, "CREATED"},
    {MicrovmImageState::kCreateFailed, "CREATE_FAILED"},
    {MicrovmImageState::kUpdating, "UPDATING"},
    {MicrovmImageState::kUpdated, "UPDATED"},
    {MicrovmImageState::kUpdateFailed, "UPDATE_FAILED"},
    {MicrovmImageState::kDeleting, "DELETING"},
    {MicrovmImageState::kDeleteFailed, "DELETE_FAILED"},
    {MicrovmImageState::kDeleted, "DELETED"},
}};

constexpr std::array<std::pair<ImageVersionState, const char*>, 7> kVersionStates = {{
    {ImageVersionState::kPending, "PENDING"},
    {ImageVersionState::kInProgress, "IN_PROGRESS"},
    {ImageVersionState::kSuccessful, "SUCCESSFUL"},
    {ImageVersionState::kFailed, "FAILED"},
    {ImageVersionState::kDeleting, "DELETING"},
    {ImageVersionState::kDeleted, "DELETED"},
    {ImageVersionState::kDeleteFailed, "DELETE_FAILED"},
}};

constexpr std::array<std::pair<ImageVersionStatus, const char*>, 2> kVersionStatuses = {{
    {ImageVersionStatus::kActive, "ACTIVE"},
    {ImageVersionStatus::kInactive, "INACTIVE"},
}};

constexpr std::array<std::pair<BuildState, const char*>, 4> kBuildStates = {{
    {BuildState::kPending, "PENDING"},
    {BuildState::kInProgress, "IN_PROGRESS"},
    {BuildState::kSuccessful, "SUCCESSFUL"},
    {BuildState::kFailed, "FAILED"},
}};

// Walks pages with `fetch(next_token)` and appends each page's items to `out`.
template <typename Item, typename Fetch>
Status WalkPages(Fetch fetch, std::string token, int max_pages, std::vector<Item>& out) {
  std::set<std::string> seen;
  for (int page = 0; page < max_pages; ++page) {
    auto result = fetch(token);
    if (!result.ok()) return result.status();
    for (auto& item : result->items) out.push_back(std::move(item));
    if (result->next_token.empty()) return Status::Ok();
    if (!seen.insert(result->next_token).second) {
      return Internal("the service returned the same nextToken twice; stopped paging");
    }
    token = std::move(result->next_token);
  }
  return Internal("more than " + std::to_string(max_pages) + " pages; stopped paging");
}

}  // namespace

const char* MicrovmStateName(MicrovmState s) { return NameOf(kMicrovmStates, s); }
MicrovmState ParseMicrovmState(std::string_view n) {
  return Lookup(kMicrovmStates, n, MicrovmState::kUnknown);
}
const char* MicrovmImageStateName(MicrovmImageState s) { return NameOf(kImageStates, s); }
MicrovmImageState ParseMicrovmImageState(std::string_view n) {
  return Lookup(kImageStates, n, MicrovmImageState::kUnknown);
}
const char* ImageVersionStateName(ImageVersionState s) { return NameOf(kVersionStates, s); }
ImageVersionState ParseImageVersionState(std::string_view n) {
  return Lookup(kVersionStates, n, ImageVersionState::kUnknown);
}
const char* ImageVersionStatusName(ImageVersionStatus s) { return NameOf(kVersionStatuses, s); }
ImageVersionStatus ParseImageVersionStatus(std::string_view n) {
  return Lookup(kVersionStatuses, n, ImageVersionStatus::kUnknown);
}
const char* BuildStateName(BuildState s) { return NameOf(kBuildStates, s); }
BuildState ParseBuildState(std::string_view n) {
  return Lookup(kBuildStates, n, BuildState::kUnknown);
}

PortSpecification PortSpecification::Port(int p) {
  PortSpecification spec;
  spec.port = p;
  return spec;
}

PortSpecification PortSpecification::Range(int start, int end) {
  PortSpecification spec;
  spec.start_port = start;
  spec.end_port = end;
  return spec;
}

PortSpecification PortSpecification::AllPorts() {
  PortSpecification spec;
  spec.all_ports = true;
  return spec;
}

Secret MicrovmAuthToken::ProxyAuth() const {
  for (const auto& [name, value] : auth_token) {
    if (http::HeaderNameEquals(name, "X-aws-proxy-auth")) return value;
  }
  return Secret();
}

Result<std::vector<MicrovmSummary>> ListAllMicrovms(MicrovmService& service,
                                                    ListMicrovmsRequest request, int max_pages) {
  std::vector<MicrovmSummary> all;
  std::string first = request.next_token;
  MVR_RETURN_IF_ERROR(WalkPages<MicrovmSummary>(
      [&](const std::string& token) {
        request.next_token = token;
        return service.ListMicrovms(request);
      },
      first, max_pages, all));
  return all;
}

Result<std::vector<MicrovmImageVersion>> ListAllMicrovmImageVersions(
    MicrovmService& service, ListMicrovmImageVersionsRequest request, int max_pages) {
  std::vector<MicrovmImageVersion> all;
  std::string first = request.next_token;
  MVR_RETURN_IF_ERROR(WalkPages<MicrovmImageVersion>(
      [&](const std::string& token) {
        request.next_token = token;
        return service.ListMicrovmImageVersions(request);
      },
      first, max_pages, all));
  return all;
}

}  // namespace mvr::aws

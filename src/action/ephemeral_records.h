// Ephemeral records: what `mvr start` writes beside each ephemeral MicroVM it launches when the
// step has a `state-table`, so that `mvr sweep` can later end the VMs whose stop step never ran.
// A MicroVM cannot be tagged and ListMicrovms shows only image, version, state and times, so this
// record is the only thing that tells the Action's ephemeral VM apart from a warm server or a
// runner set's VM of the same image. No secret is stored: VM id, repository, runner id and name,
// region, launch time and the VM's platform deadline.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "store/value.h"

namespace mvr::action {

// REPOSITORY#<repository id>#EPHEMERAL: one partition per repository, apart from its pools'.
std::string EphemeralPartition(const std::string& repository_id);
inline constexpr char kEphemeralSortPrefix[] = "MICROVM#";

struct EphemeralRecord {
  std::string repository_id;
  std::string microvm_id;
  std::string repository;  // owner/name
  std::string region;
  int64_t runner_id = 0;
  std::string runner_name;
  TimePoint launched_at;
  TimePoint deadline;  // launched_at + maximumDurationInSeconds: the platform ends it then
  TimePoint ttl;       // when the store may forget the record (a day after the deadline)
};

// The record of a VM launched at `launched_at` with `max_duration_seconds`.
EphemeralRecord MakeEphemeralRecord(std::string repository_id, std::string microvm_id,
                                    std::string repository, std::string region, int64_t runner_id,
                                    std::string runner_name, TimePoint launched_at,
                                    int64_t max_duration_seconds);

store::Key EphemeralKey(const std::string& repository_id, const std::string& microvm_id);
store::Item EphemeralToItem(const EphemeralRecord& record);
// Internal naming the item and attribute when a stored record is malformed.
Result<EphemeralRecord> EphemeralFromItem(const store::Item& item);

}  // namespace mvr::action

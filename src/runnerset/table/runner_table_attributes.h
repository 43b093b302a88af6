// The attribute names and sort keys of the runner table's rows, shared by its files (not part of
// its interface).
// Thread-safety: constants only.
#pragma once

namespace mvr::runnerset::table_attr {

inline constexpr char kClaimSort[] = "claim";
inline constexpr char kMappingSort[] = "runner";
inline constexpr char kOrphanSort[] = "orphan";
inline constexpr char kToken[] = "attemptToken";
inline constexpr char kClaimedMs[] = "claimedAtMs";
inline constexpr char kMicrovmId[] = "microvmId";
inline constexpr char kPendingRunner[] = "pendingRunnerId";
inline constexpr char kPendingMicrovm[] = "pendingMicrovmId";
inline constexpr char kRunnerName[] = "runnerName";
inline constexpr char kRunnerId[] = "runnerId";
inline constexpr char kRepository[] = "repository";
inline constexpr char kJobId[] = "jobId";
inline constexpr char kClass[] = "classLabel";
inline constexpr char kImageVersion[] = "imageVersion";
inline constexpr char kPath[] = "launchPath";
inline constexpr char kReceivedMs[] = "receivedAtMs";
inline constexpr char kRunningMs[] = "runningAtMs";
inline constexpr char kDeliveredMs[] = "deliveredAtMs";
inline constexpr char kMemberCreatedMs[] = "memberCreatedAtMs";
inline constexpr char kMemberParkedMs[] = "memberParkedAtMs";
inline constexpr char kStrikes[] = "strikes";
inline constexpr char kSuspicion[] = "suspicion";
inline constexpr char kSuspectMs[] = "suspectSinceMs";
inline constexpr char kTtl[] = "ttl";
inline constexpr char kTookRunner[] = "tookRunner";
inline constexpr char kTookRepository[] = "tookRepository";
inline constexpr char kTookJob[] = "tookJobId";
inline constexpr char kServesRepository[] = "servesRepository";
inline constexpr char kServesJob[] = "servesJobId";

}  // namespace mvr::runnerset::table_attr

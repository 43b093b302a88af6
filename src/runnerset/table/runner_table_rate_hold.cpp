// RunnerTable: the set's shared note that GitHub's rate limits hold launches back (one row,
// `github#ratelimit` / `hold`, with the time in `untilMs`). A read-then-write: two launchers
// writing at once may leave the earlier of their times, which the next deferral extends again.
#include "runnerset/table/runner_table.h"
#include "runnerset/table/runner_table_attributes.h"

namespace mvr::runnerset {
namespace {

constexpr char kHoldPartition[] = "github#ratelimit";
constexpr char kHoldSort[] = "hold";
constexpr char kUntilMs[] = "untilMs";

}  // namespace

Status RunnerTable::HoldForRateLimit(TimePoint until) {
  const store::Key key{kHoldPartition, kHoldSort};
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> existing, store_.Get(key));
  const int64_t until_ms = ToUnixMillis(until);
  if (existing && existing->GetNumber(kUntilMs).value_or(0) >= until_ms) return Status::Ok();
  store::Item item{key, {}};
  item.attributes[kUntilMs] = store::Value(until_ms);
  // Kept a day past its time, then the store may drop it.
  item.attributes[table_attr::kTtl] = store::Value(until_ms / 1000 + 86'400);
  return store_.Put(item).Annotate("recording GitHub's rate-limit hold");
}

Result<std::optional<TimePoint>> RunnerTable::RateLimitHold(Duration grace) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item,
                       store_.Get(store::Key{kHoldPartition, kHoldSort}));
  if (!item) return std::optional<TimePoint>();
  const int64_t until_ms = item->GetNumber(kUntilMs).value_or(0);
  if (until_ms + grace.count() <= NowMs()) return std::optional<TimePoint>();
  return std::optional<TimePoint>(TimePoint(Duration(until_ms)));
}

}  // namespace mvr::runnerset

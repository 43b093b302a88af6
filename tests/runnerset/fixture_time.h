// Durations the runner-set fixtures and tests share.
#pragma once

#include "base/clock.h"

namespace mvr::runnerset::testing {

inline constexpr Duration kMinute{60'000};

}  // namespace mvr::runnerset::testing

// RFC 3339 / ISO 8601 timestamps as the AWS and GitHub APIs print them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace mvr {

// "2026-11-30T04:00:00Z" (whole seconds, UTC).
std::string FormatRfc3339(TimePoint t);
// "2026-11-30T04:00:00.123Z" (milliseconds, UTC).
std::string FormatRfc3339Millis(TimePoint t);
// Accepts "YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]".
Result<TimePoint> ParseRfc3339(std::string_view text);
// "20261130T040000Z" and "20261130", the forms SigV4 uses.
std::string FormatAmzDate(TimePoint t);
std::string FormatAmzDateShort(TimePoint t);
// HTTP's Date header (RFC 9110's IMF-fixdate): "Sun, 06 Nov 1994 08:49:37 GMT".
std::string FormatHttpDate(TimePoint t);
// Reads an IMF-fixdate; InvalidArgument for anything else.
Result<TimePoint> ParseHttpDate(std::string_view text);

// The last second mvr's time arithmetic is kept to: 9999-12-31T23:59:59Z. More seconds would
// overflow when converted to milliseconds (undefined behaviour) long before they made any sense.
constexpr int64_t kMaxUnixSeconds = 253'402'300'799;
// Epoch seconds read from outside (a header, a handle, a stored item): none unless the time is
// from 1970 to 9999.
std::optional<TimePoint> UnixSecondsTime(int64_t seconds);

}  // namespace mvr

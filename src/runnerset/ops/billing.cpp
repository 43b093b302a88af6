#include "runnerset/ops/billing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mvr::runnerset {

namespace {
constexpr double kSecondsPerMonth = 730.0 * 3600.0;  // AWS's GB-month
}  // namespace

double BaselineVcpus(int memory_mib, const PublishedRates& rates) {
  const double gib = static_cast<double>(std::max(memory_mib, 0)) / 1024.0;
  return std::clamp(gib * rates.vcpu_per_gib, rates.min_vcpu, rates.max_vcpu);
}

Price MicrovmPrice(const VmUsage& usage, int memory_mib, const PublishedRates& rates) {
  const double gib = static_cast<double>(std::max(memory_mib, 0)) / 1024.0;
  Price p;
  p.compute = usage.running_seconds() *
              (BaselineVcpus(memory_mib, rates) * rates.vcpu_second + gib * rates.gib_second);
  p.storage = usage.suspended_seconds * gib * rates.snapshot_gib_month / kSecondsPerMonth;
  return p;
}

double HostedMinutes(double job_seconds) {
  if (!(job_seconds > 0)) return 0;
  return std::ceil(job_seconds / 60.0);
}

double HostedPrice(double job_seconds, const PublishedRates& rates) {
  return HostedMinutes(job_seconds) * rates.hosted_minute;
}

std::string FormatUsd(double usd) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f", usd);
  return buf;
}

}  // namespace mvr::runnerset

// What a job's MicroVM time costs at the platform's published rates, beside what the same job
// costs on a GitHub-hosted runner (docs/cost-and-quotas.md, "What a job costs", gives the rates'
// sources and dates). `mvr simulate --report cost` and the status page's cost table use it.
#pragma once

#include <string>

namespace mvr::runnerset {

// Published rates, USD. Prices change: the defaults are the ones docs/cost-and-quotas.md cites,
// and each is a field so that a report can be rerun at other rates.
struct PublishedRates {
  // Lambda MicroVMs, us-east-1, Arm (the only architecture): a running VM is billed per second
  // for its baseline, whether or not it does anything.
  double vcpu_second = 0.0000276944;
  double gib_second = 0.0000036667;
  // A VM's baseline vCPUs follow its memory: 0.25 vCPU per 0.5 GB, from 0.25 to 4 vCPU.
  double vcpu_per_gib = 0.5;
  double min_vcpu = 0.25;
  double max_vcpu = 4;
  // A suspended VM's memory and disk are kept as a snapshot, per GB-month (730 hours). Only its
  // memory is counted here: how much of its disk differs from the image is not known to mvr.
  double snapshot_gib_month = 0.08;
  // GitHub-hosted Linux 2-core (x64) runner, per minute from 2026-01-01; GitHub rounds each
  // job's time up to a whole minute.
  double hosted_minute = 0.006;
};

// A VM's billed time, for one job or summed over many.
struct VmUsage {
  double with_job_seconds = 0;     // running, with a job on its runner
  double without_job_seconds = 0;  // running with none: starting, waiting, after the job
  double suspended_seconds = 0;    // suspended: its snapshot is stored, no compute is billed

  VmUsage& operator+=(const VmUsage& o) {
    with_job_seconds += o.with_job_seconds;
    without_job_seconds += o.without_job_seconds;
    suspended_seconds += o.suspended_seconds;
    return *this;
  }
  double running_seconds() const { return with_job_seconds + without_job_seconds; }
};

struct Price {
  double compute = 0;  // running seconds at the baseline's vCPU and memory rates
  double storage = 0;  // suspended seconds at the snapshot rate
  double total() const { return compute + storage; }
};

// The baseline vCPUs of a VM with `memory_mib` of memory.
double BaselineVcpus(int memory_mib, const PublishedRates& rates = {});

// What `usage` costs on a VM of `memory_mib`.
Price MicrovmPrice(const VmUsage& usage, int memory_mib, const PublishedRates& rates = {});

// What a job that ran `job_seconds` costs on a GitHub-hosted runner (whole minutes, rounded up;
// a job of 0 s is billed nothing).
double HostedPrice(double job_seconds, const PublishedRates& rates = {});
// The minutes GitHub bills for a job of `job_seconds`.
double HostedMinutes(double job_seconds);

// "$0.0021" style: dollars with four significant decimals, for reports.
std::string FormatUsd(double usd);

}  // namespace mvr::runnerset

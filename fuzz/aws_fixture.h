// What the DynamoDB and SQS response targets share: credentials, a manual clock and one retry at
// most, so a fuzzed 500 or throttle costs one extra call and no real sleep.
// Thread-safety: single-threaded.
#pragma once

#include "aws/signing/credentials.h"
#include "aws/signing/endpoints.h"
#include "base/clock.h"
#include "base/random.h"
#include "base/retry.h"
#include "fuzz_support.h"

namespace mvr::fuzz {

struct AwsFixture {
  AwsFixture(const char* url, const char* signing_name) : credentials(Credentials()) {
    endpoint.url = url;
    endpoint.region = "us-east-1";
    endpoint.signing_name = signing_name;
    retry.max_attempts = 2;
    retry.base_delay = Duration(1);
  }
  static aws::AwsCredentials Credentials() {
    aws::AwsCredentials c;
    c.access_key_id = "AKIDEXAMPLE";
    c.secret_access_key = Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    c.source = "fuzz";
    return c;
  }
  Seam deps() { return Seam{clock, sleeper, random, random, logger}; }

  aws::ServiceEndpoint endpoint;
  aws::StaticCredentialsProvider credentials;
  ManualClock clock;
  ManualSleeper sleeper{clock};
  SeededRandom random{3};
  DiscardSink sink;
  Logger logger{sink, clock};
  RetryPolicy retry;
};

}  // namespace mvr::fuzz

# The runner set's CloudWatch alarms, one put-metric-alarm input (--cli-input-json) each, for
# deploy/monitoring.sh. Each watches a metric the code really emits: the Lambda functions' EMF
# lines (src/lambda/emf.cpp: namespace mvr/runnerset, dimensions RunnerSetId and Function, the
# counters of src/runnerset/metrics/metrics.cpp and janitor.cpp as what one invocation added, the GitHub
# rate gauges of rate_budget_metrics.cpp) or the dead-letter queue's own AWS/SQS metric. A counter
# is in a line only when it grew, so no data is no event: every alarm treats it as not breaching.
# docs/operations.md ("Dashboard and alarms") says why each threshold.
#
# Arguments: $id (the runner set), $prefix (mvr-ID.), $dlq (its queue name), $sweep (the
# janitor's schedule period in seconds), $actions (the --alarm-topic, or none).

def emf($fn; $name): {Namespace: "mvr/runnerset", MetricName: $name,
  Dimensions: [{Name: "Function", Value: $fn}, {Name: "RunnerSetId", Value: $id}]};
# A single-metric alarm's metric with its statistic and period.
def metric($metric; $stat; $period): $metric + {Statistic: $stat, Period: $period};
# One series of a metric-math alarm.
def series($key; $metric; $stat): {Id: $key, ReturnData: false,
  MetricStat: {Metric: $metric, Period: 300, Stat: $stat}};
def expression($key; $expr; $text): {Id: $key, Expression: $expr, Label: $text, ReturnData: true};
def when($op; $threshold; $periods): {ComparisonOperator: $op, Threshold: $threshold,
  EvaluationPeriods: $periods, DatapointsToAlarm: $periods};
def alarm($name; $why): {AlarmName: ($prefix + $name), AlarmDescription: $why,
  ActionsEnabled: true, AlarmActions: $actions, OKActions: $actions,
  TreatMissingData: "notBreaching", Tags: [{Key: "mvr:runner-set", Value: $id}]};

alarm("dead-letters"; "A job intent was dead-lettered: the launcher failed it on each of its 5 receives, so its job got no VM. The launcher's log says why (\"intent handled\", decision failed); fix that, then move the messages back to the job queue (docs/operations.md).")
  + metric({Namespace: "AWS/SQS", MetricName: "ApproximateNumberOfMessagesVisible",
            Dimensions: [{Name: "QueueName", Value: $dlq}]}; "Maximum"; 300)
  + when("GreaterThanOrEqualToThreshold"; 1; 1),

alarm("janitor-errors"; "Three janitor sweeps in a row had errors (janitor_errors): stuck launches are not recovered and leaked VMs not reaped while it lasts. GitHub refusing the credentials, the MicroVMs API or the runner table failing; the janitor's log has each error (\"janitor: ...\").")
  + metric(emf("janitor"; "janitor_errors"); "Sum"; $sweep)
  + when("GreaterThanThreshold"; 0; 3),

alarm("launches-recovered"; "The janitor recovered a stuck launch (janitor_launches_recovered): a job stayed queued on GitHub with no VM for janitor.stuckLaunchSeconds, because its webhook was lost or its launch was dropped. A few are GitHub's lost deliveries; more mean the webhook or the launcher is failing (the webhook's recent deliveries on GitHub, the launcher's log).")
  + metric(emf("janitor"; "janitor_launches_recovered"); "Sum"; 900)
  + when("GreaterThanThreshold"; 0; 1),

alarm("launches-failing"; "Launches failed in each of the last three 5-minute periods (failed): GitHub, the MicroVMs API or the runner table refuses the launcher. Each failed intent comes back with a backoff and is dead-lettered after 5 receives. The launcher's log has each (\"launch failed\").")
  + metric(emf("launcher"; "failed"); "Sum"; 300)
  + when("GreaterThanThreshold"; 0; 3),

# The janitor's gauge (GitHubGauges): 1 while GitHub answers 401 to the set's credential. The
# janitor runs every period whatever the load, so the gauge is there even when no job comes.
alarm("github-auth-failing"; "GitHub refuses the set's credentials (github_auth_failing, as the janitor saw it on two sweeps in a row): no launch can succeed; launches are deferred, not failed, and run once the credential works. Put a valid PAT or App key in /mvr/\($id)/github-token (or the App key parameter): the functions re-read it while GitHub refuses it.")
  + metric(emf("janitor"; "github_auth_failing"); "Maximum"; $sweep)
  + when("GreaterThanOrEqualToThreshold"; 1; 2),

alarm("rate-budget"; "Less than 10% of GitHub's hourly rate budget is left (github_rate_remaining / github_rate_limit, as the launcher last saw it): past 0 every launch and janitor sweep waits for the reset. Look for another user of the same token or App, or a burst of jobs.")
  + {Metrics: [series("rate_left"; emf("launcher"; "github_rate_remaining"); "Minimum"),
               series("rate_limit"; emf("launcher"; "github_rate_limit"); "Maximum"),
               expression("budget"; "100 * rate_left / rate_limit"; "GitHub rate budget left (%)")]}
  + when("LessThanThreshold"; 10; 1)

# The runner set's CloudWatch dashboard (put-dashboard's body), for deploy/monitoring.sh: the
# alarms' states, then the functions' EMF metrics (src/lambda/emf.cpp: namespace mvr/runnerset,
# dimensions RunnerSetId and Function) beside the queues' and the functions' own AWS metrics.
# Every mvr/runnerset metric named here is one the code emits (tests/deploy/deploy_moto_test.py
# reads the names from the C++ sources).
#
# Arguments: $id, $region, $queue and $dlq (queue names), $alarms (the alarms' ARNs),
# $functions (the function names).

def emf($fn; $name): ["mvr/runnerset", $name, "RunnerSetId", $id, "Function", $fn];
def emf($fn; $name; $options): emf($fn; $name) + [$options];
def graph($x; $y; $title; $stat; $metrics): {type: "metric", x: $x, y: $y, width: 12, height: 6,
  properties: {title: $title, region: $region, view: "timeSeries", stacked: false, stat: $stat,
               period: 300, metrics: $metrics}};
def sqs($name; $queue): ["AWS/SQS", $name, "QueueName", $queue];

{widgets: [
  {type: "alarm", x: 0, y: 0, width: 24, height: 3,
   properties: {title: "Alarms of runner set \($id)", alarms: $alarms}},
  graph(0; 3; "Webhooks (webhook function)"; "Sum";
        [emf("webhook"; "received"), emf("webhook"; "ignored")]),
  graph(12; 3; "Job queue and dead letters"; "Maximum";
        [sqs("ApproximateNumberOfMessagesVisible"; $queue),
         sqs("ApproximateNumberOfMessagesVisible"; $dlq),
         sqs("ApproximateAgeOfOldestMessage"; $queue) + [{yAxis: "right"}]]),
  graph(0; 9; "Launches (launcher function)"; "Sum";
        ["launched", "deferred", "held", "failed", "duplicate", "dropped_not_queued", "ignored",
         "terminated", "relaunched_taken"] | map(emf("launcher"; .))),
  graph(12; 9; "GitHub rate budget (as the launcher last saw it)"; "Minimum";
        [emf("launcher"; "github_rate_remaining"),
         emf("launcher"; "github_rate_limit"; {stat: "Maximum"}),
         emf("launcher"; "github_content_minute_remaining"; {yAxis: "right"}),
         emf("launcher"; "github_content_hour_remaining"; {yAxis: "right"})]),
  graph(0; 15; "Janitor sweeps (janitor function)"; "Sum";
        ["sweeps", "errors", "launches_recovered", "vms_terminated", "orphans_terminated",
         "runners_removed", "busy_spared", "deliveries_failed"]
        | map(emf("janitor"; "janitor_" + .))),
  graph(0; 21; "Warm and hot pool sweeps (warm-pool function)"; "Sum";
        ["sweeps", "sweep_errors", "errors", "booted", "retired", "hot_parked"]
        | map(emf("warm-pool"; "pool_" + .))),
  graph(12; 21; "GitHub auth (1: GitHub refuses the set's credentials)"; "Maximum";
        [emf("janitor"; "github_auth_failing"), emf("launcher"; "github_auth_failing")]),
  graph(12; 15; "Function errors and throttles"; "Sum";
        [$functions[] | (["AWS/Lambda", "Errors", "FunctionName", .],
                         ["AWS/Lambda", "Throttles", "FunctionName", .])])
]}

// The load generator of bench/daemon_load.py: autocannon POSTs one signed delivery over CONNECTIONS
// keep-alive connections for SECONDS and prints its figures as one JSON line.
// Usage: node load.mjs URL BODY_FILE HEADERS_JSON_FILE CONNECTIONS SECONDS
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

const [url, bodyFile, headersFile, connections, seconds] = process.argv.slice(2);
if (!url || !bodyFile || !headersFile || !connections || !seconds) {
  console.error("usage: node load.mjs URL BODY_FILE HEADERS_JSON_FILE CONNECTIONS SECONDS");
  process.exit(2);
}
const result = await autocannon({
  url,
  method: "POST",
  body: readFileSync(bodyFile),
  headers: JSON.parse(readFileSync(headersFile, "utf8")),
  connections: Number(connections),
  duration: Number(seconds),
});
console.log(
  JSON.stringify({
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);

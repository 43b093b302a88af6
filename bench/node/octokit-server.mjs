// The comparison for mvr serve's webhook endpoint (bench/daemon_load.py): a Node server doing the
// same work per delivery with @octokit/webhooks - verify X-Hub-Signature-256, parse the event,
// hand a workflow_job "queued" event to a handler that matches its labels against the set's
// class labels - and answering 200.
// Usage: node octokit-server.mjs PORT SECRET_FILE LABEL[,LABEL...]
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { Webhooks, createNodeMiddleware } from "@octokit/webhooks";

const [port, secretFile, labelList] = process.argv.slice(2);
if (!port || !secretFile || !labelList) {
  console.error("usage: node octokit-server.mjs PORT SECRET_FILE LABEL[,LABEL...]");
  process.exit(2);
}
const classes = new Set(labelList.split(",").map((l) => l.toLowerCase()));
const webhooks = new Webhooks({ secret: readFileSync(secretFile, "utf8").trim() });
let routed = 0;
let ignored = 0;
webhooks.on("workflow_job.queued", ({ payload }) => {
  const labels = payload.workflow_job.labels.map((l) => l.toLowerCase());
  if (labels.some((l) => classes.has(l))) routed += 1;
  else ignored += 1;
});
const server = createServer(createNodeMiddleware(webhooks, { path: "/webhook" }));
server.keepAliveTimeout = 60_000;
server.listen(Number(port), "127.0.0.1", () => {
  console.log(`octokit server listening on http://127.0.0.1:${server.address().port}/webhook`);
});
process.on("SIGTERM", () => {
  console.log(JSON.stringify({ routed, ignored }));
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
});

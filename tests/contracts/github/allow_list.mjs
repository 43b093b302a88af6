// Answers GitHub really gives that its OpenAPI description does not document. Each entry says
// why it is real; validate.mjs still checks the body of such an answer against GitHub's error
// shape (basic-error: message, documentation_url). Anything else undocumented is a failure.
// Keep this list short: an entry here is a claim about github.com, with its source.

const runner =
  /^\/(repos\/\{owner\}\/\{repo\}|orgs\/\{org\}|enterprises\/\{enterprise\})\/actions\/runners\/\{runner_id\}$/;

export const allowList = [
  {
    // GET or DELETE of a runner GitHub already removed (an ephemeral runner deregisters itself
    // when its job ends) answers 404 {"message":"Not Found"}; the description lists only 200
    // (GET) and 204/422 (DELETE). The runner set and the Action treat it as "already gone"
    // (issue 29 §3; docs/contracts-github.md).
    methods: ["GET", "DELETE"],
    template: runner,
    statuses: [404],
    why: "runner already removed by GitHub: 404 Not Found, undocumented",
  },
  {
    // GET of a job id the repository has no job of answers 404 {"message":"Not Found"}, as
    // every GitHub resource that does not exist does ("Troubleshooting the REST API", 404);
    // the description lists only 200. The runner set's still-queued check reads it.
    methods: ["GET"],
    template: /^\/repos\/\{owner\}\/\{repo\}\/actions\/jobs\/\{job_id\}$/,
    statuses: [404],
    why: "no such job: 404 Not Found, undocumented",
  },
  {
    // A workflow_dispatch of a workflow file the repository does not hold answers 404
    // {"message":"Not Found"}, as every GitHub resource that does not exist does ("Troubleshooting
    // the REST API", 404); the description lists only 204 (and 200 with return_run_details).
    // `mvr doctor --canary` names the missing canary workflow from it (docs/first-deployment.md).
    methods: ["POST"],
    template: /^\/repos\/\{owner\}\/\{repo\}\/actions\/workflows\/\{workflow_id\}\/dispatches$/,
    statuses: [404],
    why: "no such workflow in the repository: 404 Not Found, undocumented",
  },
  {
    // Any operation answers 401 {"message":"Bad credentials"} to a token GitHub does not know
    // ("Troubleshooting the REST API", 401); most operations do not list it.
    methods: ["GET", "POST", "DELETE", "PUT", "PATCH"],
    template: /.*/,
    statuses: [401],
    why: "bad or missing credentials: 401, on every operation",
  },
  {
    // Any operation answers 403 or 429 when the caller's primary or secondary rate limit is
    // spent ("Rate limits for the REST API": "you will receive a 403 or 429 response"), with
    // a message saying so; most operations do not list it.
    methods: ["GET", "POST", "DELETE", "PUT", "PATCH"],
    template: /.*/,
    statuses: [403, 429],
    body: (b) => typeof b?.message === "string" && /rate limit/i.test(b.message),
    why: "rate limit spent: 403 or 429, on every operation",
  },
  {
    // An App's installation token (an organisation's or a repository's) on an enterprise's
    // endpoints answers 403 {"message":"Resource not accessible by integration"}, GitHub's answer
    // to a token whose grant does not reach the resource ("Troubleshooting the REST API", 403);
    // GHEC's description of the enterprise runner endpoints lists only 200/201/204.
    methods: ["GET", "POST", "DELETE"],
    template: /^\/enterprises\/\{enterprise\}\/actions\/runners/,
    statuses: [403],
    body: (b) => b?.message === "Resource not accessible by integration",
    why: "installation token on an enterprise's endpoint: 403, undocumented",
  },
];

// Delivery headers the webhooks description marks required that GitHub leaves out.
export const optionalDeliveryHeaders = [
  {
    // GitHub sends X-Hub-Signature-256 only "if the webhook is configured with a secret"
    // (docs.github.com, "Webhook events and payloads", delivery headers). The emulator, like
    // GitHub, signs only when given a secret (--webhook-secret-file).
    header: "x-hub-signature-256",
    why: "sent only when the webhook has a secret",
  },
];

// The entry allowing this undocumented answer (`body` parsed), or undefined.
export function allowedUndocumented(method, template, status, body) {
  return allowList.find(
    (e) =>
      e.methods.includes(method) &&
      e.template.test(template) &&
      e.statuses.includes(status) &&
      (!e.body || e.body(body)),
  );
}

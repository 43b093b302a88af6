#!/usr/bin/env node
// Checks a record of the GitHub emulator's traffic (`mvr emulate github --record FILE`) against
// GitHub's own descriptions: the REST API's OpenAPI document (@octokit/openapi) for each request
// body, query and answer, and the webhooks document (@octokit/openapi-webhooks) for each delivery.
// Usage: node validate.mjs RECORD.jsonl [--expect-operations ID,...] [--expect-deliveries E.A,...]
//          [--description api.github.com|ghec]
// --description: which of GitHub's descriptions to hold the record to: GitHub.com's (the default)
// or GitHub Enterprise Cloud's, which adds the enterprise endpoints (its runners).
// Exit: 0 all valid, 1 failures, 2 bad usage or record, 77 the npm packages are not installed
// (run scripts/setup.sh). See docs/contracts-github.md.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { allowedUndocumented, optionalDeliveryHeaders } from "./allow_list.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "package.json"));

let Ajv, Ajv2020, addFormats;
try {
  Ajv = require("ajv").default;
  Ajv2020 = require("ajv/dist/2020").default;
  addFormats = require("ajv-formats").default;
  require.resolve("@octokit/openapi/package.json");
  require.resolve("@octokit/openapi-webhooks/package.json");
} catch {
  console.error(
    "validate: the npm packages are missing in " + here + "; run scripts/setup.sh (npm ci there)",
  );
  process.exit(77);
}

function usage(message) {
  console.error("validate: " + message);
  console.error(
    "usage: node validate.mjs RECORD.jsonl [--expect-operations ID,...] [--expect-deliveries EVENT.ACTION,...] [--description api.github.com|ghec]",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const options = { record: null, expectOps: [], expectDeliveries: [], description: "api.github.com" };
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  const list = () => (args[++i] ?? usage(a + " needs a value")).split(",").filter(Boolean);
  if (a === "--expect-operations") options.expectOps = list();
  else if (a === "--expect-deliveries") options.expectDeliveries = list();
  else if (a === "--description") {
    options.description = args[++i] ?? usage(a + " needs a value");
    if (!["api.github.com", "ghec"].includes(options.description)) {
      usage("--description: api.github.com or ghec, not " + options.description);
    }
  }
  else if (a.startsWith("--")) usage("unknown flag " + a);
  else if (options.record === null) options.record = a;
  else usage("one record file only");
}
if (options.record === null) usage("no record file given");

const readJson = (pkg, file) =>
  JSON.parse(readFileSync(join(dirname(require.resolve(pkg + "/package.json")), file), "utf8"));
const rest = readJson("@octokit/openapi", "generated/" + options.description + ".json");
const hooks = readJson("@octokit/openapi-webhooks", "generated/" + options.description + ".json");

// OpenAPI 3.0 leaves open whether `nullable: true` admits null when an `enum` omits it; GitHub
// means it does (a running job's conclusion is null; Octokit's types read it so), so null is
// added to such enums. Ajv takes `nullable` only beside `type`; a nullable schema without one
// (e.g. `nullable` beside `allOf`) becomes "null, or the schema".
(function admitNull(node) {
  if (Array.isArray(node)) return node.forEach(admitNull);
  if (node === null || typeof node !== "object") return;
  Object.values(node).forEach(admitNull);
  if (node.nullable !== true) return;
  if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum.push(null);
  if (node.type === undefined) {
    const inner = { ...node };
    delete inner.nullable;
    for (const key of Object.keys(node)) delete node[key];
    node.anyOf = [{ type: "null" }, inner];
  }
})(rest);

// The REST document is OpenAPI 3.0.3 (draft-04-like schemas with `nullable`, which Ajv knows);
// the webhooks document is OpenAPI 3.1.0, whose schemas are JSON Schema 2020-12.
const ajvOptions = { strict: false, allErrors: true, validateSchema: false, logger: false };
const restAjv = addFormats(new Ajv(ajvOptions));
restAjv.addSchema(rest, "rest");
const hookAjv = addFormats(new Ajv2020(ajvOptions));
hookAjv.addSchema(hooks, "hooks");

const pointer = (...parts) =>
  "#" + parts.map((p) => "/" + encodeURIComponent(String(p).replace(/~/g, "~0").replace(/\//g, "~1"))).join("");
const compiled = new Map();
function validatorAt(ajv, doc, ref) {
  if (!compiled.has(doc + ref)) compiled.set(doc + ref, ajv.compile({ $ref: doc + ref }));
  return compiled.get(doc + ref);
}
// An object of the REST document, following one $ref (responses, request bodies, parameters).
function deref(node, path) {
  if (node && node.$ref) {
    const parts = node.$ref.slice(2).split("/");
    return { node: parts.reduce((n, p) => n[p], rest), path: parts };
  }
  return { node, path };
}

// Path templates of api.github.com, most specific first (a literal segment beats a parameter).
const templates = Object.keys(rest.paths).map((t) => ({
  template: t,
  segments: t.split("/"),
  regex: new RegExp("^" + t.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
}));
const specificity = (t) => t.segments.map((s) => (s.startsWith("{") ? "0" : "1")).join("");
templates.sort((a, b) => (specificity(a) < specificity(b) ? 1 : -1));
const matchTemplate = (path) => templates.find((t) => t.regex.test(path))?.template;

const failures = new Map(); // message -> count
const fail = (where, message) => failures.set(where + ": " + message, (failures.get(where + ": " + message) ?? 0) + 1);
const describe = (errors) =>
  errors.map((e) => {
    const at = e.instancePath === "" ? "/" : e.instancePath;
    const detail = e.params?.missingProperty ?? e.params?.additionalProperty ?? e.params?.allowedValues;
    return at + " " + e.message + (detail !== undefined && e.keyword !== "required" ? " " + JSON.stringify(detail) : "");
  });
function check(validate, value, where) {
  if (validate(value)) return;
  // Each alternative of a oneOf/anyOf reports; the summary keeps the distinct messages.
  for (const line of new Set(describe(validate.errors))) fail(where, line);
}
function parseBody(text, where) {
  if (text === undefined || text === null || text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    fail(where, "body is not JSON");
    return undefined;
  }
}

const seenOps = new Map(); // operationId -> count
let answers = 0;
let requests = 0;

function checkRest(line) {
  const method = line.method.toLowerCase();
  const template = matchTemplate(line.path);
  const operation = template && rest.paths[template][method];
  if (!operation) {
    fail(`${line.method} ${line.path}`, "no such operation in GitHub's REST description");
    return;
  }
  const where = `${line.method} ${template}`;
  seenOps.set(operation.operationId, (seenOps.get(operation.operationId) ?? 0) + 1);
  requests += 1;
  checkQuery(operation, template, line, where);
  checkRequestBody(operation, template, method, line, where);
  answers += 1;
  checkAnswer(operation, template, method, line, where);
}

function checkQuery(operation, template, line, where) {
  const params = [...(rest.paths[template].parameters ?? []), ...(operation.parameters ?? [])]
    .map((p) => deref(p, []).node)
    .filter((p) => p.in === "query");
  for (const [name, value] of new URLSearchParams(line.query ?? "")) {
    const p = params.find((q) => q.name === name);
    if (!p) {
      fail(where, `query parameter "${name}" is not documented`);
      continue;
    }
    const typed = p.schema?.type === "integer" || p.schema?.type === "number" ? Number(value) : value;
    const v = restAjv.compile(p.schema ?? {});
    if (!v(typed)) fail(where, `query parameter "${name}"=${JSON.stringify(value)} ${v.errors[0].message}`);
  }
}

function checkRequestBody(operation, template, method, line, where) {
  const body = parseBody(line.request_body, where + " request");
  if (!operation.requestBody) {
    if (body !== undefined && !(typeof body === "object" && Object.keys(body).length === 0)) {
      fail(where + " request", "the operation takes no body but one was sent");
    }
    return;
  }
  const { node, path } = deref(operation.requestBody, ["paths", template, method, "requestBody"]);
  if (body === undefined) {
    if (node.required) fail(where + " request", "the operation requires a body; none was sent");
    return;
  }
  const type = Object.keys(node.content).find((t) => t.includes("json"));
  check(validatorAt(restAjv, "rest", pointer(...path, "content", type, "schema")), body, where + " request");
}

function checkAnswer(operation, template, method, line, where) {
  const status = String(line.status);
  const at = `${where} → ${status}`;
  const key = [status, status[0] + "XX", "default"].find((k) => operation.responses[k]);
  if (!key) {
    const body = parseBody(line.response_body, at);
    if (!allowedUndocumented(line.method, template, line.status, body)) {
      fail(at, "status not documented for this operation (and not on the allow-list)");
      return;
    }
    // GitHub's error body: basic-error, whose message and documentation_url GitHub always sends.
    if (!compiled.has("error")) {
      const ref = "rest" + pointer("components", "schemas", "basic-error");
      compiled.set("error", restAjv.compile({ allOf: [{ $ref: ref }], required: ["message", "documentation_url"] }));
    }
    check(compiled.get("error"), body, at);
    return;
  }
  const { node, path } = deref(operation.responses[key], ["paths", template, method, "responses", key]);
  const body = parseBody(line.response_body, at);
  const type = node.content && Object.keys(node.content).find((t) => t.includes("json"));
  if (!type || !node.content[type].schema) {
    if (body !== undefined) fail(at, "the description documents no body but one was answered");
    return;
  }
  if (body === undefined) {
    fail(at, "the description documents a body but none was answered");
    return;
  }
  check(validatorAt(restAjv, "rest", pointer(...path, "content", type, "schema")), body, at);
}

const seenDeliveries = new Map();
let deliveries = 0;
function checkDelivery(line) {
  const body = parseBody(line.body, "delivery");
  if (body === undefined) return;
  const name = `${line.event}.${body.action}`;
  const key = `${line.event}-${body.action}`.replace(/_/g, "-");
  const hook = hooks.webhooks[key]?.post;
  if (!hook) {
    fail(`delivery ${name}`, "no such event and action in GitHub's webhooks description");
    return;
  }
  deliveries += 1;
  seenDeliveries.set(name, (seenDeliveries.get(name) ?? 0) + 1);
  const headers = Object.fromEntries(Object.entries(line.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  for (const p of hook.parameters ?? []) {
    const header = p.name.toLowerCase();
    const optional = optionalDeliveryHeaders.some((h) => h.header === header);
    if (p.in === "header" && p.required && !optional && !(header in headers)) {
      fail(`delivery ${name}`, `header ${p.name} is missing`);
    }
  }
  if (headers["x-github-event"] !== undefined && headers["x-github-event"] !== line.event) {
    fail(`delivery ${name}`, `X-GitHub-Event is "${headers["x-github-event"]}"`);
  }
  const ref = pointer("webhooks", key, "post", "requestBody", "content", "application/json", "schema");
  check(validatorAt(hookAjv, "hooks", ref), body, `delivery ${name}`);
}

let lines;
try {
  lines = readFileSync(options.record, "utf8").split("\n").filter((l) => l.trim() !== "");
} catch (e) {
  usage(`cannot read ${options.record}: ${e.code ?? e.message}`);
}
let exempt = 0;
lines.forEach((text, i) => {
  let line;
  try {
    line = JSON.parse(text);
  } catch {
    usage(`${options.record}:${i + 1} is not a JSON line`);
  }
  if (line.kind === "rest") {
    // The emulator's own control and stand-in runner endpoints are not GitHub's API, nor is the
    // runner scale-set API (the Actions service under /_services, and its token exchange).
    if (/^\/_(emulator|runner|services)\//.test(line.path) ||
        line.path === "/actions/runner-registration") exempt += 1;
    else checkRest(line);
  } else if (line.kind === "delivery") checkDelivery(line);
  else usage(`${options.record}:${i + 1} has kind ${JSON.stringify(line.kind)}`);
});

for (const op of options.expectOps) if (!seenOps.has(op)) fail("coverage", `operation ${op} never seen`);
for (const d of options.expectDeliveries) if (!seenDeliveries.has(d)) fail("coverage", `delivery ${d} never seen`);

const list = (m) => [...m].map(([k, n]) => `${k} ×${n}`).join(", ") || "none";
console.log(`github contracts: @octokit/openapi ${rest.info.version}, @octokit/openapi-webhooks ${hooks.info.version}`);
console.log(`operations seen: ${seenOps.size} (${list(seenOps)})`);
console.log(`requests checked: ${requests}; answers checked: ${answers}; emulator-only exchanges skipped: ${exempt}`);
console.log(`deliveries checked: ${deliveries} (${list(seenDeliveries)})`);
const total = [...failures.values()].reduce((a, b) => a + b, 0);
console.log(`failures: ${total}${total ? ` (${failures.size} distinct)` : ""}`);
for (const [message, n] of failures) console.log(`  FAIL ${message}${n > 1 ? ` (×${n})` : ""}`);
process.exit(total ? 1 : 0);

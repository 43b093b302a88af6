// Loads one page in Debian's chromium (headless) over the DevTools protocol on a pipe (no
// WebSocket, no npm package) and prints what a person would see, as JSON: the rows of each table,
// the waterfalls, scripts, console errors and CSP violations; saves a PNG screenshot.
// Usage: node status_page_browser.js CHROMIUM URL SCREENSHOT.png
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [chromium, url, screenshot] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mvr-chromium-'));
// Everything that would reach past loopback is off: updates, sync, metrics, safe browsing.
const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
  '--user-data-dir=' + profile, '--no-first-run', '--no-default-browser-check',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-domain-reliability', '--disable-client-side-phishing-detection',
  '--disable-features=OptimizationHints,MediaRouter,Translate', '--metrics-recording-only',
  '--window-size=1280,900', 'about:blank',
  // A group of its own: its helper processes (crashpad, utilities) outlive the browser for a
  // moment and write into the profile, so the whole group is ended before the profile goes.
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
let stderr = '';
browser.stderr.on('data', (d) => { stderr += d; });

let nextId = 1;
const waiting = new Map();
const listeners = [];
let buffered = '';
browser.stdio[4].on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    } else {
      for (const listen of listeners) listen(message);
    }
  }
});

function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  const message = { id, method, params };
  if (sessionId) message.sessionId = sessionId;
  browser.stdio[3].write(JSON.stringify(message) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}

function until(predicate, what, ms = 30000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for ' + what)), ms);
    listeners.push((message) => {
      if (predicate(message)) {
        clearTimeout(timer);
        resolve(message);
      }
    });
  });
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const errors = [];
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === 'Runtime.exceptionThrown') errors.push(m.params.exceptionDetails.text);
    if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error') {
      errors.push(m.params.args.map((a) => a.value).join(' '));
    }
    if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') {
      errors.push(m.params.entry.source + ': ' + m.params.entry.text);
    }
  });
  await send('Runtime.enable', {}, sessionId);
  await send('Log.enable', {}, sessionId);
  await send('Page.enable', {}, sessionId);
  const loaded = until((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired',
                       'the page to load');
  const nav = await send('Page.navigate', { url }, sessionId);
  if (nav.errorText) throw new Error('navigating to ' + url + ': ' + nav.errorText);
  await loaded;
  const probe = `(() => {
    const rows = (id) => Array.from(document.querySelectorAll('#' + id + ' tr.job'));
    const table = (id) => rows(id).map((r) => ({
      cells: Array.from(r.cells).map((c) => c.textContent),
      waterfalls: r.querySelectorAll('svg.waterfall').length,
      spans: r.querySelectorAll('svg.waterfall rect').length,
    }));
    return JSON.stringify({
      title: document.title,
      classes: document.querySelectorAll('#classes tr').length - 1,
      inFlight: table('in-flight'),
      finished: table('finished'),
      latencyRows: document.querySelectorAll('#latency tr').length - 1,
      histograms: document.querySelectorAll('svg.histogram').length,
      cost: Array.from(document.querySelectorAll('#cost tr')).slice(1).map(
          (r) => Array.from(r.cells).map((c) => c.textContent)),
      sweeps: document.querySelectorAll('#sweeps tr').length - 1,
      scripts: document.scripts.length,
      images: document.images.length,
      refresh: !!document.querySelector('meta[http-equiv="refresh"]'),
      text: document.body.innerText.length,
    });
  })()`;
  const evaluated = await send('Runtime.evaluate', { expression: probe, returnByValue: true },
                               sessionId);
  const shot = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
  fs.writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  // Console and CSP errors arrive asynchronously: give them a moment.
  await new Promise((r) => setTimeout(r, 300));
  const out = JSON.parse(evaluated.result.value);
  out.errors = errors;
  process.stdout.write(JSON.stringify(out) + '\n');
}

main()
  .then(() => 0, (e) => {
    process.stderr.write(String(e.stack || e) + '\nchromium said:\n' + stderr.slice(-4000) + '\n');
    return 1;
  })
  .then(async (code) => {
    try {
      await Promise.race([send('Browser.close'), new Promise((r) => setTimeout(r, 3000))]);
    } catch (e) { /* it is closing anyway */ }
    if (browser.exitCode === null && browser.signalCode === null) {
      const exited = new Promise((r) => browser.once('exit', r));
      browser.kill('SIGKILL');
      await exited;
    }
    try {
      process.kill(-browser.pid, 'SIGKILL');
    } catch (e) { /* the group has ended */ }
    await new Promise((r) => setTimeout(r, 200));
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    process.exit(code);
  });

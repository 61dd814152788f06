/**
 * The drain (README "Shutdown": `ops.unreadyDelayMs`, then up to `shutdownGraceMs` for requests in
 * flight; a cluster's first process 5 s more) must fit in the time the container runtime gives it
 * before SIGKILL. Docker's `docker stop` and Compose wait 10 s unless told otherwise
 * (docs.docker.com, docker container stop; Compose `stop_grace_period`), so the README's
 * `docker run` with config/production.example.json (5 + 30 s) and the compose demo (30 s) cut
 * requests in flight, and the last log lines, short.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { BACKENDS } from '../../mappings/index.js';
import { loadConfig } from '../../src/load-config.js';

const DOCKER_DEFAULT_S = 10;
/** What the drain may take, in seconds: the cluster primary's bound (src/workers.ts), the longer one. */
function drainSeconds(file: string, extra: Record<string, string> = {}): number {
  const config = loadConfig(BACKENDS, {
    CONFIG_FILE: file,
    KEY_PEPPER: 'x'.repeat(40),
    WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
    WHMCS_IDENTIFIER: 'id',
    WHMCS_SECRET: 'secret',
    ...extra,
  });
  return (config.ops.unreadyDelayMs + config.shutdownGraceMs + 5_000) / 1_000;
}

/** Compose durations as it writes them: `1m30s`, `35s`, `500ms`. */
function seconds(duration: string | undefined): number {
  if (duration === undefined) return DOCKER_DEFAULT_S;
  let total = 0;
  for (const [, value, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(value) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as 'ms' | 's' | 'm' | 'h'];
  return total;
}

t.test("the README's docker run gives the example config's drain time before SIGKILL", async () => {
  const readme = readFileSync('README.md', 'utf8');
  const run = /^docker run (?:[^\n]*\\\n)*[^\n]*/m.exec(readme)?.[0] ?? '';
  assert.match(run, /reseller-gateway$/, run);
  const timeout = Number(/--stop-timeout[ =](\d+)/.exec(run)?.[1] ?? DOCKER_DEFAULT_S);
  assert.ok(timeout >= drainSeconds('config/production.example.json'), `--stop-timeout ${timeout} s, the drain up to ${drainSeconds('config/production.example.json')} s`);
});

t.test("the compose demo's gateway gets its drain time before SIGKILL", async () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { stop_grace_period?: string }> };
  const grace = seconds(compose.services.gateway?.stop_grace_period);
  assert.ok(grace >= drainSeconds('config/demo.json'), `stop_grace_period ${grace} s, the drain up to ${drainSeconds('config/demo.json')} s`);
});

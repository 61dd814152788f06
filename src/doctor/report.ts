/**
 * Backend-neutral presentation of `doctor` results: the exit code, the text an operator reads, the
 * JSON a script reads.
 */
import type { DoctorCheck } from '../backend/backend.js';

/** Exit codes of `reseller-doctor` (documented in the README). */
export const DOCTOR_EXIT = {
  /** Every check passed. */
  ok: 0,
  /** At least one check failed. */
  failed: 1,
  /** Bad command line. */
  usage: 2,
  /** Nothing failed, but some checks could not be verified (`warn`). */
  unverified: 3,
  /** The configuration is invalid (the gateway would not start either). */
  config: 78,
} as const;

export interface DoctorSummary {
  exitCode: number;
  counts: Record<DoctorCheck['status'], number>;
}

export function summarize(checks: readonly DoctorCheck[]): DoctorSummary {
  const counts = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const check of checks) counts[check.status] += 1;
  // A skipped check was not verified because something failed (an earlier check, a read).
  const exitCode = counts.fail > 0 || counts.skip > 0 ? DOCTOR_EXIT.failed : counts.warn > 0 ? DOCTOR_EXIT.unverified : DOCTOR_EXIT.ok;
  return { exitCode, counts };
}

const LABELS: Record<DoctorCheck['status'], string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skip: 'SKIP' };

/** What a failing check stops in the gateway, in words. */
export function blockedText(check: DoctorCheck): string | undefined {
  if (!check.blocks?.includes('orders')) return undefined;
  return 'While this fails, POST /v1/orders answers 503 backend_misconfigured.';
}

export function formatText(heading: string, checks: readonly DoctorCheck[]): string {
  const lines = [heading, ''];
  for (const check of checks) {
    lines.push(`${LABELS[check.status]}  ${check.title}`, `      ${check.detail}`);
    if (check.status !== 'pass' && check.fix) lines.push(`      Fix: ${check.fix}`);
    const blocked = check.status === 'fail' ? blockedText(check) : undefined;
    if (blocked) lines.push(`      ${blocked}`);
  }
  const { exitCode, counts } = summarize(checks);
  const parts = (['pass', 'fail', 'warn', 'skip'] as const)
    .filter((status) => counts[status] > 0)
    .map((status) => `${counts[status]} ${status}`);
  lines.push('', `${parts.join(', ')} (exit code ${exitCode})`);
  return `${lines.join('\n')}\n`;
}

export function formatJson(backend: string, checks: readonly DoctorCheck[]): string {
  const { exitCode, counts } = summarize(checks);
  return `${JSON.stringify({ ok: exitCode === DOCTOR_EXIT.ok, exit_code: exitCode, backend, counts, checks }, null, 2)}\n`;
}

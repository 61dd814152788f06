/**
 * The doctor inside the gateway: the backend's checks at start-up and every `doctor.intervalMs`,
 * in the background (start-up and requests never wait for them). Each failing check is logged with
 * its fix; a failing check that blocks an operation (orders) makes the gateway refuse it, with
 * nothing sent upstream, until a later run passes.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Backend, DiagnoseScope, DoctorCheck, DoctorGuardedOperation } from '../backend/backend.js';
import { blockedText } from './report.js';

/** What routes ask before an operation the doctor may have stopped. */
export interface DoctorGate {
  /** The failing check that stops this operation, if any. */
  blockerOf(operation: DoctorGuardedOperation): DoctorCheck | undefined;
  /** When the checks run next (the client's Retry-After), in ms from now. */
  retryAfterMs(): number;
}

export interface DoctorMonitorOptions {
  /** 0: no re-runs. */
  intervalMs: number;
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
}

/** Retry-After while blocked and nothing re-runs the checks. */
const NO_RERUN_RETRY_MS = 300_000;

export class DoctorMonitor implements DoctorGate {
  /** Failing checks that block something, by check id. */
  private readonly blockers = new Map<string, DoctorCheck>();
  /** Ids of the checks that failed last time (to log their recovery). */
  private failing = new Set<string>();
  private running: Promise<DoctorCheck[]> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextRunAt = 0;
  private runs = 0;

  constructor(
    /** A forwarding gateway has no Backend, hence no checks: it passes `{}`. */
    private readonly backend: Pick<Backend, 'diagnose'>,
    private readonly scope: DiagnoseScope,
    private readonly options: DoctorMonitorOptions,
  ) {}

  /** First run now, then every intervalMs. Returns at once. */
  start(): void {
    if (!this.backend.diagnose) return;
    void this.run();
    if (this.options.intervalMs > 0) {
      this.timer = setInterval(() => void this.run(), this.options.intervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs the checks (or joins the run in progress) and applies the results. */
  run(): Promise<DoctorCheck[]> {
    this.running ??= this.runOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  blockerOf(operation: DoctorGuardedOperation): DoctorCheck | undefined {
    for (const check of this.blockers.values()) if (check.blocks?.includes(operation)) return check;
    return undefined;
  }

  retryAfterMs(): number {
    return this.timer === undefined ? NO_RERUN_RETRY_MS : Math.max(1_000, this.nextRunAt - Date.now());
  }

  private async runOnce(): Promise<DoctorCheck[]> {
    if (!this.backend.diagnose) return [];
    this.nextRunAt = Date.now() + this.options.intervalMs;
    let checks: DoctorCheck[];
    try {
      checks = await this.backend.diagnose(this.scope);
    } catch (error) {
      // A bug in a check: what was blocked stays blocked, nothing new is blocked.
      this.options.log.error({ err: error }, 'doctor: the checks could not run');
      return [];
    }
    this.apply(checks);
    return checks;
  }

  private apply(checks: readonly DoctorCheck[]): void {
    const log = this.options.log;
    const failing = new Set<string>();
    for (const check of checks) {
      const fields = { check: check.id, status: check.status, detail: check.detail, fix: check.fix };
      if (check.status === 'fail') {
        failing.add(check.id);
        const blocked = blockedText(check);
        log.error(fields, `doctor: FAIL ${check.title}: ${check.detail} Fix: ${check.fix ?? '-'}${blocked ? ` ${blocked}` : ''}`);
      } else if (check.status === 'warn') {
        log.warn(fields, `doctor: WARN ${check.title}: ${check.detail} ${check.fix ?? ''}`.trimEnd());
      } else if (check.status === 'pass' && this.failing.has(check.id)) {
        log.info(fields, `doctor: passes again: ${check.title}`);
      }
      // A skipped check says nothing new: what it blocked stays blocked until it runs again.
      if (check.status === 'fail' && check.blocks?.length) this.blockers.set(check.id, check);
      else if (check.status !== 'skip') this.blockers.delete(check.id);
      if (check.status === 'skip' && this.failing.has(check.id)) failing.add(check.id);
    }
    const quietBefore = this.runs > 0 && this.failing.size === 0;
    this.runs += 1;
    if (!quietBefore && failing.size === 0 && checks.every((check) => check.status === 'pass')) {
      log.info({ checks: checks.length }, `doctor: all ${checks.length} checks passed`);
    }
    this.failing = failing;
  }
}

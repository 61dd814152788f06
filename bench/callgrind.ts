/**
 * CPU instructions a process executes, counted by valgrind's callgrind: a figure the neighbours of
 * a shared virtual machine do not move, where its µs figures swing by a third between runs. The process
 * runs under `command()`; `count` zeroes the counters, runs the work and dumps them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTool } from './tools.js';

export class Callgrind {
  private readonly directory = mkdtempSync(join(tmpdir(), 'rg-callgrind-'));
  private readonly control: string;
  private readonly valgrind: string;

  constructor() {
    this.valgrind = findTool('valgrind', 'valgrind', 'valgrind for --instructions: install it, e.g. `apt-get install -y valgrind`');
    this.control = findTool('callgrind_control', 'valgrind', 'callgrind_control (part of valgrind)');
  }

  /** The command to run the counted process under. */
  command(): string[] {
    return [this.valgrind, '--tool=callgrind', `--callgrind-out-file=${join(this.directory, 'out.%p')}`];
  }

  /** Instructions process `pid` executes while `work` runs. */
  async count(pid: number, work: () => Promise<void>): Promise<number> {
    execFileSync(this.control, ['--zero', String(pid)], { stdio: 'ignore' });
    await work();
    execFileSync(this.control, ['--dump', String(pid)], { stdio: 'ignore' });
    // Each dump is a file of its own, out.<pid>.<n>; the newest holds what ran since the zero.
    const dumps = readdirSync(this.directory).filter((name) => name.startsWith(`out.${pid}.`));
    const newest = dumps.sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2])).at(-1);
    if (!newest) throw new Error(`callgrind wrote no dump for process ${pid}`);
    const summary = /^summary: (\d+)/m.exec(readFileSync(join(this.directory, newest), 'utf8'));
    if (!summary) throw new Error(`callgrind dump ${newest} has no summary line`);
    return Number(summary[1]);
  }

  remove(): void {
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/**
 * What the cluster primary does when a serving worker dies: replace it after a delay that doubles
 * with each round of deaths (as many deaths as there are workers), and give up at the fourth round,
 * so that a crash loop ends the process for the orchestrator to see instead of going on forever.
 * A death that comes a minute or more after the last one starts counting anew: a worker that dies
 * now and then is replaced after the base delay, however long the process has run.
 */

/** The first replacement's delay; each round of deaths doubles it. */
const RESPAWN_DELAY_MS = 1_000;
/** Rounds of deaths in a row (the workers' count each) after which the primary exits. */
const GIVE_UP_ROUNDS = 4;
/** A death this long after the previous one starts a new count. */
const QUIET_MS = 60_000;

export type AfterDeath = { respawnInMs: number } | { giveUp: true; deaths: number };

export class WorkerDeaths {
  private deaths = 0;
  private lastAt = -Infinity;

  constructor(
    private readonly workers: number,
    private readonly now: () => number = Date.now,
  ) {}

  note(): AfterDeath {
    const at = this.now();
    this.deaths = at - this.lastAt >= QUIET_MS ? 1 : this.deaths + 1;
    this.lastAt = at;
    const round = Math.floor((this.deaths - 1) / this.workers);
    if (round + 1 >= GIVE_UP_ROUNDS) return { giveUp: true, deaths: this.deaths };
    return { respawnInMs: RESPAWN_DELAY_MS * 2 ** round };
  }
}

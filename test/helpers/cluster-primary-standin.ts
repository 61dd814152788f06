/**
 * The cluster primary (src/workers.ts runPrimary) over stand-in workers that listen when told: the
 * first at once, the others once GATE_FILE exists. Each writes `worker <id> listening` when it does.
 */
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { BACKENDS } from '../../mappings/index.js';
import { resolveStart } from '../../src/server.js';
import { runPrimary } from '../../src/workers.js';

if (cluster.isWorker) {
  const id = cluster.worker?.id ?? 0;
  const server = createServer((_request, response) => response.end('ok'));
  const listen = () => server.listen(Number(process.env.STAND_IN_PORT), '127.0.0.1', () => process.stdout.write(`worker ${id} listening\n`));
  if (id === 1) listen();
  else {
    const gate = setInterval(() => {
      if (!existsSync(process.env.GATE_FILE as string)) return;
      clearInterval(gate);
      listen();
    }, 20);
  }
} else {
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url) });
  // A configured upstream (never called here): no sandbox is started.
  const { config } = await resolveStart(BACKENDS);
  void runPrimary(BACKENDS, config, undefined, 2);
}

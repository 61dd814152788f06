/** Process entry of the gateway: the core (src/server.ts) with the registered backends. */
import { BACKENDS } from '../mappings/index.js';
import { runGateway } from '../src/server.js';

runGateway(BACKENDS);

import type { FastifyBaseLogger } from 'fastify';
import { createWhmcsBackend } from '../../mappings/whmcs/backend.js';
import type { ResolvedConfig } from '../config.js';
import type { Backend } from './backend.js';

/** The configured upstream's mapping module. WHMCS is the one backend today. */
export function createBackend(config: ResolvedConfig, log: FastifyBaseLogger): Backend {
  switch (config.upstream.backend) {
    case 'whmcs':
      return createWhmcsBackend(config.upstream.whmcs, { logger: log });
  }
}

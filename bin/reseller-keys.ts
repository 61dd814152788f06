#!/usr/bin/env node
/** Entry of the key CLI (src/cli/keys.ts) with the registered backends, whose config it reads. */
import { BACKENDS } from '../mappings/index.js';
import { runKeysCli } from '../src/cli/keys.js';

runKeysCli(BACKENDS);

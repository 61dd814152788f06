#!/usr/bin/env node
/** Entry of the upstream self-checks (src/cli/doctor.ts) with the registered backends. */
import { BACKENDS } from '../mappings/index.js';
import { runDoctorCli } from '../src/cli/doctor.js';

runDoctorCli(BACKENDS);

import { describeSmokeRun, SMOKE_CASES } from './smoke-run.js';

/** STRESS (npm run test:stress): the smoke run's seeds that npm test leaves out (smoke.test.ts runs 0–11). */
describeSmokeRun(12, SMOKE_CASES);

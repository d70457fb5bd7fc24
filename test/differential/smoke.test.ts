import { describeSmokeRun } from './smoke-run.js';

/** The first 12 of the smoke run's fixed seeds; smoke.stress.test.ts runs the other 28. */
describeSmokeRun(0, 12);

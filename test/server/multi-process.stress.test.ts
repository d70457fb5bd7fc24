import { describeConcurrentUpdates } from './concurrent-updates.js';

/** STRESS (npm run test:stress): issue 6's figure, 300 concurrent updates; npm test fires 60. */
describeConcurrentUpdates(300);

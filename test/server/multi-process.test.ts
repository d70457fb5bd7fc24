import { describeConcurrentUpdates } from './concurrent-updates.js';

describeConcurrentUpdates(60);

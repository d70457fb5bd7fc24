import { openDatabase } from '../../../src/store/open-store.js';
import { ProjectTables } from '../../../src/store/tables/index.js';

/**
 * Run by load-kill.test.ts, which SIGKILLs it mid-load: loads the file argv[4] (a FIFO the test
 * feeds) with the manifest argv[5] into the store argv[2] as project argv[3].
 */
const [store, projectId, file, manifest] = process.argv.slice(2);
const db = await openDatabase(store);
await new ProjectTables(db, Number(projectId)).load(file, JSON.parse(manifest));
await db.close();
process.stdout.write('loaded\n');

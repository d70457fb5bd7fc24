import type { Database, TransactionExecutor } from './database.js';

/**
 * `db` as seen from inside one of its transactions (`tx`): every statement runs in `tx`, and a
 * `transaction()` asked for by the code given this database joins `tx` instead of starting its
 * own. So operations that each take a transaction (the store's create, update, …) compose into one
 * unit that the outer transaction commits or rolls back as a whole.
 */
export function joinedTransaction(db: Database, tx: TransactionExecutor): Database {
  return {
    dialect: db.dialect,
    all: (sql, params) => tx.all(sql, params),
    get: (sql, params) => tx.get(sql, params),
    run: (sql, params) => tx.run(sql, params),
    // inside the transaction, on its connection (another could not see its uncommitted rows)
    runLarge: (sql, params) => tx.run(sql, params),
    transaction: (work) => work(tx),
    // nothing of the unit is committed yet: readers must not cache what they derive from it
    changeMarker: async () => null,
    close: () =>
      Promise.reject(new Error('a joined transaction belongs to its outer transaction and is not closed on its own')),
  };
}

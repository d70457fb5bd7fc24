import { fromPlain, type JsonValue } from '../../src/json/index.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';

/** A state whose stored JSON text is `bytes` long: `{"component":{"pad":"xxx…"}}`. */
export function stateOfSize(bytes: number): JsonValue {
  const frame = '{"component":{"pad":""}}'.length;
  return fromPlain({ component: { pad: 'x'.repeat(bytes - frame) } });
}

/**
 * Makes the database itself refuse any update of one row's state (a trigger): a fault in the middle
 * of a transaction that has already written other rows.
 */
export async function failStateUpdatesOf(backend: EmbeddedBackend, rowId: string): Promise<void> {
  const id = rowId.replace(/'/g, "''");
  if (backend.db.dialect.name === 'sqlite') {
    await backend.db.run(
      `CREATE TRIGGER fail_state BEFORE UPDATE OF state ON configuration_rows WHEN NEW.id = '${id}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    );
  } else {
    await backend.db.run(
      `CREATE FUNCTION fail_state() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.id = '${id}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`,
    );
    await backend.db.run(
      'CREATE TRIGGER fail_state BEFORE UPDATE OF state ON configuration_rows FOR EACH ROW EXECUTE FUNCTION fail_state()',
    );
  }
}

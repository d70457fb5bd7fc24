import assert from 'node:assert/strict';
import { numberPlaceholders } from '../../../src/store/sql/placeholders.js';
import {
  isRetryableConflict,
  isUnavailable,
  isUniqueViolation,
  unavailableReason,
} from '../../../src/store/sql/postgres-errors.js';
import {
  displayLocation,
  isPostgresStore,
  keyFileFor,
  postgresOptionsFromEnv,
} from '../../../src/store/store-location.js';

describe('PostgreSQL adapter pieces', () => {
  describe('numberPlaceholders', () => {
    it('numbers ? in order and leaves quoted text and comments alone', () => {
      assert.equal(
        numberPlaceholders('SELECT * FROM t WHERE a = ? AND b IN (?, ?)'),
        'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)',
      );
      assert.equal(
        numberPlaceholders("SELECT '?', 'it''s ?', \"odd?col\" FROM t WHERE x = ? -- why?\nAND y = ?"),
        "SELECT '?', 'it''s ?', \"odd?col\" FROM t WHERE x = $1 -- why?\nAND y = $2",
      );
      assert.equal(numberPlaceholders('SELECT 1'), 'SELECT 1');
    });
  });

  describe('error classes', () => {
    it('tells unique violations, retryable aborts and unavailability apart', () => {
      assert.ok(isUniqueViolation({ code: '23505' }));
      assert.ok(!isUniqueViolation({ code: '23503' }));
      assert.ok(isRetryableConflict({ code: '40P01' }) && isRetryableConflict({ code: '40001' }));
      for (const e of [
        { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
        { code: '57P01', message: 'terminating connection due to administrator command' },
        { code: '08006', message: 'connection failure' },
        { code: '3D000', message: 'database "nope" does not exist' },
        new Error('timeout exceeded when trying to connect'),
        new Error('Connection terminated unexpectedly'),
        new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })]),
      ]) {
        assert.ok(isUnavailable(e), JSON.stringify(e));
      }
      assert.ok(!isUnavailable({ code: '42P01', message: 'relation "x" does not exist' }), 'a bug is not an outage');
      assert.ok(!isUnavailable({ code: '23505', message: 'duplicate key' }));
      assert.match(
        unavailableReason({ code: '57014', message: 'canceling statement due to statement timeout' }),
        /did not answer in time/,
      );
    });
  });

  describe('store locations', () => {
    it('recognises postgres:// and postgresql:// and hides passwords', () => {
      assert.ok(
        isPostgresStore('postgres://u@h/db') &&
          isPostgresStore('postgresql://u@h:5433/db') &&
          isPostgresStore('POSTGRES://h/db'),
      );
      assert.ok(!isPostgresStore('store.sqlite') && !isPostgresStore('https://x'));
      assert.equal(
        displayLocation('postgres://u:pw@h:5432/db?sslmode=require'),
        'postgres://u:***@h:5432/db?sslmode=require',
      );
      assert.equal(displayLocation('postgresql://h/db?password=pw'), 'postgresql://h/db?password=***');
      assert.equal(displayLocation('dir/store.sqlite'), 'dir/store.sqlite');
    });

    it('puts the key file of a PostgreSQL store in the user config folder unless GEX_KEY_FILE names one', () => {
      assert.equal(keyFileFor('postgres://h/db', { XDG_CONFIG_HOME: '/cfg' }), '/cfg/gex/master.key');
      assert.equal(keyFileFor('postgres://h/db', { GEX_KEY_FILE: '/keys/gex.key' }), '/keys/gex.key');
      assert.equal(keyFileFor('/data/store.sqlite', {}), '/data/store.sqlite.key');
    });

    it('reads pool size and timeouts from GEX_PG_* and refuses nonsense', () => {
      assert.deepEqual(postgresOptionsFromEnv({ GEX_PG_POOL_SIZE: '4', GEX_PG_STATEMENT_TIMEOUT_MS: '5000' }), {
        poolSize: 4,
        statementTimeoutMs: 5000,
      });
      assert.deepEqual(postgresOptionsFromEnv({}), {});
      assert.throws(
        () => postgresOptionsFromEnv({ GEX_PG_POOL_SIZE: '0' }),
        /GEX_PG_POOL_SIZE must be a whole number above 0/,
      );
    });
  });
});

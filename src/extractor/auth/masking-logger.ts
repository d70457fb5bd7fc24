import type { Logger } from '../../common/logger.js';
import type { SecretMasker } from '../../common/secret-masker.js';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/**
 * The logger with every string argument, and every field of an object argument or of a child's
 * bindings, passed through `masker` first. Used when the caller of
 * `extract()` gives no masker of its own (its logger then cannot know the secrets obtained at run
 * time); with the run's masker the logger's own sink hides them and no wrapping is needed.
 */
export function maskingLogger(logger: Logger, masker: SecretMasker): Logger {
  return new Proxy(logger, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property === 'string' && LEVELS.has(property)) {
        return (...args: unknown[]) => method.apply(target, args.map((a) => masker.maskPlain(a)));
      }
      if (property === 'child') return (...args: unknown[]) => maskingLogger(method.apply(target, args.map((a) => masker.maskPlain(a))) as Logger, masker);
      return method.bind(target);
    },
  });
}

import type { Logger } from '../../common/logger.js';
import type { SecretMasker } from '../../common/secret-masker.js';

/**
 * The logger with `masker`'s secrets hidden in every line too (fields, bindings, error messages and
 * stacks: the writer masks the finished line). Used when the caller of `extract()` gives no masker
 * of its own (its logger then cannot know the secrets obtained at run time); with the run's masker
 * the logger hides them already and no extra masker is needed.
 */
export function maskingLogger(logger: Logger, masker: SecretMasker): Logger {
  return logger.child({}, { masker });
}

import { ConfigError } from '../../common/errors.js';
import { isJsonObject, phpEmpty, phpToString, type JsonValue } from '../../php-compat/index.js';
import { NoPagination } from './no-pagination.js';
import { OffsetPaginator, offsetSettings } from './offset.js';
import { PaginationOptions } from './options.js';
import { PageNumberPaginator, pageNumberSettings } from './page-number.js';
import type { Paginator } from './paginator.js';

const METHODS = ['pagenum', 'offset'];

/** The paginator for `api.pagination` (a fresh one per top-level job). */
export function createPaginator(config: JsonValue | undefined, path = 'parameters.api.pagination', scroller: string | null = null): Paginator {
  void scroller; // the scroller a job picks for `multiple` pagination
  if (phpEmpty(config) || !isJsonObject(config)) return new NoPagination();
  const method = phpToString(config.get('method'));
  if (method === '') return new NoPagination();
  const options = new PaginationOptions(config, path);
  switch (method) {
    case 'pagenum':
      return new PageNumberPaginator(pageNumberSettings(options), path);
    case 'offset':
      return new OffsetPaginator(offsetSettings(options), path);
    default:
      throw new ConfigError(`${path}.method`, `pagination method '${method}' is not supported`, `Use one of ${METHODS.join(', ')}`);
  }
}

import { ConfigError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { phpEmpty, phpJsonEncode, phpToString } from '../../php/index.js';
import { CursorPaginator, cursorSettings } from './cursor.js';
import { refuseTotalFor, TOTAL_METHODS, TotalWarning } from './first-page-total.js';
import { MultiplePaginator } from './multiple.js';
import { NoPagination } from './no-pagination.js';
import { OffsetPaginator, offsetSettings } from './offset.js';
import { PaginationOptions } from './options.js';
import { PageNumberPaginator, pageNumberSettings } from './page-number.js';
import type { Paginator } from './paginator.js';
import { ResponseParamPaginator, responseParamSettings } from './response-param.js';
import { ResponseUrlPaginator, responseUrlSettings } from './response-url.js';
import { ForceStop, forceStopSettings } from './stop-conditions/force-stop.js';
import { LimitStop, limitStopSettings } from './stop-conditions/limit-stop.js';
import { NextPageFlag, nextPageFlagSettings } from './stop-conditions/next-page-flag.js';
import { ZendeskResponseUrlPaginator } from './zendesk-response-url.js';

/**
 * The paginator for `api.pagination` (a fresh one per top-level job; `scroller` is that job's
 * `scroller` key, read by `multiple`). `warn` gets the one warning about an unusable total
 * (totalPath, totalPagesPath) of the job and its children.
 */
export function createPaginator(
  config: JsonValue | undefined,
  path = 'parameters.api.pagination',
  scroller: string | null = null,
  warn: (message: string) => void = () => undefined,
): Paginator {
  if (phpEmpty(config) || !isJsonObject(config)) return new NoPagination();
  return build(new PaginationOptions(config, path), { scroller, warning: new TotalWarning(warn) });
}

/** What every method of one paginator shares. */
interface BuildContext {
  scroller: string | null;
  warning: TotalWarning;
}

/**
 * A method wrapped in its stop conditions, as GE's ScrollerFactory does — also without a method,
 * and for each scroller of `multiple`. Innermost first: nextPageFlag, forceStop, limitStop; the
 * outermost is asked first for the next page.
 */
function build(options: PaginationOptions, context: BuildContext): Paginator {
  let paginator = createMethod(options, context);
  const flag = options.nested('nextPageFlag', 'It looks like {"field": "hasMore", "stopOn": false}');
  if (flag) paginator = new NextPageFlag(paginator, nextPageFlagSettings(flag));
  const force = options.nested('forceStop', 'It looks like {"pages": 100}');
  if (force) paginator = new ForceStop(paginator, forceStopSettings(force));
  const limit = options.nested('limitStop', 'It looks like {"count": 1000} or {"field": "total"}');
  if (limit) paginator = new LimitStop(paginator, limitStopSettings(limit));
  return paginator;
}

/**
 * The pagination methods by `method`: the one list of them (the schema's enum and the error for an
 * unknown method read it). `multiple` builds its scrollers with `build`, stop conditions included.
 */
const PAGINATION_METHODS = {
  pagenum: (options: PaginationOptions, context: BuildContext): Paginator =>
    new PageNumberPaginator(pageNumberSettings(options), options.path, context.warning),
  offset: (options: PaginationOptions, context: BuildContext): Paginator =>
    new OffsetPaginator(offsetSettings(options), options.path, context.warning),
  'response.url': (options: PaginationOptions): Paginator =>
    new ResponseUrlPaginator(responseUrlSettings(options, { withDelimiter: true })),
  'response.param': (options: PaginationOptions): Paginator =>
    new ResponseParamPaginator(responseParamSettings(options)),
  cursor: (options: PaginationOptions): Paginator => new CursorPaginator(cursorSettings(options)),
  multiple: (options: PaginationOptions, context: BuildContext): Paginator => createMultiple(options, context),
  'zendesk.response.url': (options: PaginationOptions): Paginator =>
    new ZendeskResponseUrlPaginator(responseUrlSettings(options, { withDelimiter: false })),
};

type PaginationMethod = keyof typeof PAGINATION_METHODS;

export const PAGINATION_METHOD_NAMES = Object.keys(PAGINATION_METHODS) as PaginationMethod[];

function createMethod(options: PaginationOptions, context: BuildContext): Paginator {
  const method = options.raw.get('method');
  if (phpEmpty(method)) {
    refuseTotalFor(options, method);
    return new NoPagination();
  }
  const create =
    typeof method === 'string' && Object.hasOwn(PAGINATION_METHODS, method)
      ? PAGINATION_METHODS[method as PaginationMethod]
      : undefined;
  if (!create) {
    const name = typeof method === 'string' ? method : phpJsonEncode(method!);
    throw new ConfigError(
      options.at('method'),
      `unknown pagination method '${name}'`,
      `Use one of ${PAGINATION_METHOD_NAMES.join(', ')}`,
    );
  }
  if (!TOTAL_METHODS.includes(method as string)) refuseTotalFor(options, method);
  return create(options, context);
}

function createMultiple(options: PaginationOptions, context: BuildContext): Paginator {
  const definitions = options.nested(
    'scrollers',
    'It maps names to pagination configs, e.g. {"list": {"method": "offset", "limit": 100}}',
  );
  if (!definitions) {
    throw new ConfigError(
      options.at('scrollers'),
      'needs at least one scroller for "multiple" pagination',
      'Add e.g. {"list": {"method": "offset", "limit": 100}}',
    );
  }
  const scrollers = new Map<string, Paginator>();
  for (const [name, value] of definitions.raw) {
    const fix = 'A scroller is a pagination config, e.g. {"method": "pagenum"}';
    if (!isJsonObject(value) && !Array.isArray(value))
      throw new ConfigError(definitions.at(name), 'must be an object', fix);
    const definition = definitions.nested(name, fix);
    scrollers.set(name, definition ? build(definition, context) : new NoPagination());
  }
  const defaultName = options.raw.get('default');
  return new MultiplePaginator(
    scrollers,
    phpEmpty(defaultName) ? null : phpToString(defaultName),
    context.scroller,
    options.path,
  );
}

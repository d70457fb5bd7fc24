import { ConfigError } from '../../../common/errors.js';
import { isJsonObject } from '../../../json/index.js';
import { phpBool, phpJsonEncode } from '../../../php/index.js';
import { describeValue, type PaginationOptions } from '../options.js';
import { Stop, type Paginator, type ReceivedPage } from '../paginator.js';
import { StopCondition } from './stop-condition.js';

export interface NextPageFlagSettings {
  /** a top-level property of the response (a name, not a path) */
  field: string;
  /** the flag value that means "this is the last page" */
  stopOn: boolean;
  /** the flag value assumed when the property is absent or null */
  ifNotSet: boolean;
}

export function nextPageFlagSettings(options: PaginationOptions): NextPageFlagSettings {
  const field = options.required(
    'field',
    'Set the response property that tells whether more pages follow, e.g. "hasMore"',
  );
  const stopOn = options.raw.get('stopOn');
  if (typeof stopOn !== 'boolean') {
    const problem =
      stopOn === undefined || stopOn === null ? 'is required' : `must be true or false, got ${describeValue(stopOn)}`;
    throw new ConfigError(
      options.at('stopOn'),
      problem,
      `Set the value of "${field}" on the last page: true or false, without quotes`,
    );
  }
  const ifNotSet = options.raw.get('ifNotSet');
  if (ifNotSet !== undefined && ifNotSet !== null && typeof ifNotSet !== 'boolean') {
    throw new ConfigError(
      options.at('ifNotSet'),
      `must be true or false, got ${describeValue(ifNotSet)}`,
      `Set the value assumed when "${field}" is missing, without quotes`,
    );
  }
  return { field, stopOn, ifNotSet: typeof ifNotSet === 'boolean' ? ifNotSet : stopOn };
}

/**
 * `nextPageFlag`: stops when the response's flag property, cast to a PHP bool, equals `stopOn`
 * (`"no"` is true!). A missing or null property — or a response that is a list — counts as
 * `ifNotSet`.
 */
export class NextPageFlag extends StopCondition {
  constructor(
    inner: Paginator,
    readonly settings: NextPageFlagSettings,
  ) {
    super(inner);
  }

  protected label(): string {
    const { field, stopOn, ifNotSet } = this.settings;
    return `nextPageFlag (stop when ${field} is ${stopOn}, missing = ${ifNotSet})`;
  }

  protected around(inner: Paginator): Paginator {
    return new NextPageFlag(inner, this.settings);
  }

  protected stopFor(page: ReceivedPage): Stop | null {
    const reason = this.reason(page);
    return reason === null ? null : new Stop(reason, 'nextPageFlag');
  }

  private reason(page: ReceivedPage): string | null {
    const { field, stopOn, ifNotSet } = this.settings;
    const value = isJsonObject(page.response) ? page.response.get(field) : undefined;
    if (value === undefined || value === null) {
      return ifNotSet === stopOn ? `nextPageFlag: ${field} is not set, which counts as ${ifNotSet}` : null;
    }
    // response objects are never empty in PHP, hence objectsAreArrays = false
    const flag = phpBool(value, false);
    if (flag !== stopOn) return null;
    return typeof value === 'boolean'
      ? `nextPageFlag: ${field} is ${value}`
      : `nextPageFlag: ${field} is ${phpJsonEncode(value)}, which counts as ${flag}`;
  }
}

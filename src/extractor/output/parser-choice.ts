import type { JsonValue } from '../../json/index.js';
import { phpEmpty } from '../../php/index.js';
import type { StructState } from './record-parser.js';

export interface ParserChoice {
  kind: 'json' | 'legacy';
  /** the structure to seed the parser with */
  seed: JsonValue | undefined;
  /** what GE logs as a warning about the choice */
  warning?: string;
}

/**
 * Which JSON parser a new bucket parser is (juicer `Json::__construct`, docs/ge-behaviour.md#which-parser-runs): a
 * saved structure decides first — version identical to the integer 2 means the legacy parser,
 * anything else the new one (a compatLevel ≤ 1 request is then ignored) — otherwise
 * compatLevel ≤ 1 asks for the legacy parser.
 */
export function chooseParser(state: StructState | undefined, compatLevel: number): ParserChoice {
  const struct = state?.struct;
  const hasStruct = (Array.isArray(struct) || struct instanceof Map) && !phpEmpty(struct) && !phpEmpty(state?.version);
  if (hasStruct) {
    // `=== 2`: the int from a state file, not the float 2.0 the legacy parser leaves in memory
    if (state!.version === 2)
      return {
        kind: 'legacy',
        seed: struct,
        warning: 'Using legacy JSON parser, because it is in configuration state.',
      };
    return {
      kind: 'json',
      seed: struct,
      warning:
        compatLevel <= 1
          ? 'Ignored request for legacy JSON parser, because configuration is already upgraded.'
          : undefined,
    };
  }
  if (compatLevel <= 1)
    return {
      kind: 'legacy',
      seed: undefined,
      warning: 'Using legacy JSON parser, because it has been explicitly requested.',
    };
  return { kind: 'json', seed: undefined };
}

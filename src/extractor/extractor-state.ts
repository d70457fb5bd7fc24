import { decodeJson, isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { phpEmpty, phpIntCast, phpJsonEncode } from '../php/index.js';
import { STRUCT_VERSION } from './output/json-parser/json-parser.js';
import { StructState } from './output/record-parser.js';

/**
 * The extractor's state, as Generic Extractor keeps it in its state file (docs/ge-behaviour.md#state).
 * This is its one owner: what a run reads from the input state (`time.previousStart`, the parser
 * structure) and the state it leaves (the input with this run's start and the structure its parsers
 * learned).
 */
export class ExtractorState {
  constructor(
    private readonly input: JsonObject,
    /** unix seconds of this run's start */
    readonly startSeconds: number,
  ) {}

  /** The `time` context of user functions: `previousStart` of the input state (0 when empty) and this run's start. */
  timeContext(): Map<string, JsonValue> {
    const time = this.input.get('time');
    const previous = isJsonObject(time) ? time.get('previousStart') : undefined;
    return new Map<string, JsonValue>([
      ['previousStart', phpEmpty(previous) ? 0 : phpIntCast(previous)],
      ['currentStart', this.startSeconds],
    ]);
  }

  /**
   * `json_parser.struct` of the input, or undefined; its version is null when the input has none
   * (a structure counts only with a version, and version 2 selects the legacy parser).
   */
  inputStruct(): StructState | undefined {
    const struct = this.input.get('json_parser.struct');
    return struct === undefined
      ? undefined
      : new StructState(struct, this.input.get('json_parser.structVersion') ?? null);
  }

  /**
   * The state this run leaves: the input, `time.previousStart` = this run's start, and the parser
   * structure — the output writer's, already merged over the input's (a plain value is a
   * version-3 structure; undefined keeps the input's parser keys, as with mappings).
   * `hideSecrets` masks secrets an API echoed into it. The value is the one a reader of the state
   * file gets back (an empty object is a list there, as PHP writes it).
   */
  output(
    parserState: JsonValue | StructState | undefined,
    hideSecrets: (state: JsonValue) => JsonValue = (state) => state,
  ): JsonObject {
    const state: JsonObject = new Map(this.input);
    const time = state.get('time');
    const newTime: JsonObject = isJsonObject(time) ? new Map(time) : new Map();
    newTime.set('previousStart', this.startSeconds);
    newTime.delete('currentStart');
    state.set('time', newTime);
    if (parserState !== undefined) {
      const { struct, version } =
        parserState instanceof StructState ? parserState : new StructState(parserState, STRUCT_VERSION);
      state.set('json_parser.struct', struct);
      state.set('json_parser.structVersion', version);
    }
    return decodeJson(stateFileText(hideSecrets(state))) as JsonObject;
  }
}

/** The text of a state file as Generic Extractor writes it (PHP's json_encode of an array). */
export function stateFileText(state: JsonValue): string {
  return phpJsonEncode(state, { objectsAreArrays: true });
}

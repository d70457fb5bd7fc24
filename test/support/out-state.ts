import { ExtractorState, stateFileText } from '../../src/extractor/extractor-state.js';
import type { StructState } from '../../src/extractor/output/record-parser.js';
import type { JsonObject, JsonValue } from '../../src/json/index.js';

/** The state file a run starting at `startSeconds` leaves, given the input state and its parser structure. */
export function outStateText(
  input: JsonObject,
  startSeconds: number,
  parserState: JsonValue | StructState | undefined,
): string {
  return stateFileText(new ExtractorState(input, startSeconds).output(parserState));
}

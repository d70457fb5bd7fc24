import { readFile } from 'node:fs/promises';
import type { FixtureHandler, FixtureResponse, RecordedRequest } from './fixture-server.js';

/**
 * Recorded exchanges (`exchanges.json` of a fixture folder): each item names a request line
 * (`"GET /users?page=1"`, optionally a body) and the response to send.
 */
export interface RecordedExchange extends FixtureResponse {
  request: string;
  requestBody?: string;
}

export async function loadExchanges(file: string): Promise<RecordedExchange[]> {
  return JSON.parse(await readFile(file, 'utf8')) as RecordedExchange[];
}

export function replayExchanges(exchanges: RecordedExchange[]): FixtureHandler {
  return (request: RecordedRequest) =>
    exchanges.find(
      (ex) =>
        ex.request === `${request.method} ${request.url}` &&
        (ex.requestBody === undefined || ex.requestBody === request.body),
    );
}

import assert from 'node:assert/strict';
import type { NewJob } from '../../src/jobs/job-record.js';
import type { TokenInfo } from '../../src/store/types.js';
import { call } from './queue.js';

export const GENERIC_CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
export const flowConfigs = (component: string) => `/v2/storage/branch/default/components/${component}/configs`;

/**
 * One ex-generic-v2 configuration per tag: one request to `${apiUrl}/v1/users?tag=<tag>` (a local
 * API tells the tags apart), tables into `<bucketPrefix>-<tag>`; the ids by tag.
 */
export async function tagConfigs(
  url: string,
  token: string,
  apiUrl: string,
  tags: readonly string[],
  bucketPrefix: string,
): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const tag of tags) {
    const configuration = {
      parameters: {
        api: { baseUrl: `${apiUrl}/v1/` },
        config: {
          outputBucket: `${bucketPrefix}-${tag}`,
          jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }],
        },
      },
    };
    const created = await call(url, token, 'POST', GENERIC_CONFIGS, { name: tag, configuration });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    ids[tag] = String(created.body.id);
  }
  return ids;
}

/** A stored flow configuration of `component`; its id. */
export async function storeFlow(
  url: string,
  token: string,
  component: string,
  configuration: unknown,
  name = 'flow',
): Promise<string> {
  const made = await call(url, token, 'POST', flowConfigs(component), { name, configuration });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return String(made.body.id);
}

/** A run of ex-generic-v2 configuration `configId` as the token asks for it (JobRepository.create's input). */
export function runRequest(token: TokenInfo, configId: string, more: Partial<NewJob> = {}): NewJob {
  return {
    projectId: token.projectId,
    componentId: 'ex-generic-v2',
    configId,
    branchId: '1',
    mode: 'run',
    parentRunId: '',
    tokenId: token.id,
    tokenDescription: token.description,
    configRowIds: [],
    tag: null,
    orchestrationJobId: null,
    timeoutSeconds: null,
    ...more,
  };
}

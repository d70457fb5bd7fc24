import type { FastifyInstance } from 'fastify';
import { excerptId } from '../../common/log-text.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** `GET /v2/storage/jobs/{id}`: the Storage jobs of the token's project (another project's are not found). */
export function storageJobRoutes(app: FastifyInstance): void {
  app.get<{ Params: { jobId: string } }>('/jobs/:jobId', async (request, reply) => {
    const text = request.params.jobId;
    const job = /^\d{1,15}$/.test(text) ? await sessionOf(request).storageJobs.get(Number(text)) : undefined;
    if (!job) {
      throw new StoreError(
        404,
        KEBOOLA_ERRORS.jobsNotFound.code,
        `Job ${excerptId(text)} not found. gex keeps a finished job for a day after the request that created it.`,
      );
    }
    return reply.code(200).header('content-type', 'application/json').send(Buffer.from(job.body));
  });
}

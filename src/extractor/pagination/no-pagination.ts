import { Stop, type PageRequest, type Paginator } from './paginator.js';

/** Without `api.pagination` a job sends exactly one request. */
export class NoPagination implements Paginator {
  describe(): string {
    return 'no pagination';
  }
  first(job: PageRequest): PageRequest {
    return job;
  }
  next(): Stop {
    return new Stop('no pagination is configured', 'noPagination');
  }
  reset(): void {}
  clone(): Paginator {
    return new NoPagination();
  }
}

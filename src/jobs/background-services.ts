/** One thing a long-running gex process (serve, worker) runs in the background. */
export interface BackgroundService {
  /** what it is called in a failure's message */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The lifecycle of a process's background services: started one after another in their order,
 * stopped in the reverse one (what a service uses is started before it and stopped after it). A
 * start that fails stops the services already started, then throws.
 */
export class BackgroundServices {
  private readonly started: BackgroundService[] = [];

  constructor(private readonly services: readonly BackgroundService[]) {}

  async start(): Promise<void> {
    for (const service of this.services) {
      try {
        await service.start();
      } catch (error) {
        await this.stop().catch(() => undefined);
        throw error;
      }
      this.started.push(service);
    }
  }

  /** Stops every started service (each once), the last started first; throws the first failure after all stopped. */
  async stop(): Promise<void> {
    const failures: unknown[] = [];
    for (let service; (service = this.started.pop());) {
      try {
        await service.stop();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
  }
}

/**
 * The test webhook receiver in a process of its own (a recipient is another machine: its work is
 * not the sender's). Tells its parent its URL, then every 10 ms the POSTs received since:
 * delivery id, job id, when. `{ delayMs }` from the parent sets how long it waits to answer.
 */
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';

export interface Receipt {
  deliveryId: string;
  jobId: string;
  at: number;
}

const receiver = await startWebhookReceiver();
const flush = () => {
  if (receiver.received.length === 0) return;
  // the bodies are not kept: 30,000 of them are not needed
  const receipts: Receipt[] = receiver.received.splice(0).map((r) => ({
    deliveryId: String(r.headers['x-gex-delivery-id']),
    jobId: String((JSON.parse(r.body) as { job: { id: string } }).job.id),
    at: r.at,
  }));
  process.send!({ receipts });
};
setInterval(flush, 10);
process.on('message', (message: { delayMs?: number }) => {
  if (typeof message.delayMs === 'number') receiver.delayMs = message.delayMs;
});
process.on('disconnect', () => {
  void receiver.close().then(() => process.exit(0));
});
process.send!({ url: receiver.url });

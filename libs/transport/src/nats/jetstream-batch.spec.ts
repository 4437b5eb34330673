import { connect, nanos, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { ACK_TIMEOUT_MS, JetStreamBatch } from './jetstream-batch';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const data = (text: string) => new TextEncoder().encode(text);

describe('JetStreamBatch: publishes to JetStream with one inbox for the acks (the NATS on this machine)', () => {
  let nc: NatsConnection;
  const id = randomUUID().slice(0, 8);
  const stream = `BATCH_${id.toUpperCase()}`;
  const subject = (rest: string) => `batch${id}.${rest}`;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({
      name: stream,
      subjects: [`batch${id}.>`],
      duplicate_window: nanos(60_000),
      max_msg_size: 1_024,
    });
  });
  afterAll(async () => {
    await (await nc.jetstreamManager()).streams.delete(stream);
    await nc.close();
  });

  it('resolves each ack with its sequence, in the order sent, and marks a repeated message id a duplicate', async () => {
    const batch = new JetStreamBatch(nc);
    const acks = await Promise.all([
      batch.publish(subject('a'), data('one'), `${id}-1`),
      batch.publish(subject('b'), data('two'), `${id}-2`),
      batch.publish(subject('a'), data('one again'), `${id}-1`),
    ]);
    batch.close();
    expect(acks.map((a) => a.stream)).toEqual([stream, stream, stream]);
    expect(acks[1].seq).toBe(acks[0].seq + 1);
    expect(acks.map((a) => Boolean(a.duplicate))).toEqual([false, false, true]);
    const info = await (await nc.jetstreamManager()).streams.info(stream);
    expect(info.state.messages).toBe(2);
  });

  it('rejects what JetStream refuses with its API error, a subject no stream takes with 503, and goes on with the rest', async () => {
    const batch = new JetStreamBatch(nc);
    // The server answers "no responders" itself and the stream answers the others: the replies
    // may come in any order, so all three are awaited together.
    const [tooLarge, nowhere, fine] = await Promise.allSettled([
      batch.publish(subject('big'), data('x'.repeat(2_000)), `${id}-big`),
      batch.publish(`nostream${id}.x`, data('lost'), `${id}-nowhere`),
      batch.publish(subject('after'), data('after'), `${id}-after`),
    ]);
    batch.close();
    expect(tooLarge).toMatchObject({ status: 'rejected', reason: { api_error: { err_code: 10054 } } });
    expect(nowhere).toMatchObject({ status: 'rejected', reason: { code: '503' } });
    expect(fine).toMatchObject({ status: 'fulfilled', value: { stream } });
  });

  it('rejects a message over the connection max_payload without sending it', async () => {
    const batch = new JetStreamBatch(nc);
    const huge = new Uint8Array(nc.info!.max_payload + 1);
    await expect(batch.publish(subject('huge'), huge, `${id}-huge`)).rejects.toMatchObject({
      code: 'MAX_PAYLOAD_EXCEEDED',
    });
    batch.close();
  });

  it('fails an ack that does not come in time, and every ack still awaited when the batch closes', async () => {
    // A plain subscriber takes the subject and never answers, as a stream gone quiet would.
    const silent = nc.subscribe(`quiet${id}.>`);
    const batch = new JetStreamBatch(nc, 100);
    const started = Date.now();
    await expect(batch.publish(`quiet${id}.x`, data('?'), `${id}-quiet`)).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(Date.now() - started).toBeLessThan(ACK_TIMEOUT_MS);

    const other = new JetStreamBatch(nc);
    const waiting = other.publish(`quiet${id}.y`, data('?'), `${id}-quiet-2`);
    other.close();
    await expect(waiting).rejects.toMatchObject({ code: 'CLOSED' });
    silent.unsubscribe();
    batch.close();
  });
});

import { expect } from 'chai';
import { MessageSink } from '../../src/message-sink.js';

describe("message sink: one WebSocket message's answer, collected (message-sink.ts)", () => {
  const sink = (cap = 16) => {
    const delivered: Array<string | undefined> = [];
    const events: string[] = [];
    const made = new MessageSink((answer) => delivered.push(answer?.toString()), cap);
    made.on('finish', () => events.push('finish')).on('close', () => events.push('close'));
    return { made, delivered, events };
  };

  it('delivers what was written, once, at the end, then finishes and closes', () => {
    const { made, delivered, events } = sink();
    made.writeHead(200);
    expect(made.write('{"a":')).to.equal(true);
    made.end('1}');
    made.end('again');
    expect(delivered).to.deep.equal(['{"a":1}']);
    expect(events).to.deep.equal(['finish', 'close']);
    expect([made.headersSent, made.writableFinished, made.destroyed]).to.deep.equal([true, true, false]);
  });

  it('cuts an answer past its cap: delivers nothing of it, tells the writer (destroyed), and closes', () => {
    const { made, delivered, events } = sink(4);
    expect(made.write('12345')).to.equal(false);
    made.end();
    expect(delivered).to.deep.equal([undefined]);
    expect(events).to.deep.equal(['close']);
    expect(made.destroyed).to.equal(true);
  });

  it('closes without delivering when destroyed first (the connection went)', () => {
    const { made, delivered, events } = sink();
    made.write('{');
    made.destroy();
    made.destroy();
    expect(delivered).to.deep.equal([]);
    expect(events).to.deep.equal(['close']);
  });
});

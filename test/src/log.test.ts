import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createLogger, describeError, LOG_LEVELS, type LogLevel } from '../../src/log.js';
import { within } from '../../support/within.js';

/** A logger at `level` writing into an array. */
function recording(level: LogLevel): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger(level, (line) => lines.push(line)), lines };
}

describe('log: one JSON object per line', () => {
  it('knows four levels, least severe first', () => {
    expect(LOG_LEVELS).to.deep.equal(['debug', 'info', 'warn', 'error']);
  });

  describe('levels', () => {
    // Row: the logger's level; columns: what it writes of debug, info, warn, error.
    const WRITTEN: Record<LogLevel, LogLevel[]> = {
      debug: ['debug', 'info', 'warn', 'error'],
      info: ['info', 'warn', 'error'],
      warn: ['warn', 'error'],
      error: ['error'],
    };
    for (const level of LOG_LEVELS) {
      it(`at ${level}, writes ${WRITTEN[level].join(', ')} and drops the rest`, () => {
        const { log, lines } = recording(level);
        for (const lvl of LOG_LEVELS) log[lvl](`a ${lvl} line`);
        expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).to.deep.equal(WRITTEN[level]);
      });
    }
  });

  describe('the line', () => {
    it('is time, level and msg, then the fields in their order, as one JSON object and a newline', () => {
      const { log, lines } = recording('info');
      const before = Date.now();
      log.warn('upstream slow', { method: 'eth_getLogs', elapsed_ms: 2_001, nested: { ok: false }, list: [1, 'x'] });
      const after = Date.now();
      expect(lines).to.have.length(1);
      const line = lines[0]!;
      expect(line.endsWith('\n')).to.equal(true);
      expect(line.indexOf('\n')).to.equal(line.length - 1);
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(entry)).to.deep.equal(['time', 'level', 'msg', 'method', 'elapsed_ms', 'nested', 'list']);
      const time = String(entry.time);
      expect(time).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(time)).to.be.within(before, after);
      expect({ ...entry, time: undefined }).to.deep.equal({
        time: undefined,
        level: 'warn',
        msg: 'upstream slow',
        method: 'eth_getLogs',
        elapsed_ms: 2_001,
        nested: { ok: false },
        list: [1, 'x'],
      });
    });

    it('keeps time, level and msg first and as logged whatever the fields are named', () => {
      const { log, lines } = recording('info');
      log.warn('refused', { msg: 'forged', level: 'debug', time: 'never', peer: '127.0.0.1' });
      const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(Object.keys(entry)).to.deep.equal(['time', 'level', 'msg', 'peer']);
      expect([entry.level, entry.msg, entry.time === 'never']).to.deep.equal(['warn', 'refused', false]);
    });

    it('writes a bigint field as its decimal string instead of throwing', () => {
      const { log, lines } = recording('info');
      log.info('judged', { head: 2n ** 64n, nested: { nonce: 7n } });
      expect(JSON.parse(lines[0]!)).to.deep.include({ head: '18446744073709551616', nested: { nonce: '7' } });
    });

    it('carries only time, level and msg when no fields are given, and escapes a newline in the message', () => {
      const { log, lines } = recording('debug');
      log.debug('two\nlines');
      expect(lines).to.have.length(1);
      expect(lines[0]!.split('\n')).to.have.length(2);
      const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(Object.keys(entry)).to.deep.equal(['time', 'level', 'msg']);
      expect(entry.msg).to.equal('two\nlines');
    });

    it('goes to stderr by default', async () => {
      const module = new URL('../../src/log.js', import.meta.url).href;
      const script = `import(${JSON.stringify(module)}).then((m) => m.createLogger('info').info('hello', { n: 1 }))`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const [code] = (await within(10_000, 'node exits', once(child, 'exit'))) as [number | null];
      expect(code).to.equal(0);
      expect(out).to.equal('');
      expect(err.endsWith('\n') && err.indexOf('\n') === err.length - 1).to.equal(true);
      expect({ ...(JSON.parse(err) as object), time: 0 }).to.deep.equal({ time: 0, level: 'info', msg: 'hello', n: 1 });
    });
  });

  describe('describeError', () => {
    it("gives an Error's message and stack", () => {
      const err = new TypeError('cannot read properties of undefined');
      expect(describeError(err)).to.deep.equal({ error: 'cannot read properties of undefined', stack: err.stack });
      expect(String(describeError(err).stack)).to.match(/^TypeError: cannot read properties of undefined\n {4}at /);
    });

    it('gives anything else thrown as its string, without a stack member', () => {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        ['plain text', 'plain text'],
        [42, '42'],
        [undefined, 'undefined'],
        [null, 'null'],
        [{ message: 'error-like' }, '[object Object]'],
      ];
      for (const [thrown, error] of cases) {
        const described = describeError(thrown);
        expect(described, String(thrown)).to.deep.equal({ error });
        expect(Object.keys(described)).to.deep.equal(['error']);
      }
    });

    it('puts both on the log line a bug is reported with', () => {
      const { log, lines } = recording('error');
      const err = new Error('boom');
      log.error('unexpected error while handling a request', { method: 'eth_call', ...describeError(err) });
      expect({ ...(JSON.parse(lines[0]!) as object), time: 0 }).to.deep.equal({
        time: 0,
        level: 'error',
        msg: 'unexpected error while handling a request',
        method: 'eth_call',
        error: 'boom',
        stack: err.stack,
      });
    });
  });
});

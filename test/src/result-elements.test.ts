import { expect } from 'chai';
import { resultElements } from '../../src/result-elements.js';

describe("result elements: a JSON-RPC answer's result array read in slices (result-elements.ts)", () => {
  it('gives each element as the text the EL wrote, whatever the key order, spacing, nesting and escapes', async () => {
    const logs = [
      { address: '0xaa', topics: ['0x01', '0x02'], data: '0x', removed: false },
      { address: '0xbb', topics: [], note: 'a "quoted" ]}, and \\ backslash', nested: { list: [[1], { x: ']' }] } },
    ];
    const compact = JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs });
    expect(await resultElements(compact)).to.deep.equal(logs.map((log) => JSON.stringify(log)));
    const spaced = JSON.stringify({ id: { result: ['not this one'] }, result: logs, jsonrpc: '2.0' }, null, 2);
    const elements = (await resultElements(spaced))!;
    expect(elements.map((e) => JSON.parse(e) as unknown)).to.deep.equal(logs);
    expect(elements[0]).to.equal(JSON.stringify(logs[0], null, 2).replace(/\n/g, '\n    '));
  });

  it('reads an empty list, and leaves anything else to a whole parse', async () => {
    expect(await resultElements('{"jsonrpc":"2.0","id":1,"result":[]}')).to.deep.equal([]);
    expect(await resultElements('{"jsonrpc":"2.0","id":1,"result":[ ]}')).to.deep.equal([]);
    expect(await resultElements('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"unknown block","result":[1]}}')).to.equal(
      undefined,
    );
    expect(await resultElements('{"jsonrpc":"2.0","id":1,"result":null}')).to.equal(undefined);
    expect(await resultElements('{"jsonrpc":"2.0","id":1,"result":[{"a":1}')).to.equal(undefined);
    expect(await resultElements('[{"result":[1]}]')).to.equal(undefined);
  });

  it('lets the event loop run between slices of a large answer', async () => {
    const logs = Array.from({ length: 20_000 }, (_, i) => ({
      address: `0x${i.toString(16).padStart(40, '0')}`,
      topics: [`0x${'ab'.repeat(32)}`],
    }));
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs });
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const elements = await resultElements(text);
    clearInterval(ticking);
    expect(elements).to.have.length(20_000);
    expect(elements![19_999]).to.equal(JSON.stringify(logs[19_999]));
    expect(text.length / (256 * 1024), `${text.length} chars`).to.be.above(8);
    expect(turns, 'timer turns while scanning').to.be.at.least(2);
  });
});

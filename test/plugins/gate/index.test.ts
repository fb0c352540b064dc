import { expect } from 'chai';
import { JsonRpcProvider, keccak256, parseEther, Transaction, Wallet, type TransactionRequest } from 'ethers';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { parseConfig } from '../../../src/config/load.js';
import { startIngressProcess, type IngressProcess } from '../../../support/child.js';
import { call, receiptOf, rpc } from '../../../support/http.js';
import { DEV_KEY, DEV_KEYS, walletFor } from '../../../support/keys.js';
import { startStubEl } from '../../../support/stub-el.js';
import { useAnvil } from '../../helpers/el.js';
import { PRODUCTION_PLUGINS, startTestIngress, testConfig, type TestIngress } from '../../helpers/ingress.js';
import { startTap, type Tap } from '../../helpers/tap.js';
import { startValidatingEl, type Validation, type ValidatingEl } from '../../helpers/validating-el.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const VECTOR = JSON.parse(readFileSync('test/protocol/mldsa65-vector.json', 'utf8')) as { sender: string; raw: string; hash: string };
const KEYS = DEV_KEYS.slice(1);

/** A signed type 0x02 transfer of `value` wei from `key` at `nonce`, within the gate's limits. */
const transferFrom = (key: string, nonce = 0, value = 1n) =>
  new Wallet(key).signTransaction({
    chainId: 8141,
    nonce,
    to: RECIPIENT,
    value,
    gasLimit: 21_000,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 0n,
    type: 2,
  });

const gateYaml = (options: string) => PRODUCTION_PLUGINS.replace('  - gate\n', `  - gate:\n${options}\n`);
const rejected = (id: unknown, reason: string, message: string, cached = false) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: { code: -32000, message: `rejected: ${message}`, data: cached ? { reason, cached } : { reason } },
  });

describe('gate', () => {
  const anvil = useAnvil();
  let tap: Tap;
  let ingress: TestIngress;
  let provider: JsonRpcProvider;

  before(async () => {
    tap = await startTap(anvil.current.url);
    ingress = await startTestIngress(testConfig(tap.url, gateYaml('      head_cache_ms: 0')));
    provider = new JsonRpcProvider(anvil.current.url, 8141, { staticNetwork: true, batchMaxCount: 1 });
  });
  after(async () => {
    provider.destroy();
    await ingress.shutdown();
    await tap.close();
  });
  beforeEach(() => {
    tap.bodies.length = 0;
  });

  const wallet = (key: string = DEV_KEY) => new Wallet(key, provider);
  // Read directly, not through ethers: its provider reuses an identical call's answer for 250 ms,
  // and anvil answers `pending` with a stale count once a block is mined.
  const nonceOf = async (address: string) => Number(await call<string>(anvil.current.url, 'eth_getTransactionCount', [address, 'latest']));
  const signed = async (w: Wallet, tx: TransactionRequest) =>
    w.signTransaction(
      await w.populateTransaction({
        to: RECIPIENT,
        value: 1n,
        maxPriorityFeePerGas: 0n,
        nonce: await nonceOf(w.address),
        ...tx,
      }),
    );
  /** A wallet no other test sends from, so no earlier submission of another test is still in flight for it. */
  const funded = async (label: string) => {
    const w = walletFor(label, provider);
    await call(anvil.current.url, 'anvil_setBalance', [w.address, '0xde0b6b3a7640000']);
    return w;
  };
  const submit = async (raw: string, id: unknown = 1) => (await rpc(ingress.url, 'eth_sendRawTransaction', [raw], id)).text;
  const forwarded = () => tap.methods().includes('eth_sendRawTransaction');

  describe('admits and forwards every standard type', () => {
    const types: Array<[string, TransactionRequest]> = [
      ['legacy (EIP-155)', { type: 0, gasPrice: 2_000_000_000n, maxPriorityFeePerGas: undefined }],
      [
        'EIP-2930',
        { type: 1, gasPrice: 2_000_000_000n, maxPriorityFeePerGas: undefined, accessList: [{ address: RECIPIENT, storageKeys: [] }] },
      ],
      ['EIP-1559', { type: 2 }],
    ];
    for (const [label, tx] of types) {
      it(`admits a ${label} transfer: answered keccak-256 of the raw bytes, then mined`, async () => {
        const raw = await signed(wallet(), tx);
        expect(Transaction.from(raw).type).to.equal(tx.type);
        expect(await submit(raw, 8)).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 8, result: keccak256(raw) }));
        const receipt = await receiptOf(ingress.url, keccak256(raw));
        expect(receipt).to.include({ transactionHash: keccak256(raw), status: '0x1' });
      });
    }

    it('admits an EIP-7702 set-code transaction, mined', async () => {
      const w = wallet();
      const nonce = await nonceOf(w.address);
      const authorization = await w.authorize({ address: RECIPIENT, nonce: nonce + 1, chainId: 8141 });
      const raw = await signed(w, { type: 4, to: w.address, authorizationList: [authorization], gasLimit: 100_000n });
      expect(Transaction.from(raw).type).to.equal(4);
      expect(await submit(raw)).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 1, result: keccak256(raw) }));
      const receipt = await receiptOf(ingress.url, keccak256(raw));
      expect(receipt.transactionHash).to.equal(keccak256(raw));
    });
  });

  describe('refuses, synchronously, with a reason, forwarding nothing', () => {
    afterEach(() => expect(forwarded(), 'forwarded to the submission target').to.equal(false));

    it('gas below the intrinsic 21,000 (the EL would skip it after ordering, holding the nonce)', async () => {
      const raw = await signed(wallet(), { gasLimit: 20_000n });
      expect(await submit(raw)).to.equal(
        rejected(1, 'intrinsic-gas', "intrinsic gas too low: gas limit 20000 is below the transaction's intrinsic gas 21000"),
      );
    });

    it('gas below the EIP-7623 calldata floor (1,000 non-zero bytes: 61,000)', async () => {
      const raw = await signed(wallet(), { data: `0x${'ab'.repeat(1_000)}`, gasLimit: 50_000n });
      expect(await submit(raw)).to.equal(
        rejected(1, 'intrinsic-gas', "intrinsic gas too low: gas limit 50000 is below the transaction's intrinsic gas 61000"),
      );
    });

    it('a blob transaction (type 0x03)', async () => {
      expect(await submit(`0x03f8${'aa'.repeat(40)}`, 2)).to.equal(
        rejected(2, 'blob-not-supported', 'blob transactions (type 0x03) are not accepted: blob sidecars have no data-availability path'),
      );
    });

    it('an unknown type', async () => {
      expect(await submit('0x05c0')).to.equal(rejected(1, 'type-unsupported', 'transaction type 0x05 is not supported'));
    });

    it('another chain id', async () => {
      const w = walletFor('another chain id');
      const raw = await w.signTransaction({ chainId: 1, to: RECIPIENT, gasLimit: 21_000, maxFeePerGas: 2_000_000_000n, type: 2 });
      expect(await submit(raw)).to.equal(rejected(1, 'wrong-chain-id', 'chain id 1 is not 8141'));
    });

    it('a legacy transaction without EIP-155 replay protection', async () => {
      const w = walletFor('a legacy transaction without EIP-155 replay protection');
      const raw = await w.signTransaction({ type: 0, chainId: 0, to: RECIPIENT, gasLimit: 21_000, gasPrice: 2_000_000_000n });
      expect(Transaction.from(raw).chainId).to.equal(0n);
      expect(await submit(raw)).to.equal(
        rejected(1, 'legacy-not-eip155', 'legacy transactions must be EIP-155 (replay-protected) signed for chain 8141'),
      );
    });

    it('gas above the EIP-7825 transaction cap', async () => {
      const raw = await signed(wallet(), { gasLimit: 16_777_217n });
      expect(await submit(raw)).to.equal(rejected(1, 'gas-cap', 'gas limit 16777217 exceeds the transaction gas cap 16777216 (EIP-7825)'));
    });

    it('init code over the EIP-3860 limit', async () => {
      const raw = await signed(wallet(), { to: null, value: 0n, data: `0x${'00'.repeat(49_153)}`, gasLimit: 600_000n });
      expect(await submit(raw)).to.equal(rejected(1, 'initcode-size', 'init code of 49153 bytes exceeds 49152 (EIP-3860)'));
    });

    it('gas above the block gas limit', async () => {
      const raw = await signed(wallet(), { gasLimit: 60_000_001n });
      expect(await submit(raw)).to.equal(rejected(1, 'gas-limit', 'gas limit 60000001 exceeds the block gas limit 60000000'));
    });

    it("a nonce below the sender's state nonce", async () => {
      const raw = await signed(wallet(), { nonce: 0 });
      const next = await nonceOf(wallet().address);
      expect(await submit(raw)).to.equal(rejected(1, 'nonce-too-low', `nonce too low: the sender's next nonce is ${next}`));
    });

    it("a nonce more than 64 ahead of the sender's state nonce", async () => {
      const w = wallet(KEYS[0]);
      const next = await nonceOf(w.address);
      const raw = await signed(w, { nonce: next + 65 });
      expect(await submit(raw)).to.equal(
        rejected(1, 'nonce-gap', `nonce too high: nonce ${next + 65} is more than 64 ahead of the sender's state nonce ${next}`),
      );
    });

    it('a payer that cannot cover the maximum cost', async () => {
      const w = walletFor('a payer that cannot cover the maximum cost', provider);
      const raw = await w.signTransaction({
        chainId: 8141,
        nonce: 0,
        to: RECIPIENT,
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 0n,
        type: 2,
      });
      expect(await submit(raw)).to.equal(
        rejected(
          1,
          'insufficient-funds',
          `insufficient funds for gas * price + value: the payer ${w.address.toLowerCase()} cannot cover the maximum cost ${21_000n * 2_000_000_000n + 1n} wei (balance 0)`,
        ),
      );
    });

    it('a fee cap below the current base fee', async () => {
      const { baseFeePerGas } = await call<{ baseFeePerGas: string }>(anvil.current.url, 'eth_getBlockByNumber', ['latest', false]);
      const raw = await signed(wallet(), { maxFeePerGas: 1n });
      expect(await submit(raw)).to.equal(
        rejected(
          1,
          'fee-too-low',
          `max fee per gas less than block base fee: max fee per gas 1 is below the current base fee ${BigInt(baseFeePerGas)}`,
        ),
      );
    });

    it('a submission whose client closed its side before the verdict (F15): not forwarded, so it can be sent again', async () => {
      const raw = await signed(await funded('F15: a submission whose client closed its side'), { value: 2n });
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
      const socket = connect(Number(new URL(ingress.url).port), '127.0.0.1');
      await once(socket, 'connect');
      socket.on('error', () => {});
      socket.end(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      await new Promise((resolve) => socket.on('close', resolve));
      // Sent again, it is judged afresh, admitted and forwarded once: the first was never claimed.
      expect(await submit(raw)).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 1, result: keccak256(raw) }));
      expect(tap.methods().filter((method) => method === 'eth_sendRawTransaction')).to.have.length(1);
      tap.bodies.length = 0;
    });

    it('a second submission of the same bytes: "already known"', async () => {
      const raw = await signed(await funded('a second submission of the same bytes'), {});
      expect(await submit(raw)).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 1, result: keccak256(raw) }));
      tap.bodies.length = 0;
      expect(await submit(raw, 5)).to.equal('{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"already known"}}');
    });

    it('a recently refused transaction again, marked as a cached verdict', async () => {
      const w = walletFor('a recently refused transaction again, marked as a cached verdict');
      const raw = await w.signTransaction({ chainId: 9, to: RECIPIENT, gasLimit: 21_000, maxFeePerGas: 2_000_000_000n, type: 2 });
      expect(await submit(raw)).to.equal(rejected(1, 'wrong-chain-id', 'chain id 9 is not 8141'));
      expect(await submit(raw)).to.equal(rejected(1, 'wrong-chain-id', 'chain id 9 is not 8141 (cached verdict)', true));
    });
  });

  it('confirms a state-bound refusal on a fresh head: a transfer sent right after its funding is admitted', async () => {
    const stale = await startTestIngress(testConfig(tap.url, gateYaml('      head_cache_ms: 5000')));
    try {
      const w = walletFor('confirms a state-bound refusal on a fresh head: a transfer sent right after its funding is admitted');
      const transfer = (value: bigint) => transferFrom(w.privateKey, 0, value);
      // Unfunded: refused, and the head and the account are now cached for 5 s.
      const first = JSON.parse((await rpc(stale.url, 'eth_sendRawTransaction', [await transfer(1n)])).text);
      expect(first.error.data).to.deep.equal({ reason: 'insufficient-funds' });
      // Funded in a new block, within head_cache_ms: the cached head still says balance 0.
      await call(anvil.current.url, 'anvil_setBalance', [w.address, '0xde0b6b3a7640000']);
      await call(anvil.current.url, 'evm_mine');
      const raw = await transfer(2n);
      expect((await rpc(stale.url, 'eth_sendRawTransaction', [raw], 3)).text).to.equal(
        JSON.stringify({ jsonrpc: '2.0', id: 3, result: keccak256(raw) }),
      );
    } finally {
      await stale.shutdown();
    }
  });

  it('passes a refusal by the submission target through with its reason', async () => {
    // A valid frame transaction, admitted by the gate; stock anvil refuses type 0x06.
    await call(anvil.current.url, 'anvil_setBalance', [VECTOR.sender, '0x8ac7230489e80000']);
    const reply = JSON.parse(await submit(VECTOR.raw));
    const direct = JSON.parse((await rpc(anvil.current.url, 'eth_sendRawTransaction', [VECTOR.raw])).text);
    expect(reply.error).to.deep.equal(direct.error);
    expect(forwarded()).to.equal(true);
  });

  it('fails closed with -32603 when the EL is unreachable, forwarding nothing', async () => {
    const orphan = await startTestIngress(testConfig('http://127.0.0.1:1'));
    try {
      const raw = await signed(wallet(KEYS[3]), {});
      expect(await (await rpc(orphan.url, 'eth_sendRawTransaction', [raw], 2)).text).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"validation unavailable: the ingress could not reach its execution layer"}}',
      );
    } finally {
      await orphan.shutdown();
    }
  });

  it('answers -32603 when the submission target is unreachable', async () => {
    const orphan = await startTestIngress(
      testConfig(tap.url).replace(`execution: ${tap.url}`, `execution: ${tap.url}\n  submit: http://127.0.0.1:1`),
    );
    try {
      const raw = await signed(wallet(KEYS[3]), {});
      expect(await (await rpc(orphan.url, 'eth_sendRawTransaction', [raw], 2)).text).to.equal(
        '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"submission unavailable: the transaction was not forwarded; retry later"}}',
      );
    } finally {
      await orphan.shutdown();
    }
  });

  describe('with an EL that validates (svc_validateTransaction)', () => {
    let el: ValidatingEl;
    let validating: TestIngress;
    const accept = (): Validation => ({ result: { valid: true } });
    let verdict: (raw: string) => Validation = accept;
    beforeEach(() => {
      verdict = accept;
    });

    before(async () => {
      el = await startValidatingEl(anvil.current.url, (raw) => verdict(raw));
      validating = await startTestIngress(
        testConfig(el.url, gateYaml('      head_cache_ms: 0\n      validation_method: svc_validateTransaction')),
      );
      await call(anvil.current.url, 'anvil_setBalance', [VECTOR.sender, '0x8ac7230489e80000']);
    });
    after(async () => {
      await validating.shutdown();
      await el.close();
    });

    it('forwards an ML-DSA-65 frame transaction the EL accepts, answering its hash', async () => {
      const reply = await rpc(validating.url, 'eth_sendRawTransaction', [VECTOR.raw], 3);
      expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 3, result: VECTOR.hash }));
      expect(el.validated).to.deep.equal([VECTOR.raw]);
      expect(el.submittedFrames).to.deep.equal([VECTOR.raw]);
    });

    it('fails closed when the answer is neither {valid: true} nor {valid: false}, forwarding nothing', async () => {
      for (const answer of [
        { result: '0x' },
        { result: { valid: 'yes' } },
        { result: null },
        { error: { code: -32601, message: 'the method does not exist/is not available' } },
      ]) {
        verdict = () => answer as Validation;
        const raw = await signed(wallet(KEYS[3]), {});
        const reply = await rpc(validating.url, 'eth_sendRawTransaction', [raw], 9);
        expect(reply.text, JSON.stringify(answer)).to.equal(
          '{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"validation unavailable: the ingress could not reach its execution layer"}}',
        );
        expect(el.validated).to.include(raw);
        expect(el.submitted).to.not.include(raw);
      }
    });

    it("refuses with the EL's reason what the EL rejects", async () => {
      verdict = () => ({ error: { code: -32000, message: 'verify-rejected: frame 0 reverted' } });
      const raw = await signed(wallet(KEYS[3]), {});
      const reply = await rpc(validating.url, 'eth_sendRawTransaction', [raw], 4);
      expect(reply.text).to.equal(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 4,
          error: {
            code: -32000,
            message: 'rejected by the execution layer: verify-rejected: frame 0 reverted',
            data: { reason: 'el-rejected' },
          },
        }),
      );
      expect(el.validated).to.include(raw);
    });
  });
});

describe('gate: eth_sendRawTransactionSync (EIP-7966)', () => {
  const anvil = useAnvil();
  let ingress: TestIngress;

  before(async () => {
    ingress = await startTestIngress(testConfig(anvil.current.url, gateYaml('      head_cache_ms: 0')));
  });
  after(() => ingress?.shutdown());

  const transfer = transferFrom;
  const sync = async (params: unknown[], id = 1) => JSON.parse((await rpc(ingress.url, 'eth_sendRawTransactionSync', params, id)).text);

  it('answers with the receipt once the transaction is mined, judged by the same gate', async () => {
    const raw = await transfer(DEV_KEYS[1], 0);
    const reply = await sync([raw], 3);
    expect(reply.id).to.equal(3);
    expect(reply.result).to.include({ transactionHash: keccak256(raw), status: '0x1' });
  });

  it("refuses a nonce ahead of the sender's next with error 6 and that nonce, sending nothing", async () => {
    const next = Number(await call<string>(anvil.current.url, 'eth_getTransactionCount', [new Wallet(DEV_KEYS[2]).address, 'latest']));
    const reply = await sync([await transfer(DEV_KEYS[2], next + 1)]);
    expect(reply.error).to.deep.equal({
      code: 6,
      message: `nonce gap: the transaction was not accepted; the sender's next nonce is ${next}`,
      data: `0x${next.toString(16)}`,
    });
    expect(Number(await call<string>(anvil.current.url, 'eth_getTransactionCount', [new Wallet(DEV_KEYS[2]).address, 'pending']))).to.equal(
      next,
    );
  });

  it('answers a nonce ahead with error 6 before judging anything else: an unfunded sender is told the gap, not its balance', async () => {
    const unfunded = walletFor('a sync submission with a gapped nonce from an empty account');
    const raw = await transferFrom(unfunded.privateKey, 1);
    expect((await sync([raw])).error).to.deep.equal({
      code: 6,
      message: "nonce gap: the transaction was not accepted; the sender's next nonce is 0",
      data: '0x0',
    });
    // The same bytes without the sync wait: the gate's own nonce rule.
    expect(JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [raw])).text).error.data).to.deep.equal({
      reason: 'nonce-not-contiguous',
    });
  });

  it('refuses what the gate refuses, as eth_sendRawTransaction would', async () => {
    const raw = await walletFor('refuses what the gate refuses, as eth_sendRawTransaction would').signTransaction({
      chainId: 1,
      to: RECIPIENT,
      gasLimit: 21_000,
      maxFeePerGas: 2_000_000_000n,
      type: 2,
    });
    expect((await sync([raw])).error).to.deep.equal({
      code: -32000,
      message: 'rejected: chain id 1 is not 8141',
      data: { reason: 'wrong-chain-id' },
    });
  });

  it('answers error 4 with the hash when no block includes it within the timeout asked for', async () => {
    await call(anvil.current.url, 'evm_setAutomine', [false]);
    try {
      const raw = await transfer(DEV_KEYS[3], 0);
      const started = Date.now();
      const reply = await sync([raw, 300]);
      expect(reply.error).to.deep.equal({
        code: 4,
        message: 'the transaction was ordered but not included within the timeout; wait for its receipt',
        data: keccak256(raw),
      });
      expect(Date.now() - started).to.be.within(250, 2_000);
    } finally {
      await call(anvil.current.url, 'evm_setAutomine', [true]);
    }
  });
});

describe('gate: an unexpected error while judging', () => {
  const anvil = useAnvil();

  it('is refused as "gate-error", naming only its class, replayed as cached, and logged throttled without a stack', async () => {
    // An EL whose nonce for the sender is no number: nothing in the gate expects that.
    const el = await startStubEl(
      { eth_getTransactionCount: (id) => JSON.stringify({ jsonrpc: '2.0', id, result: '0xnot-a-number' }) },
      { fallthrough: anvil.current.url },
    );
    const ingress = await startTestIngress(testConfig(el.url, gateYaml('      head_cache_ms: 0')));
    try {
      const raw = await transferFrom(DEV_KEY);
      const refusal = { code: -32000, message: 'rejected: judging failed unexpectedly (SyntaxError)', data: { reason: 'gate-error' } };
      expect(JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [raw])).text).error).to.deep.equal(refusal);
      expect(JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [raw], 2)).text).error).to.deep.equal({
        ...refusal,
        message: `${refusal.message} (cached verdict)`,
        data: { reason: 'gate-error', cached: true },
      });
      const lines = ingress.logs.map((line) => JSON.parse(line) as { level: string; msg: string; bug?: string; count?: number });
      const logged = lines.filter((line) => line.msg.startsWith('gate: judging failed unexpectedly'));
      expect(logged).to.have.length(1);
      expect(logged[0]).to.include({ level: 'warn', count: 1 });
      expect(logged[0]!.bug).to.match(/^SyntaxError: Cannot convert 0xnot-a-number to a BigInt at /);
      expect(lines.filter((line) => line.level === 'error')).to.deep.equal([]);
    } finally {
      await ingress.shutdown();
      await el.close();
    }
  });
});

describe('gate: in-flight cap', () => {
  const anvil = useAnvil({ extraArgs: ['--no-mining'] });
  let ingress: TestIngress;
  let provider: JsonRpcProvider;

  before(async () => {
    ingress = await startTestIngress(testConfig(anvil.current.url, gateYaml('      head_cache_ms: 0\n      in_flight_cap: 2')));
    provider = new JsonRpcProvider(anvil.current.url, 8141, { staticNetwork: true, batchMaxCount: 1 });
  });
  after(async () => {
    provider.destroy();
    await ingress.shutdown();
  });

  it('refuses a third transaction in flight, and frees the slots once they are mined', async () => {
    const w = new Wallet(DEV_KEY, provider);
    const sign = (nonce: number) =>
      w.signTransaction({
        chainId: 8141,
        nonce,
        to: RECIPIENT,
        value: parseEther('0.001'),
        gasLimit: 21_000,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 0n,
        type: 2,
      });
    const send = async (nonce: number) => JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [await sign(nonce)])).text);
    expect((await send(0)).error).to.equal(undefined);
    expect((await send(1)).error).to.equal(undefined);
    expect((await send(2)).error).to.deep.equal({
      code: -32000,
      message: 'rejected: too many in-flight transactions for the sender (cap 2)',
      data: { reason: 'in-flight-cap' },
    });
    await call(anvil.current.url, 'evm_mine');
    expect(await call(anvil.current.url, 'eth_getTransactionCount', [w.address, 'latest'])).to.equal('0x2');
    expect((await send(2)).error).to.equal(undefined);
  });

  it('takes a nonce ahead of the state nonce only over a run of nonces in flight (contiguous_nonces, on by default)', async () => {
    const send = async (nonce: number) =>
      JSON.parse((await rpc(ingress.url, 'eth_sendRawTransaction', [await transferFrom(DEV_KEYS[2]!, nonce)])).text);
    const gap = (nonce: number) => ({
      code: -32000,
      message: `rejected: nonce too high: nonce ${nonce} is ahead of the sender's next nonce 0, and not every nonce between is in flight (this chain runs transactions in arrival order: it would be skipped)`,
      data: { reason: 'nonce-not-contiguous' },
    });
    expect((await send(1)).error).to.deep.equal(gap(1));
    expect((await send(0)).error).to.equal(undefined);
    expect((await send(2)).error, 'nonce 1 missing').to.deep.equal(gap(2));
    // The same bytes refused a moment ago: judged anew (a refusal on what is in flight is not cached).
    expect((await send(1)).error).to.equal(undefined);
  });
});

describe('gate: role follower', () => {
  const anvil = useAnvil();
  let validator: TestIngress;

  before(async () => {
    validator = await startTestIngress(testConfig(anvil.current.url, gateYaml('      head_cache_ms: 0')));
  });
  after(() => validator.shutdown());

  const transfer = () => transferFrom(DEV_KEYS[1]!);

  it('refuses submissions when it has no validator to relay to', async () => {
    const follower = await startTestIngress(testConfig(anvil.current.url, gateYaml('      role: follower')));
    try {
      const reply = await rpc(follower.url, 'eth_sendRawTransaction', [await transfer()], 6);
      expect(reply.text).to.equal(
        '{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"submissions are not accepted by this node (a follower): send them to the public endpoint"}}',
      );
    } finally {
      await follower.shutdown();
    }
  });

  it("relays submissions to the validator's ingress, which gates and forwards them", async () => {
    const follower = await startTestIngress(
      testConfig(anvil.current.url, gateYaml(`      role: follower\n      relay_url: ${validator.url}`)),
    );
    try {
      const raw = await transfer();
      const reply = await rpc(follower.url, 'eth_sendRawTransaction', [raw], 7);
      expect(reply.text).to.equal(JSON.stringify({ jsonrpc: '2.0', id: 7, result: keccak256(raw) }));
      const again = JSON.parse((await rpc(follower.url, 'eth_sendRawTransaction', [raw])).text);
      expect(again.error).to.deep.equal({ code: -32000, message: 'already known' });
    } finally {
      await follower.shutdown();
    }
  });

  it('tells the validator whose submission it relays (X-Forwarded-For), so its users do not share one bucket there', async () => {
    const limited = await startTestIngress(
      testConfig(
        anvil.current.url,
        '\n  - allowlist\n  - rate-limit:\n      trusted_proxies: [127.0.0.1]\n      submissions:\n        per_source: {rate_per_second: 1, burst: 1}\n  - gate:\n      head_cache_ms: 0\n',
      ),
    );
    const follower = await startTestIngress(
      testConfig(anvil.current.url, gateYaml(`      role: follower\n      relay_url: ${limited.url}`)),
    );
    const sign = (key: string) => transferFrom(key);
    const submitFrom = async (from: string, raw: string) => {
      const agent = new Agent({ localAddress: from });
      try {
        const reply = await request(follower.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          dispatcher: agent,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
        });
        return JSON.parse(await reply.body.text()) as { result?: string; error?: { code: number } };
      } finally {
        await agent.close();
      }
    };
    try {
      const [a1, a2, b1] = await Promise.all([sign(DEV_KEYS[2]), sign(DEV_KEYS[3]), sign(DEV_KEYS[4])]);
      expect(await submitFrom('127.0.0.2', a1)).to.have.property('result', keccak256(a1));
      expect((await submitFrom('127.0.0.2', a2)).error).to.include({ code: -32005 });
      expect(await submitFrom('127.0.0.3', b1)).to.have.property('result', keccak256(b1));
    } finally {
      await follower.shutdown();
      await limited.shutdown();
    }
  });

  it("relays eth_sendRawTransactionSync too, answering the validator's receipt; without a relay, refuses it", async () => {
    const follower = await startTestIngress(
      testConfig(anvil.current.url, gateYaml(`      role: follower\n      relay_url: ${validator.url}`)),
    );
    const lone = await startTestIngress(testConfig(anvil.current.url, gateYaml('      role: follower')));
    try {
      const sender = walletFor('relayed eth_sendRawTransactionSync');
      await call(anvil.current.url, 'anvil_setBalance', [sender.address, '0xde0b6b3a7640000']);
      const raw = await sender.signTransaction({
        chainId: 8141,
        nonce: 0,
        to: RECIPIENT,
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 0n,
        type: 2,
      });
      const reply = JSON.parse((await rpc(follower.url, 'eth_sendRawTransactionSync', [raw], 8)).text);
      expect(reply.result).to.include({ transactionHash: keccak256(raw), status: '0x1' });
      expect(JSON.parse((await rpc(lone.url, 'eth_sendRawTransactionSync', [raw], 9)).text).error).to.deep.equal({
        code: -32000,
        message: 'submissions are not accepted by this node (a follower): send them to the public endpoint',
      });
    } finally {
      await follower.shutdown();
      await lone.shutdown();
    }
  });

  it('outwaits a validator holding a sync submission for its receipt longer than the upstream timeout', async () => {
    const receipt = { transactionHash: `0x${'ab'.repeat(32)}`, status: '0x1' };
    const validator = await startStubEl({
      eth_sendRawTransactionSync: (id) =>
        new Promise((resolve) => setTimeout(() => resolve(JSON.stringify({ jsonrpc: '2.0', id, result: receipt })), 1_500)),
    });
    const yaml = testConfig(
      anvil.current.url,
      gateYaml(`      role: follower\n      relay_url: ${validator.url}\n      sync_timeout_ms: 2000\n      sync_timeout_max_ms: 2000`),
    );
    expect(yaml).to.include('headers_timeout_ms: 2000');
    let follower: TestIngress | undefined;
    try {
      follower = await startTestIngress(yaml.replace('headers_timeout_ms: 2000', 'headers_timeout_ms: 300'));
      const raw = await walletFor('held by its validator').signTransaction({
        chainId: 8141,
        nonce: 0,
        to: RECIPIENT,
        value: 1n,
        gasLimit: 21_000,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 0n,
        type: 2,
      });
      expect(JSON.parse((await rpc(follower.url, 'eth_sendRawTransactionSync', [raw, 2000], 5)).text)).to.deep.equal({
        jsonrpc: '2.0',
        id: 5,
        result: receipt,
      });
    } finally {
      await follower?.shutdown();
      await validator.close();
    }
  });

  it('refuses a relay_url carrying credentials, like any upstream URL', () => {
    expect(() =>
      parseConfig(testConfig('http://127.0.0.1:1', gateYaml('      role: follower\n      relay_url: http://u:p@127.0.0.1:2'))),
    ).to.throw('plugins[4].gate.relay_url: must be an http:// or https:// URL without credentials');
  });

  it('refuses relay_url on a validator', () => {
    expect(() => parseConfig(testConfig('http://127.0.0.1:1', gateYaml('      relay_url: http://127.0.0.1:2')))).to.throw(
      'plugins[4].gate.relay_url: applies only to role: follower',
    );
  });
});

describe('gate: on the pure-JS crypto (SVC_PORTABLE_CRYPTO=1, as where the native binaries do not load)', () => {
  const anvil = useAnvil();
  let ingress: IngressProcess | undefined;
  after(async () => {
    ingress?.child.kill('SIGTERM');
    await ingress?.exited;
  });

  it('says so in one warning line at start, and admits a transfer whose sender it recovered in the pool', async () => {
    ingress = await startIngressProcess(testConfig(anvil.current.url, gateYaml('      head_cache_ms: 0')), {
      ...process.env,
      SVC_PORTABLE_CRYPTO: '1',
    });
    const warning = await ingress.waitForLog(
      /^gate: keccak-256 and secp256k1 run on the pure-JS @noble implementations \(SVC_PORTABLE_CRYPTO=1\)/,
    );
    expect(warning.level).to.equal('warn');
    const nonce = Number(await call<string>(anvil.current.url, 'eth_getTransactionCount', [new Wallet(DEV_KEYS[3]!).address, 'latest']));
    const raw = await transferFrom(DEV_KEYS[3]!, nonce);
    expect((await rpc(ingress.url, 'eth_sendRawTransaction', [raw])).text).to.equal(
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: keccak256(raw) }),
    );
    expect(ingress.lines.filter((line) => line.includes('pure-JS @noble'))).to.have.length(1);
  });
});

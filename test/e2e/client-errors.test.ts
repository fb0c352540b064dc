/**
 * The gate's refusals as the libraries see them: each message starts with the wording the ELs
 * use for the condition, which ethers v6 and viem classify by, so a wallet can say "add funds"
 * rather than "unknown error". Real ethers and viem, through the running ingress, on anvil.
 */
import { expect } from 'chai';
import { isError, JsonRpcProvider, type Wallet } from 'ethers';
import {
  type BaseError,
  createWalletClient,
  defineChain,
  FeeCapTooLowError,
  http,
  InsufficientFundsError,
  IntrinsicGasTooLowError,
  NonceTooHighError,
  NonceTooLowError,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { call } from '../../support/http.js';
import { walletFor } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';
import { PRODUCTION_PLUGINS, startTestIngress, testConfig, type TestIngress } from '../helpers/ingress.js';

const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const FUNDS = '0xde0b6b3a7640000';
let wallets = 0;
/** A fresh sender per call, from fixed keys. */
const freshWallet = () => walletFor(`client-errors sender ${wallets++}`);

describe('e2e: gate refusals classified by ethers v6 and viem', () => {
  const anvil = useAnvil();
  let ingress: TestIngress;
  let provider: JsonRpcProvider;

  before(async () => {
    ingress = await startTestIngress(
      testConfig(anvil.current.url, PRODUCTION_PLUGINS.replace('  - gate\n', '  - gate:\n      head_cache_ms: 0\n')),
    );
    provider = new JsonRpcProvider(ingress.url, 8141, { staticNetwork: true, batchMaxCount: 1 });
  });
  after(async () => {
    provider?.destroy();
    await ingress?.shutdown();
  });

  const funded = async () => {
    const wallet = freshWallet();
    await call(anvil.current.url, 'anvil_setBalance', [wallet.address, FUNDS]);
    return wallet;
  };
  const sign = (wallet: Wallet, overrides: { nonce?: number; gasLimit?: number; maxFeePerGas?: bigint } = {}) =>
    wallet.signTransaction({
      chainId: 8141,
      nonce: 0,
      to: RECIPIENT,
      value: 1n,
      gasLimit: 21_000,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 0n,
      type: 2,
      ...overrides,
    });

  /** What ethers makes of broadcasting `raw` through the ingress. */
  const ethersError = async (raw: string) => {
    try {
      await provider.broadcastTransaction(raw);
    } catch (err) {
      return err;
    }
    throw new Error('broadcast was accepted');
  };

  /** What viem makes of sending with a local account through the ingress (everything given: no estimation). */
  const viemError = async (wallet: Wallet, overrides: { nonce?: number; gas?: bigint; maxFeePerGas?: bigint } = {}) => {
    const chain = defineChain({
      id: 8141,
      name: 'chain 8141',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [ingress.url] } },
    });
    const client = createWalletClient({
      chain,
      transport: http(ingress.url, { retryCount: 0 }),
      account: privateKeyToAccount(wallet.privateKey as Hex),
    });
    try {
      await client.sendTransaction({
        to: RECIPIENT,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 0n,
        nonce: 0,
        type: 'eip1559',
        ...overrides,
      });
    } catch (err) {
      return err as BaseError;
    }
    throw new Error('the transaction was accepted');
  };
  const isViem = (err: BaseError, kind: new (...args: never[]) => Error) => err.walk((e) => e instanceof kind) !== null;

  it('an unfunded sender: ethers INSUFFICIENT_FUNDS, viem InsufficientFundsError', async () => {
    const wallet = freshWallet();
    expect(isError(await ethersError(await sign(wallet)), 'INSUFFICIENT_FUNDS')).to.equal(true);
    expect(isViem(await viemError(wallet), InsufficientFundsError)).to.equal(true);
  });

  it('a nonce already used: ethers NONCE_EXPIRED, viem NonceTooLowError', async () => {
    const wallet = await funded();
    await call(anvil.current.url, 'anvil_setNonce', [wallet.address, '0x2']);
    expect(isError(await ethersError(await sign(wallet)), 'NONCE_EXPIRED')).to.equal(true);
    expect(isViem(await viemError(wallet), NonceTooLowError)).to.equal(true);
  });

  it('a nonce too far ahead: viem NonceTooHighError', async () => {
    expect(isViem(await viemError(await funded(), { nonce: 100 }), NonceTooHighError)).to.equal(true);
  });

  it('a fee cap below the base fee: viem FeeCapTooLowError', async () => {
    expect(isViem(await viemError(await funded(), { maxFeePerGas: 1n }), FeeCapTooLowError)).to.equal(true);
  });

  it('gas below the intrinsic gas: viem IntrinsicGasTooLowError', async () => {
    expect(isViem(await viemError(await funded(), { gas: 20_000n }), IntrinsicGasTooLowError)).to.equal(true);
  });
});

import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { mldsaAccount, RECIPIENT, secpAccount, selfTransfer, signed, type FrameTxFields } from '../../../../support/frames.js';
import { call, rpc } from '../../../../support/http.js';
import { p256SecretFor } from '../../../../support/keys.js';
import { useFrameIngress } from '../../../helpers/submit-target.js';

const ONE_ETH = '0xde0b6b3a7640000';
const SECP256K1 = 0x01;
const P256 = 0x02;
const MLDSA65 = 0x65;

const verifyRejected = (id: number, frame: number, cause: string, detail?: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message: `rejected: VERIFY frame ${frame}: ${cause}${detail === undefined ? '' : ` (${detail})`}`,
      data: { reason: 'verify-rejected', frame, cause },
    },
  });

/** [only, pay, send]: an ML-DSA-65 sender approving execution, a SECP256K1 sponsor paying with `payStateGas`. */
const sponsored = (sender: string, sponsor: string, payStateGas: bigint): FrameTxFields => ({
  sender,
  frames: [
    { mode: 1, flags: 2, executionGas: 10_000n },
    { mode: 1, flags: 1, target: sponsor, executionGas: 10_000n, stateGas: payStateGas },
    { mode: 2, flags: 0, target: RECIPIENT, executionGas: 30_000n },
  ],
  signatures: [{ scheme: MLDSA65 }, { scheme: SECP256K1, signer: sponsor }],
  fees: [0n, 2_000_000_000n, 0n],
});

describe('gate: frame transactions judged by the ingress (stock anvil, no validation method)', () => {
  const suite = useFrameIngress();

  const fund = (address: string) => call(suite.anvil.url, 'anvil_setBalance', [address, ONE_ETH]);
  const submit = async (raw: string, id = 1) => (await rpc(suite.ingress.url, 'eth_sendRawTransaction', [raw], id)).text;
  const admitted = (raw: string, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, result: keccak256(raw) });

  describe('direct evaluation (code-less accounts, default code)', () => {
    it('admits a transfer from a code-less SECP256K1 account and forwards exactly its bytes', async () => {
      const account = secpAccount();
      await fund(account.address);
      const raw = signed(selfTransfer(account.address, SECP256K1), [account.sign]);
      expect(await submit(raw, 3)).to.equal(admitted(raw, 3));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('admits a transfer from a code-less ML-DSA-65 account (the project extension of default code)', async () => {
      const account = mldsaAccount();
      await fund(account.address);
      const raw = signed(selfTransfer(account.address, MLDSA65), [account.sign]);
      expect(await submit(raw)).to.equal(admitted(raw));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('admits [only, pay] with a code-less sponsor paying for a sender that does not exist yet', async () => {
      const sender = mldsaAccount();
      const sponsor = secpAccount();
      await fund(sponsor.address);
      const raw = signed(sponsored(sender.address, sponsor.address, 183_600n), [sender.sign, sponsor.sign]);
      expect(await submit(raw)).to.equal(admitted(raw));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('admits an expiry frame only over the canonical expiry verifier: refused over other code, admitted once it is back', async () => {
      const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';
      const account = secpAccount();
      await fund(account.address);
      const fields = selfTransfer(account.address, SECP256K1);
      fields.frames.unshift({ mode: 1, flags: 0, target: EXPIRY_VERIFIER, executionGas: 2_651n, data: '0x00000000ffffffff' });
      const raw = signed(fields, [account.sign]);
      const canonical = await call<string>(suite.anvil.url, 'eth_getCode', [EXPIRY_VERIFIER, 'latest']);
      expect(canonical).to.equal('0x60083614600a575f5ffd5b5f3560c01c4211601657005b5f5ffd');
      await call(suite.anvil.url, 'anvil_setCode', [EXPIRY_VERIFIER, '0x00']);
      await call(suite.anvil.url, 'evm_mine', []);
      expect(await submit(raw, 5)).to.equal(
        verifyRejected(5, 0, 'not the canonical expiry verifier', `the code at ${EXPIRY_VERIFIER} is not EIP-8141's`),
      );
      await call(suite.anvil.url, 'anvil_setCode', [EXPIRY_VERIFIER, canonical]);
      await call(suite.anvil.url, 'evm_mine', []);
      expect(await submit(raw, 6)).to.equal(admitted(raw, 6));
      expect(suite.target.received).to.deep.equal([raw]);
    });

    it('prices a sponsor that proposed the head as cold: the block that includes it has another proposer', async () => {
      const sender = mldsaAccount();
      const sponsor = secpAccount();
      await fund(sponsor.address);
      await call(suite.anvil.url, 'anvil_setCoinbase', [sponsor.address]);
      await call(suite.anvil.url, 'evm_mine', []);
      const fields = sponsored(sender.address, sponsor.address, 183_600n);
      fields.frames[1]!.executionGas = 2_599n;
      const raw = signed(fields, [sender.sign, sponsor.sign]);
      expect(await submit(raw, 4)).to.equal(verifyRejected(4, 1, 'out of gas', 'the frame needs 2600, its limit is 2599'));
      expect(suite.target.received).to.deep.equal([]);
    });

    it("holds a forwarded transaction's nonce until the next block, then frees it if it was skipped", async () => {
      const account = secpAccount();
      await fund(account.address);
      const first = signed(selfTransfer(account.address, SECP256K1), [account.sign]);
      expect(await submit(first)).to.equal(admitted(first));
      // The recording target never executes it: to the gate it is in flight.
      const fields = selfTransfer(account.address, SECP256K1);
      fields.frames[1]!.value = 2n;
      const second = signed(fields, [account.sign]);
      expect(JSON.parse(await submit(second)).error.data).to.deep.equal({ reason: 'nonce-in-flight' });
      // A block without it: skipped, its nonce free again.
      await call(suite.anvil.url, 'evm_mine', []);
      expect(await submit(second)).to.equal(admitted(second));
    });

    describe('refuses, forwarding nothing', () => {
      afterEach(() => expect(suite.target.received, 'forwarded').to.deep.equal([]));

      it('a pay frame without the state gas to create the sender', async () => {
        const sender = mldsaAccount();
        const sponsor = secpAccount();
        await fund(sponsor.address);
        const raw = signed(sponsored(sender.address, sponsor.address, 0n), [sender.sign, sponsor.sign]);
        expect(await submit(raw, 4)).to.equal(
          verifyRejected(4, 1, 'out of state gas', 'creating the sender needs 183600 state gas, the frame has 0 left'),
        );
      });

      it("a VERIFY frame whose limit does not cover the target's access", async () => {
        const account = secpAccount();
        await fund(account.address);
        const raw = signed(selfTransfer(account.address, SECP256K1, { verifyGas: 99n }), [account.sign]);
        expect(await submit(raw)).to.equal(verifyRejected(1, 0, 'out of gas', 'the frame needs 100, its limit is 99'));
      });

      it('a code-less sender whose entry 0 is signed by another account', async () => {
        const account = secpAccount();
        const other = secpAccount();
        await fund(account.address);
        const fields = selfTransfer(account.address, SECP256K1);
        fields.signatures[0]!.signer = other.address;
        const raw = signed(fields, [other.sign]);
        expect(await submit(raw)).to.equal(
          verifyRejected(
            1,
            0,
            'reverted',
            `default code: signature 0 must be a SECP256K1 or MLDSA65 entry of ${account.address} over the signature hash`,
          ),
        );
      });

      it("a sender at the expiry verifier's address: its frame without a target runs the verifier, which approves nothing", async () => {
        const EXPIRY_VERIFIER = '0x0000000000000000000000000000000000008141';
        await fund(EXPIRY_VERIFIER);
        const signer = secpAccount();
        const fields = selfTransfer(EXPIRY_VERIFIER, SECP256K1);
        fields.signatures[0]!.signer = signer.address;
        const raw = signed(fields, [signer.sign]);
        expect(await submit(raw, 7)).to.equal(verifyRejected(7, 0, 'reverted'));
      });

      it('a code-less sender whose entry 0 is P256 (default code accepts SECP256K1 and MLDSA65 only)', async () => {
        const { p256 } = await import('@noble/curves/nist.js');
        const secret = p256SecretFor('code-less sender with a P256 entry 0');
        const point = p256.getPublicKey(secret, false).subarray(1);
        const address = `0x${keccak256(point).slice(26)}`;
        await fund(address);
        const fields = selfTransfer(address, P256);
        const raw = signed(fields, [
          (digest) => {
            const sig = p256.sign(Buffer.from(digest.slice(2), 'hex'), secret, { prehash: false, lowS: true, format: 'compact' });
            return `0x${Buffer.from(sig).toString('hex')}${Buffer.from(point).toString('hex')}`;
          },
        ]);
        expect(await submit(raw)).to.equal(
          verifyRejected(
            1,
            0,
            'reverted',
            `default code: signature 0 must be a SECP256K1 or MLDSA65 entry of ${address} over the signature hash`,
          ),
        );
      });

      it('a deploy frame aimed at a code-less factory (nothing installed at the sender)', async () => {
        const account = secpAccount();
        await fund(account.address);
        const fields = selfTransfer(account.address, SECP256K1);
        fields.frames.unshift({ mode: 0, flags: 0, target: '0x000000000000000000000000000000000000f00d', executionGas: 10_000n });
        const raw = signed(fields, [account.sign]);
        expect(JSON.parse(await submit(raw)).error).to.deep.equal({
          code: -32000,
          message: 'rejected: deploy frame 0: no code at the sender after deploy',
          data: { reason: 'verify-rejected', frame: 0, cause: 'no code at the sender after deploy' },
        });
      });

      it('a tampered entry, before any state is judged', async () => {
        const account = mldsaAccount();
        const raw = signed(selfTransfer(account.address, MLDSA65), [account.sign]);
        const tampered = raw.slice(0, -200) + (raw.slice(-200, -198) === 'ff' ? '00' : 'ff') + raw.slice(-198);
        expect(JSON.parse(await submit(tampered)).error.data).to.deep.equal({ reason: 'mldsa-verify-failed' });
      });
    });
  });
});

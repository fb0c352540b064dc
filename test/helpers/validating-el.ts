/**
 * What no public EL implements, in front of a real anvil: `svc_validateTransaction` (the chain's
 * validation, where frame transactions are simulated) and acceptance of type 0x06 submissions.
 * Every other call goes to anvil unchanged.
 */
import { keccak256 } from 'ethers';
import { startStubEl } from '../../support/stub-el.js';

export type Validation = { result: unknown } | { error: { code: number; message: string } };

export interface ValidatingEl {
  readonly url: string;
  /** Raw frame transactions accepted by eth_sendRawTransaction. */
  readonly submittedFrames: string[];
  /** Raw transactions passed to svc_validateTransaction. */
  readonly validated: string[];
  /** Every raw transaction submitted through it (frame or not). */
  readonly submitted: string[];
  close(): Promise<void>;
}

export async function startValidatingEl(anvilUrl: string, validate: (raw: string) => Validation): Promise<ValidatingEl> {
  const rawOf = (params: unknown) => (params as string[])[0]!;
  const answer = (id: unknown, member: object) => JSON.stringify({ jsonrpc: '2.0', id, ...member });
  const el = await startStubEl(
    {
      svc_validateTransaction: (id, params) => answer(id, validate(rawOf(params))),
      // Stock ELs refuse type 0x06: frames are accepted here, anything else goes on to anvil.
      eth_sendRawTransaction: (id, params) =>
        rawOf(params).startsWith('0x06') ? answer(id, { result: keccak256(rawOf(params)) }) : undefined,
    },
    { fallthrough: anvilUrl },
  );
  const rawsOf = (method: string) => el.received.filter((call) => call.method === method).map((call) => rawOf(call.params));
  return {
    url: el.url,
    get submittedFrames() {
      return rawsOf('eth_sendRawTransaction').filter((raw) => raw.startsWith('0x06'));
    },
    get validated() {
      return rawsOf('svc_validateTransaction');
    },
    get submitted() {
      return rawsOf('eth_sendRawTransaction');
    },
    close: () => el.close(),
  };
}

/**
 * The signature-stripped record of a transaction and its witness (spec 2.4 and 2.5), as the
 * devnet defines them:
 *
 * - a frame transaction (type 0x06): the record is EIP-8141's signature-hash preimage, the
 *   encoding with `signature` emptied in every entry whose `msg` is empty (keccak-256 of the
 *   record is the signature hash); the witness is those signatures, in entry order;
 * - any other type: the record is the payload its sender signed (ethers' `unsignedSerialized`);
 *   the witness is one 65-byte signature `r ‖ s ‖ v` (v 27 or 28).
 *
 * `restore` puts the two back together, byte for byte.
 */
import { bytesToHex } from '@ethereumjs/util';
import { concat, decodeRlp, encodeRlp, Signature, Transaction, type RlpStructuredData } from 'ethers';
import { blankedEncoding, decodeFrameTransaction } from '../../protocol/index.js';

export interface Stripped {
  /** The signature-stripped record, 0x hex. */
  readonly record: string;
  /** The elided bytes, 0x hex each. */
  readonly witness: readonly string[];
}

const isFrameTransaction = (raw: string) => raw.slice(0, 4).toLowerCase() === '0x06';

export function strip(raw: string): Stripped {
  if (isFrameTransaction(raw)) {
    const tx = decodeFrameTransaction(raw);
    return {
      record: bytesToHex(blankedEncoding(raw)),
      witness: tx.signatures.filter((entry) => entry.msg === undefined).map((entry) => bytesToHex(entry.signature)),
    };
  }
  const tx = Transaction.from(raw);
  return { record: tx.unsignedSerialized, witness: [tx.signature!.serialized] };
}

export function restore({ record, witness }: Stripped): string {
  if (isFrameTransaction(record)) {
    const payload = decodeRlp(`0x${record.slice(4)}`) as RlpStructuredData[];
    let next = 0;
    payload[4] = (payload[4] as string[][]).map(([scheme, signer, msg, signature]) => [
      scheme!,
      signer!,
      msg!,
      msg === '0x' ? witness[next++]! : signature!,
    ]);
    return concat(['0x06', encodeRlp(payload)]);
  }
  const tx = Transaction.from(record);
  tx.signature = Signature.from(witness[0]!);
  return tx.serialized;
}

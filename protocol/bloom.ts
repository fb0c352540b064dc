/**
 * The logs bloom of a receipt (the yellow paper's M3:2048): for the address and each topic of
 * every log, three bits of its keccak-256, each the low 11 bits of one of the hash's first three
 * byte pairs, set in a 256-byte filter whose last byte holds bits 0-7. A frame transaction's
 * receipt blooms the concatenation of its frames' logs (EIP-8141 "Receipt Encoding").
 */
import { bytesOfHex, keccak256 } from './hex.js';

export interface BloomedLog {
  /** 0x hex. */
  readonly address: string;
  readonly topics: readonly string[];
}

const BLOOM_BYTES = 256;

export function logsBloom(logs: readonly BloomedLog[]): string {
  const bloom = Buffer.alloc(BLOOM_BYTES);
  const add = (value: string) => {
    const hash = keccak256(Buffer.from(bytesOfHex(value)));
    for (let pair = 0; pair < 6; pair += 2) {
      const bit = hash.readUInt16BE(pair) & 2047;
      const at = BLOOM_BYTES - 1 - (bit >> 3);
      bloom.writeUInt8(bloom.readUInt8(at) | (1 << (bit & 7)), at);
    }
  };
  for (const log of logs) {
    add(log.address);
    for (const topic of log.topics) add(topic);
  }
  return `0x${bloom.toString('hex')}`;
}

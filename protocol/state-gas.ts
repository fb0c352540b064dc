/**
 * EIP-8037's state gas, as EIP-8141 draws it from each frame's own `limits.state`: creating an
 * account, depositing code and setting a storage slot cost the state bytes they add, at
 * `COST_PER_STATE_BYTE` each. A charge the frame's pool cannot cover halts the frame.
 */
export const COST_PER_STATE_BYTE = 1_530n;
export const STATE_BYTES_PER_NEW_ACCOUNT = 120n;
export const STATE_BYTES_PER_STORAGE_SET = 64n;

/** What a deploy frame's creations cost: the account (if it did not exist), its code, its new slots. */
export function deployStateGas({ created, codeBytes, newSlots }: { created: boolean; codeBytes: number; newSlots: number }): bigint {
  const bytes = (created ? STATE_BYTES_PER_NEW_ACCOUNT : 0n) + BigInt(codeBytes) + STATE_BYTES_PER_STORAGE_SET * BigInt(newSlots);
  return bytes * COST_PER_STATE_BYTE;
}

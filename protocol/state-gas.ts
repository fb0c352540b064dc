/**
 * EIP-8037's state gas as the pin states it (EIP-8141's constants table): what each state byte
 * costs and how many bytes a new account is. The EVM charges it (protocol/evm, whose fork holds
 * the same values: test/protocol/evm/fork.test.ts); APPROVE's creation of the sender charges it
 * here. A charge the frame's pool cannot cover halts the frame.
 */
export const COST_PER_STATE_BYTE = 1_530n;
export const STATE_BYTES_PER_NEW_ACCOUNT = 120n;

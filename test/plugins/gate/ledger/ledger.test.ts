import { once } from 'node:events';
import { deserialize, serialize } from 'node:v8';
import { expect } from 'chai';
import { keccak256, toUtf8Bytes } from 'ethers';
import { Redis } from 'ioredis';
import type { StateDependencies } from '../../../../plugins/gate/head/dependencies.js';
import {
  carriedLedger,
  createLedger,
  MemoryLedger,
  PrimaryLedger,
  RedisLedger,
  type Ledger,
  type LedgerOptions,
  type Reservation,
} from '../../../../plugins/gate/ledger/ledger.js';
import { CarryOver } from '../../../../src/carry-over.js';
import { Fleet } from '../../../../src/fleet.js';
import { createLogger } from '../../../../src/log.js';
import type { PrimaryCall } from '../../../../src/plugin.js';
import { startRedis, type RedisServer } from '../../../helpers/redis.js';

const ALICE = `0x${'11'.repeat(20)}`;
const BOB = `0x${'22'.repeat(20)}`;
const CAROL = `0x${'33'.repeat(20)}`;
const SPONSOR = `0x${'33'.repeat(20)}`;
const HEAD = 100n;
const TX = `0x${'aa'.repeat(32)}`;
const OTHER_TX = `0x${'bb'.repeat(32)}`;

const OPTIONS: LedgerOptions = { duplicateWindowMs: 60_000, verdictTtlMs: 60_000, maxEntries: 1_000, skipAfterBlocks: 3n };

/** RedisLedger's key layout: every instance of a fleet (and of a rolling upgrade) must share it. */
const KEY = {
  admitted: (hash: string) => `svc-ingress:gate:admitted:${hash}`,
  refused: (hash: string) => `svc-ingress:gate:refused:${hash}`,
  inFlight: (sender: string) => `svc-ingress:gate:inflight:${sender}`,
  reserved: (payer: string) => `svc-ingress:gate:reserved:${payer}`,
};
/** ledger.ts IN_FLIGHT_TTL_MS. */
const IN_FLIGHT_TTL_MS = 10 * 60_000;

/** A transaction hash that names its sender's first byte and its nonce, so that failures read. */
const hashOf = (sender: string, nonce: bigint) => `0x${sender.slice(2, 4)}${nonce.toString(16).padStart(62, '0')}`;

interface Slot {
  readonly sender?: string;
  readonly nonce: bigint;
  readonly head?: bigint;
  readonly stateNonce?: bigint;
  readonly cap?: number;
  readonly payer?: string;
  readonly cost?: bigint;
  readonly hash?: string;
  readonly contiguous?: boolean;
  readonly payerCap?: number;
  readonly authorities?: readonly string[];
}

/** Reserves Alice's `nonce` at HEAD, state nonce 0, cap 16, 1 wei she pays herself, gaps allowed, unless told otherwise. */
function take(ledger: Ledger, slot: Slot): Promise<Reservation> {
  const {
    sender = ALICE,
    nonce,
    head = HEAD,
    stateNonce = 0n,
    cap = 16,
    payer = sender,
    cost = 1n,
    hash = hashOf(sender, nonce),
    contiguous = false,
    payerCap,
    authorities,
  } = slot;
  return ledger.reserve({
    sender,
    entry: { hash, nonce, payer, cost, head, ...(authorities === undefined ? {} : { authorities }) },
    stateNonce,
    cap,
    contiguous,
    ...(payerCap === undefined ? {} : { payerCap }),
  });
}

/** Polls (bounded) until `hash` has left the duplicate window; returns the ms since `since`. */
async function windowClosedAfter(ledger: Ledger, hash: string, since: number): Promise<number> {
  for (const deadline = since + 5_000; await ledger.isAdmitted(hash); ) {
    if (Date.now() > deadline) throw new Error(`${hash} still admitted after 5000 ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - since;
}

const DEPENDENCIES: StateDependencies = {
  accounts: [[ALICE, '7', '1000000000000000000']],
  codes: [
    [BOB, `0x${'cd'.repeat(32)}`],
    [SPONSOR, '0x'],
  ],
  slots: [[BOB, `0x${'00'.repeat(31)}01`, `0x${'00'.repeat(31)}2a`]],
};
/** What every ledger keeps of them: the keys (slots without leading zeros), and keccak-256 of the values' canonical JSON. */
const STORED_DEPENDENCIES = {
  accounts: ALICE,
  codes: `${BOB},${SPONSOR}`,
  slots: [[BOB, '0x1']],
  digest: keccak256(
    toUtf8Bytes(JSON.stringify([[['7', '1000000000000000000']], [`0x${'cd'.repeat(32)}`, '0x'], [`0x${'00'.repeat(31)}2a`]])),
  ),
};
/** A refusal that read `count` sender slots, 32-byte keys if `wide` (an attacker's choice), else 0, 1, 2, … */
const refusalReading = (count: number, wide: boolean) => ({
  reason: 'verify-rejected',
  detail: 'VERIFY frame 0: out of gas',
  extra: { frame: 0, cause: 'out of gas' },
  byExecutionLayer: false,
  head: HEAD,
  dependencies: {
    accounts: [[ALICE, '1', '2'] as const],
    codes: [[ALICE, `0x${'cd'.repeat(32)}`] as const],
    slots: Array.from({ length: count }, (_, i) => {
      const slot = wide
        ? `0x${(BigInt(keccak256(toUtf8Bytes(String(i)))) | (1n << 255n)).toString(16)}`
        : `0x${i.toString(16).padStart(64, '0')}`;
      return [ALICE, slot, `0x${'ff'.repeat(32)}`] as const;
    }),
  },
});

/**
 * One behaviour table, run as is against every ledger: each row runs its steps on a fresh ledger
 * and returns what it saw, named by step, so that a failing row says which step two homes
 * disagree on. The rows at exactly the state nonce and exactly head + skipAfterBlocks are the
 * ones that tell `<` from `<=` and `>=` from `>` in the Lua script.
 */
interface Row {
  readonly name: string;
  readonly options?: Partial<LedgerOptions>;
  run(ledger: Ledger): Promise<Record<string, unknown>>;
  readonly expected: Record<string, unknown>;
}

const ROWS: Row[] = [
  // The duplicate window.
  {
    name: 'claims a hash once: the second claim is refused and the hash reads admitted',
    async run(ledger) {
      const before = await ledger.isAdmitted(TX);
      const first = await ledger.claim(TX);
      const second = await ledger.claim(TX);
      return { before, first, second, admitted: await ledger.isAdmitted(TX), other: await ledger.isAdmitted(OTHER_TX) };
    },
    expected: { before: false, first: true, second: false, admitted: true, other: false },
  },
  {
    name: 'lets a hash be claimed again after unclaim, and leaves other claims alone',
    async run(ledger) {
      await ledger.claim(TX);
      await ledger.claim(OTHER_TX);
      await ledger.unclaim(TX);
      const admitted = await ledger.isAdmitted(TX);
      const other = await ledger.isAdmitted(OTHER_TX);
      return { admitted, other, again: await ledger.claim(TX), otherAgain: await ledger.claim(OTHER_TX) };
    },
    expected: { admitted: false, other: true, again: true, otherAgain: false },
  },
  {
    name: 'unclaims a hash never claimed without effect',
    async run(ledger) {
      await ledger.unclaim(TX);
      return { admitted: await ledger.isAdmitted(TX), claimed: await ledger.claim(TX) };
    },
    expected: { admitted: false, claimed: true },
  },
  {
    name: 'closes the duplicate window duplicateWindowMs (50 ms) after the claim, not before',
    options: { duplicateWindowMs: 50 },
    async run(ledger) {
      const since = Date.now();
      const first = await ledger.claim(TX);
      const second = await ledger.claim(TX);
      const closedAfterMs = await windowClosedAfter(ledger, TX, since);
      // 1 ms of slack: Redis and this process round the same clock to milliseconds apart.
      return { first, second, closedAfterWindow: closedAfterMs >= 49, again: await ledger.claim(TX) };
    },
    expected: { first: true, second: false, closedAfterWindow: true, again: true },
  },

  // Cached refusals.
  {
    name: 'replays a state-bound refusal as stored: head past 2^53, extra and dependencies included',
    async run(ledger) {
      await ledger.remember(TX, {
        reason: 'validation-prefix-reverted',
        detail: 'frame 0 reverted',
        extra: { frame: 0, cause: '0x08c379a0' },
        byExecutionLayer: false,
        head: 2n ** 64n + 1n,
        dependencies: DEPENDENCIES,
      });
      return { refusal: await ledger.refusal(TX) };
    },
    expected: {
      refusal: {
        reason: 'validation-prefix-reverted',
        detail: 'frame 0 reverted',
        extra: { frame: 0, cause: '0x08c379a0' },
        byExecutionLayer: false,
        head: 18446744073709551617n,
        dependencies: STORED_DEPENDENCIES,
      },
    },
  },
  {
    name: 'keeps a refusal that read 47 sender slots under 2 KB: a digest of its 47 keys, or none when the keys alone are too long',
    async run(ledger) {
      await ledger.remember(TX, refusalReading(47, false));
      await ledger.remember(OTHER_TX, refusalReading(47, true));
      const [narrow, wide] = [(await ledger.refusal(TX))!, (await ledger.refusal(OTHER_TX))!];
      const size = (refusal: object) => JSON.stringify(refusal, (_, v) => (typeof v === 'bigint' ? v.toString() : v)).length;
      const { dependencies } = narrow as { dependencies?: { slots: Array<[string, string]>; digest: string } };
      return {
        narrowSlots: dependencies?.slots[0]?.[1].split(',').length,
        narrowDigest: typeof dependencies?.digest,
        wideDependencies: 'dependencies' in wide,
        under2Kb: [size(narrow), size(wide)].every((bytes) => bytes <= 2_048),
        wideHead: wide.head,
      };
    },
    expected: { narrowSlots: 47, narrowDigest: 'string', wideDependencies: false, under2Kb: true, wideHead: HEAD },
  },
  {
    name: 'replays a refusal that does not depend on state with head undefined',
    async run(ledger) {
      await ledger.remember(TX, { reason: 'sig-invalid', detail: 'bad signature', byExecutionLayer: true, head: undefined });
      return { refusal: await ledger.refusal(TX) };
    },
    expected: { refusal: { reason: 'sig-invalid', detail: 'bad signature', byExecutionLayer: true, head: undefined } },
  },
  {
    name: 'answers no refusal for an unknown hash, replaces a refusal, and keeps refusals apart from admissions',
    async run(ledger) {
      const unknown = await ledger.refusal(TX);
      await ledger.remember(TX, { reason: 'nonce-too-low', detail: 'first', byExecutionLayer: false, head: 5n });
      await ledger.remember(TX, { reason: 'insufficient-funds', detail: 'second', byExecutionLayer: false, head: 6n });
      await ledger.claim(OTHER_TX);
      const refusal = await ledger.refusal(TX);
      return { unknown, refusal, refusedAdmitted: await ledger.isAdmitted(TX), admittedRefusal: await ledger.refusal(OTHER_TX) };
    },
    expected: {
      unknown: undefined,
      refusal: { reason: 'insufficient-funds', detail: 'second', byExecutionLayer: false, head: 6n },
      refusedAdmitted: false,
      admittedRefusal: undefined,
    },
  },

  // In-flight slots.
  {
    name: "reserves a nonce once: 'nonce-in-flight' for the same nonce, whatever its hash",
    async run(ledger) {
      const first = await take(ledger, { nonce: 0n });
      const same = await take(ledger, { nonce: 0n });
      const replacement = await take(ledger, { nonce: 0n, hash: TX });
      return { first, same, replacement, next: await take(ledger, { nonce: 1n }) };
    },
    expected: { first: 'ok', same: 'nonce-in-flight', replacement: 'nonce-in-flight', next: 'ok' },
  },
  {
    name: "answers 'cap' once the sender holds cap slots; a nonce in flight is told before the cap",
    async run(ledger) {
      const first = await take(ledger, { nonce: 0n, cap: 2 });
      const second = await take(ledger, { nonce: 1n, cap: 2 });
      const third = await take(ledger, { nonce: 2n, cap: 2 });
      const takenAtCap = await take(ledger, { nonce: 1n, cap: 2 });
      return { first, second, third, takenAtCap, capZero: await take(ledger, { sender: BOB, nonce: 0n, cap: 0 }) };
    },
    expected: { first: 'ok', second: 'ok', third: 'cap', takenAtCap: 'nonce-in-flight', capZero: 'cap' },
  },
  {
    name: 'with contiguous nonces: takes a nonce ahead of the state nonce only over every nonce between in flight',
    async run(ledger) {
      const gapped = await take(ledger, { nonce: 7n, stateNonce: 5n, contiguous: true });
      const first = await take(ledger, { nonce: 5n, stateNonce: 5n, contiguous: true });
      const stillGapped = await take(ledger, { nonce: 7n, stateNonce: 5n, contiguous: true });
      const next = await take(ledger, { nonce: 6n, stateNonce: 5n, contiguous: true });
      const third = await take(ledger, { nonce: 7n, stateNonce: 5n, contiguous: true });
      // 5 executed: the state nonce moves to 6, and 6 and 7 still make a run for 8.
      const afterExecution = await take(ledger, { nonce: 8n, stateNonce: 6n, contiguous: true });
      return { gapped, first, stillGapped, next, third, afterExecution, reserved: await ledger.reserved(ALICE, HEAD) };
    },
    expected: { gapped: 'gap', first: 'ok', stillGapped: 'gap', next: 'ok', third: 'ok', afterExecution: 'ok', reserved: 3n },
  },
  {
    name: 'with a payer cap of 1: a paymaster pays for one pending transaction, from any sender, until the head shows it done',
    async run(ledger) {
      const paymaster = '0x00000000000000000000000000000000000f00d5';
      const first = await take(ledger, { sender: ALICE, nonce: 0n, payer: paymaster, payerCap: 1 });
      const second = await take(ledger, { sender: BOB, nonce: 0n, payer: paymaster, payerCap: 1 });
      const uncapped = await take(ledger, { sender: BOB, nonce: 0n, payer: paymaster });
      // Three heads later (skipAfterBlocks 3) they count as done: the paymaster may pay again.
      const stillHeld = await take(ledger, { sender: CAROL, nonce: 0n, payer: paymaster, payerCap: 1, head: HEAD + 2n });
      const nextHead = await take(ledger, { sender: CAROL, nonce: 0n, payer: paymaster, payerCap: 1, head: HEAD + 3n });
      return { first, second, uncapped, stillHeld, nextHead };
    },
    expected: { first: 'ok', second: 'payer-cap', uncapped: 'ok', stillHeld: 'payer-cap', nextHead: 'ok' },
  },
  {
    name: "answers a sender's pending transactions: at or above the state nonce, not yet skipped",
    options: { skipAfterBlocks: 3n },
    async run(ledger) {
      for (const nonce of [4n, 5n]) await take(ledger, { nonce, head: 100n, cost: 9n });
      await take(ledger, { nonce: 6n, head: 101n });
      const shape = (entries: readonly { hash: string; nonce: bigint; payer: string; cost: bigint; head: bigint }[]) =>
        [...entries]
          .sort((a, b) => Number(a.nonce - b.nonce))
          .map((e) => [e.hash === hashOf(ALICE, e.nonce), e.nonce, e.payer, e.cost, e.head]);
      return {
        atTaken: shape(await ledger.pending(ALICE, 5n, 100n)),
        atSkipOfTheFirst: shape(await ledger.pending(ALICE, 5n, 103n)),
        nobody: shape(await ledger.pending(BOB, 0n, 100n)),
      };
    },
    expected: {
      atTaken: [
        [true, 5n, ALICE, 9n, 100n],
        [true, 6n, ALICE, 1n, 101n],
      ],
      atSkipOfTheFirst: [[true, 6n, ALICE, 1n, 101n]],
      nobody: [],
    },
  },
  {
    name: 'frees the slots below the state nonce and keeps the slot exactly at it',
    async run(ledger) {
      for (const nonce of [4n, 5n, 6n]) await take(ledger, { nonce, cost: 10n });
      // State nonce 6: 4 and 5 are done, 6 is not (a `<=` would free it).
      const atStateNonce = await take(ledger, { nonce: 6n, stateNonce: 6n, cap: 2 });
      const nextFits = await take(ledger, { nonce: 7n, stateNonce: 6n, cap: 2, cost: 10n });
      const full = await take(ledger, { nonce: 8n, stateNonce: 6n, cap: 2 });
      return { atStateNonce, nextFits, full, reserved: await ledger.reserved(ALICE, HEAD) };
    },
    expected: { atStateNonce: 'nonce-in-flight', nextFits: 'ok', full: 'cap', reserved: 20n },
  },
  {
    name: 'with skipAfterBlocks 1: a slot taken at head 100 is held at 100 and freed at 101',
    options: { skipAfterBlocks: 1n },
    async run(ledger) {
      await take(ledger, { nonce: 0n, head: 100n, cost: 5n });
      const atTakenHead = await take(ledger, { nonce: 0n, head: 100n });
      const reservedBefore = await ledger.reserved(ALICE, 100n);
      const atSkip = await take(ledger, { nonce: 0n, head: 101n, cost: 7n });
      return { atTakenHead, reservedBefore, atSkip, reserved: await ledger.reserved(ALICE, 101n) };
    },
    expected: { atTakenHead: 'nonce-in-flight', reservedBefore: 5n, atSkip: 'ok', reserved: 7n },
  },
  {
    name: 'with skipAfterBlocks 3: a slot taken at head 100 is held at 102 and freed at exactly 103',
    options: { skipAfterBlocks: 3n },
    async run(ledger) {
      await take(ledger, { nonce: 0n, head: 100n, cost: 5n });
      await take(ledger, { nonce: 1n, head: 101n, cost: 6n });
      // A `>` in place of `>=` would still hold nonce 0 at 103.
      const oneShort = await take(ledger, { nonce: 0n, head: 102n, cap: 2 });
      const atSkip = await take(ledger, { nonce: 0n, head: 103n, cost: 7n, cap: 2 });
      const laterSlotKept = await take(ledger, { nonce: 1n, head: 103n, cap: 2 });
      return { oneShort, atSkip, laterSlotKept, reserved: await ledger.reserved(ALICE, 103n) };
    },
    expected: { oneShort: 'nonce-in-flight', atSkip: 'ok', laterSlotKept: 'nonce-in-flight', reserved: 13n },
  },
  {
    name: 'counts a slot pending from the head its acknowledgement saw: judged at 100, ordered at 102, held at 102, freed at 103',
    options: { skipAfterBlocks: 1n },
    async run(ledger) {
      await take(ledger, { nonce: 0n, head: 100n, cost: 5n, payer: BOB });
      await ledger.acknowledged(ALICE, 0n, hashOf(ALICE, 0n), 102n);
      // Never backwards, and only for the hash that holds the slot.
      await ledger.acknowledged(ALICE, 0n, hashOf(ALICE, 0n), 101n);
      await ledger.acknowledged(ALICE, 0n, TX, 200n);
      const reservedAt102 = await ledger.reserved(BOB, 102n);
      const heldAt102 = await take(ledger, { nonce: 0n, head: 102n, hash: TX });
      const reservedAt103 = await ledger.reserved(BOB, 103n);
      const freedAt103 = await take(ledger, { nonce: 0n, head: 103n, hash: TX });
      return { reservedAt102, heldAt102, reservedAt103, freedAt103 };
    },
    expected: { reservedAt102: 5n, heldAt102: 'nonce-in-flight', reservedAt103: 0n, freedAt103: 'ok' },
  },
  {
    name: 'releases a slot only for the hash that holds it, at its nonce, for its sender',
    async run(ledger) {
      await take(ledger, { nonce: 0n, cost: 5n });
      await ledger.release(ALICE, 0n, TX);
      await ledger.release(ALICE, 1n, hashOf(ALICE, 0n));
      await ledger.release(BOB, 0n, hashOf(ALICE, 0n));
      const keptAfterWrongReleases = await take(ledger, { nonce: 0n });
      const reservedKept = await ledger.reserved(ALICE, HEAD);
      await ledger.release(ALICE, 0n, hashOf(ALICE, 0n));
      const reservedAfterRelease = await ledger.reserved(ALICE, HEAD);
      return { keptAfterWrongReleases, reservedKept, reservedAfterRelease, retaken: await take(ledger, { nonce: 0n }) };
    },
    expected: { keptAfterWrongReleases: 'nonce-in-flight', reservedKept: 5n, reservedAfterRelease: 0n, retaken: 'ok' },
  },
  {
    name: "counts an authorization's account as delegated exactly while its slot lives: released, executed or skipped, it is not",
    options: { skipAfterBlocks: 3n },
    async run(ledger) {
      const carol = `0x${'c0'.repeat(20)}`;
      await take(ledger, { nonce: 0n, authorities: [SPONSOR, carol] });
      const taken = await Promise.all([SPONSOR, carol, BOB].map((who) => ledger.delegating(who, HEAD)));
      await ledger.release(ALICE, 0n, hashOf(ALICE, 0n));
      const released = await ledger.delegating(SPONSOR, HEAD);
      await take(ledger, { nonce: 1n, authorities: [SPONSOR] });
      const atLastHead = await ledger.delegating(SPONSOR, HEAD + 2n);
      const skipped = await ledger.delegating(SPONSOR, HEAD + 3n);
      await take(ledger, { nonce: 2n, authorities: [carol] });
      // Alice's state nonce passes it: her next submission prunes the slot, and the delegation with it.
      await take(ledger, { nonce: 3n, stateNonce: 3n });
      return { taken, released, atLastHead, skipped, executed: await ledger.delegating(carol, HEAD) };
    },
    expected: { taken: [true, true, false], released: false, atLastHead: true, skipped: false, executed: false },
  },
  {
    name: 'tells a payer sponsoring another sender apart from one paying for itself, executed or not, until the head shows it skipped',
    options: { skipAfterBlocks: 3n },
    async run(ledger) {
      // Alice's own two (executed or not: no state nonce is asked here).
      await take(ledger, { nonce: 0n, cost: 5n });
      await take(ledger, { nonce: 1n });
      const ownOnly = await ledger.sponsoring(ALICE, HEAD);
      await take(ledger, { sender: BOB, nonce: 0n, payer: ALICE });
      const another = await ledger.sponsoring(ALICE, HEAD + 2n);
      return { ownOnly, another, skipped: await ledger.sponsoring(ALICE, HEAD + 3n), bob: await ledger.sponsoring(BOB, HEAD) };
    },
    expected: { ownOnly: false, another: true, skipped: false, bob: false },
  },
  {
    name: 'sums reserved costs per payer across senders, apart from the senders themselves',
    async run(ledger) {
      await take(ledger, { nonce: 0n, cost: 10n });
      await take(ledger, { nonce: 1n, cost: 20n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 0n, cost: 300n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 1n, cost: 4000n });
      const [alice, bob, sponsor] = await Promise.all([ALICE, BOB, SPONSOR].map((payer) => ledger.reserved(payer, HEAD)));
      return { alice, bob, sponsor, nobody: await ledger.reserved(`0x${'44'.repeat(20)}`, HEAD) };
    },
    expected: { alice: 10n, bob: 4000n, sponsor: 320n, nobody: 0n },
  },
  {
    name: 'sums wei amounts past 2^53 exactly',
    async run(ledger) {
      await take(ledger, { nonce: 0n, cost: 2n ** 64n + 1n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 0n, cost: 2n ** 70n + 3n, payer: SPONSOR });
      return { sponsor: await ledger.reserved(SPONSOR, HEAD) };
    },
    expected: { sponsor: 2n ** 64n + 2n ** 70n + 4n },
  },
  {
    name: "drops the payer's reservation of a released slot and of slots its sender's reserve frees by state nonce or head",
    async run(ledger) {
      // Each sum asked at HEAD, where none of these is done: only the release and reserve free them.
      await take(ledger, { nonce: 0n, cost: 1n, payer: SPONSOR });
      await take(ledger, { nonce: 1n, cost: 20n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 0n, cost: 300n, payer: SPONSOR, head: HEAD });
      await take(ledger, { sender: BOB, nonce: 1n, cost: 4000n, payer: SPONSOR, head: HEAD + 1n });
      const all = await ledger.reserved(SPONSOR, HEAD);
      await ledger.release(ALICE, 1n, hashOf(ALICE, 1n));
      const released = await ledger.reserved(SPONSOR, HEAD);
      await take(ledger, { nonce: 2n, stateNonce: 1n, cost: 50_000n });
      const freedByNonce = await ledger.reserved(SPONSOR, HEAD);
      await take(ledger, { sender: BOB, nonce: 2n, head: HEAD + 3n, cost: 600_000n });
      const freedByHead = await ledger.reserved(SPONSOR, HEAD);
      return { all, released, freedByNonce, freedByHead, alice: await ledger.reserved(ALICE, HEAD), bob: await ledger.reserved(BOB, HEAD) };
    },
    expected: { all: 4321n, released: 4301n, freedByNonce: 4300n, freedByHead: 4000n, alice: 50_000n, bob: 600_000n },
  },
  {
    name: "with skipAfterBlocks 3: stops counting a one-off sponsored sender's reservation at exactly taken head + 3, though the sender never returns",
    async run(ledger) {
      await take(ledger, { nonce: 0n, head: 100n, cost: 7n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 0n, head: 101n, cost: 300n, payer: SPONSOR });
      const atTaken = await ledger.reserved(SPONSOR, 100n);
      // A `>` in place of `>=` would still count Alice's at 103.
      const oneShort = await ledger.reserved(SPONSOR, 102n);
      const atSkip = await ledger.reserved(SPONSOR, 103n);
      // Dropped, not skipped over: asked again at an earlier head, it stays gone.
      const earlierAgain = await ledger.reserved(SPONSOR, 100n);
      const bobAtSkip = await ledger.reserved(SPONSOR, 104n);
      const retaken = await take(ledger, { nonce: 0n, head: 104n, cost: 50n, payer: SPONSOR });
      return { atTaken, oneShort, atSkip, earlierAgain, bobAtSkip, retaken, reserved: await ledger.reserved(SPONSOR, 104n) };
    },
    expected: { atTaken: 307n, oneShort: 307n, atSkip: 300n, earlierAgain: 300n, bobAtSkip: 0n, retaken: 'ok', reserved: 50n },
  },
  {
    name: "counts a reservation its sender's state nonce passed until the sender reserves again (the payer knows no state nonce)",
    async run(ledger) {
      await take(ledger, { nonce: 0n, cost: 7n, payer: SPONSOR });
      await take(ledger, { sender: BOB, nonce: 5n, stateNonce: 5n, head: HEAD + 2n });
      const otherSenderCame = await ledger.reserved(SPONSOR, HEAD + 2n);
      await take(ledger, { nonce: 1n, stateNonce: 1n, head: HEAD + 2n });
      return { otherSenderCame, senderCame: await ledger.reserved(SPONSOR, HEAD + 2n) };
    },
    expected: { otherSenderCame: 7n, senderCame: 0n },
  },
  {
    name: "drops only the asked payer's done reservations: its live ones and the sender's other payers' stay",
    async run(ledger) {
      await take(ledger, { nonce: 0n, cost: 7n, payer: SPONSOR });
      await take(ledger, { nonce: 1n, cost: 10n });
      await take(ledger, { nonce: 2n, cost: 20n, payer: SPONSOR, head: HEAD + 1n });
      const sponsor = await ledger.reserved(SPONSOR, HEAD + 3n);
      const selfSlotKept = await take(ledger, { nonce: 1n, head: HEAD + 2n });
      return { sponsor, selfSlotKept, alice: await ledger.reserved(ALICE, HEAD + 2n) };
    },
    expected: { sponsor: 20n, selfSlotKept: 'nonce-in-flight', alice: 10n },
  },
  {
    name: 'keeps two senders apart: same nonces, separate caps, pruning one frees nothing of the other',
    async run(ledger) {
      const alice = await take(ledger, { nonce: 0n, cap: 1 });
      const bobSameNonce = await take(ledger, { sender: BOB, nonce: 0n, cap: 1 });
      const aliceCap = await take(ledger, { nonce: 1n, cap: 1 });
      const bobCap = await take(ledger, { sender: BOB, nonce: 1n, cap: 1 });
      const aliceFreed = await take(ledger, { nonce: 1n, stateNonce: 1n, head: HEAD + 3n, cap: 1 });
      return { alice, bobSameNonce, aliceCap, bobCap, aliceFreed, bobKept: await take(ledger, { sender: BOB, nonce: 0n, cap: 1 }) };
    },
    expected: { alice: 'ok', bobSameNonce: 'ok', aliceCap: 'cap', bobCap: 'cap', aliceFreed: 'ok', bobKept: 'nonce-in-flight' },
  },
];

describe('gate: ledger', () => {
  let server: RedisServer;
  let redis: Redis;

  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    await redis?.quit();
    await server?.stop();
  });

  const homes: ReadonlyArray<{ name: string; open(options: LedgerOptions): Promise<Ledger> }> = [
    { name: 'MemoryLedger', open: async (options) => new MemoryLedger(options) },
    {
      name: 'RedisLedger',
      open: async (options) => {
        await redis.flushdb();
        return new RedisLedger(redis, options);
      },
    },
    {
      name: 'PrimaryLedger',
      // A MemoryLedger per key, built from the init the call carries, as the primary builds it; the
      // V8 serializer copies args and answers, as the cluster's IPC channel (advanced serialization) does.
      open: async (options) => {
        const copy = <T>(value: T): T => deserialize(serialize(value)) as T;
        const hosted = new Map<string, Ledger>();
        const call: PrimaryCall = async (service, key, init, method, args) => {
          expect(service).to.equal('gate-ledger');
          const ledger = hosted.get(key) ?? new MemoryLedger(copy(init) as LedgerOptions);
          hosted.set(key, ledger);
          return copy(await (ledger as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...copy(args)));
        };
        return new PrimaryLedger(call, options);
      },
    },
  ];

  for (const home of homes) {
    describe(home.name, () => {
      for (const row of ROWS) {
        it(row.name, async () => {
          const ledger = await home.open({ ...OPTIONS, ...row.options });
          expect(await row.run(ledger)).to.deep.equal(row.expected);
        });
      }
    });
  }

  describe('RedisLedger: what it leaves in Redis', () => {
    let ledger: RedisLedger;
    beforeEach(async () => {
      await redis.flushdb();
      ledger = new RedisLedger(redis, { ...OPTIONS, duplicateWindowMs: 30_000, verdictTtlMs: 20_000 });
    });

    /** Each key's fields and whether its TTL lies in (0, ttlMs]. */
    const hashWithTtl = async (key: string, ttlMs: number) => {
      const ttl = await redis.pttl(key);
      return { fields: await redis.hgetall(key), ttlSet: ttl > 0 && ttl <= ttlMs };
    };

    it('admits with PX duplicateWindowMs and remembers refusals with PX verdictTtlMs', async () => {
      await ledger.claim(TX);
      await ledger.remember(OTHER_TX, { reason: 'sig-invalid', detail: 'bad signature', byExecutionLayer: false, head: undefined });
      const [admittedTtl, refusedTtl] = await Promise.all([redis.pttl(KEY.admitted(TX)), redis.pttl(KEY.refused(OTHER_TX))]);
      expect(admittedTtl).to.be.within(29_000, 30_000);
      expect(refusedTtl).to.be.within(19_000, 20_000);
      expect(JSON.parse((await redis.get(KEY.refused(OTHER_TX)))!)).to.deep.equal({
        reason: 'sig-invalid',
        detail: 'bad signature',
        byExecutionLayer: false,
        head: null,
      });
    });

    it("stores a slot as hash|payer|cost|head under the sender, and cost|head under the payer's hash", async () => {
      expect(await take(ledger, { nonce: 7n, cost: 123n, payer: SPONSOR, head: 456n })).to.equal('ok');
      expect(await hashWithTtl(KEY.inFlight(ALICE), IN_FLIGHT_TTL_MS)).to.deep.equal({
        fields: { '7': `${hashOf(ALICE, 7n)}|${SPONSOR}|123|456` },
        ttlSet: true,
      });
      expect(await hashWithTtl(KEY.reserved(SPONSOR), IN_FLIGHT_TTL_MS)).to.deep.equal({
        fields: { [hashOf(ALICE, 7n)]: '123|456' },
        ttlSet: true,
      });
    });

    it("deletes the payer's field (HDEL) of a slot freed by state nonce, by head, or released", async () => {
      await take(ledger, { nonce: 0n, cost: 1n, payer: SPONSOR, head: HEAD });
      await take(ledger, { nonce: 1n, cost: 20n, payer: SPONSOR, head: HEAD + 1n });
      await take(ledger, { sender: BOB, nonce: 0n, cost: 300n, payer: SPONSOR, head: HEAD });
      await take(ledger, { sender: BOB, nonce: 1n, cost: 4000n, payer: SPONSOR, head: HEAD + 1n });

      // Alice's nonce 0 goes by state nonce, her nonce 1 stays; she pays her new slot herself.
      await take(ledger, { nonce: 2n, stateNonce: 1n, head: HEAD + 1n });
      expect(await redis.hgetall(KEY.reserved(SPONSOR))).to.deep.equal({
        [hashOf(ALICE, 1n)]: '20|101',
        [hashOf(BOB, 0n)]: '300|100',
        [hashOf(BOB, 1n)]: '4000|101',
      });
      // Bob's nonce 0 goes by head (taken at HEAD, now HEAD + 3), his nonce 1 stays.
      await take(ledger, { sender: BOB, nonce: 2n, head: HEAD + 3n });
      await ledger.release(ALICE, 1n, hashOf(ALICE, 1n));
      expect(await redis.hgetall(KEY.reserved(SPONSOR))).to.deep.equal({ [hashOf(BOB, 1n)]: '4000|101' });
      expect((await redis.hkeys(KEY.inFlight(ALICE))).sort()).to.deep.equal(['2']);
      expect((await redis.hkeys(KEY.inFlight(BOB))).sort()).to.deep.equal(['1', '2']);

      await ledger.release(BOB, 1n, hashOf(BOB, 1n));
      expect(await redis.exists(KEY.reserved(SPONSOR))).to.equal(0);
    });

    it('leaves both hashes as they were when a release names another hash', async () => {
      await take(ledger, { nonce: 0n, cost: 9n, payer: SPONSOR });
      await ledger.release(ALICE, 0n, TX);
      expect(await redis.hgetall(KEY.inFlight(ALICE))).to.deep.equal({ '0': `${hashOf(ALICE, 0n)}|${SPONSOR}|9|${HEAD}` });
      expect(await redis.hgetall(KEY.reserved(SPONSOR))).to.deep.equal({ [hashOf(ALICE, 0n)]: `9|${HEAD}` });
    });

    it("deletes the payer's fields (HDEL) that the head asked at shows done, and the key with the last", async () => {
      await take(ledger, { nonce: 0n, cost: 7n, payer: SPONSOR, head: HEAD });
      await take(ledger, { sender: BOB, nonce: 0n, cost: 300n, payer: SPONSOR, head: HEAD + 1n });
      const both = { [hashOf(ALICE, 0n)]: '7|100', [hashOf(BOB, 0n)]: '300|101' };

      await ledger.reserved(SPONSOR, HEAD + 2n);
      expect(await hashWithTtl(KEY.reserved(SPONSOR), IN_FLIGHT_TTL_MS), 'one short').to.deep.equal({ fields: both, ttlSet: true });
      await ledger.reserved(SPONSOR, HEAD + 3n);
      expect(await hashWithTtl(KEY.reserved(SPONSOR), IN_FLIGHT_TTL_MS), 'at HEAD + 3').to.deep.equal({
        fields: { [hashOf(BOB, 0n)]: '300|101' },
        ttlSet: true,
      });
      await ledger.reserved(SPONSOR, HEAD + 4n);
      expect(await redis.exists(KEY.reserved(SPONSOR)), 'at HEAD + 4').to.equal(0);
    });

    it('drops a bare cost field (written before heads were stored), which no head can show done', async () => {
      await redis.hset(KEY.reserved(SPONSOR), hashOf(BOB, 0n), '500');
      await take(ledger, { nonce: 0n, cost: 7n, payer: SPONSOR, head: HEAD });
      expect(await ledger.reserved(SPONSOR, HEAD)).to.equal(7n);
      expect(await redis.hgetall(KEY.reserved(SPONSOR))).to.deep.equal({ [hashOf(ALICE, 0n)]: '7|100' });
    });
  });
});

describe('gate ledger across a reload', () => {
  it('hands the new chain the duplicate window, verdicts and in-flight slots while its numbers are unchanged', async () => {
    const first = new CarryOver();
    const ledger = carriedLedger(first, OPTIONS);
    expect(await ledger.claim('0xaa')).to.equal(true);
    const next = new CarryOver(first.kept);
    const kept = carriedLedger(next, { ...OPTIONS });
    expect(kept).to.equal(ledger);
    expect(await kept.claim('0xaa')).to.equal(false);
  });

  it('keeps them when its numbers change too, retuned once the new chain is adopted', async () => {
    const first = new CarryOver();
    const ledger = carriedLedger(first, OPTIONS);
    await ledger.claim('0xbb');
    const next = new CarryOver(first.kept);
    const kept = carriedLedger(next, { ...OPTIONS, duplicateWindowMs: 30_000, maxEntries: 1 });
    next.commit();
    expect(kept).to.equal(ledger);
    expect(await kept.isAdmitted('0xbb')).to.equal(true);
    // The new maxEntries (1): the next admission makes room.
    await kept.claim('0xcc');
    expect([await kept.isAdmitted('0xbb'), await kept.isAdmitted('0xcc')]).to.deep.equal([false, true]);
  });

  it("gives a slot taken before a reload back after it: released by the old chain's handle, or done by the head or the state nonce", async () => {
    const first = new CarryOver();
    const old = carriedLedger(first, { ...OPTIONS, skipAfterBlocks: 3n });
    await take(old, { nonce: 0n, cost: 5n, payer: SPONSOR });
    await take(old, { sender: BOB, nonce: 0n, cost: 7n, payer: SPONSOR });
    await take(old, { sender: CAROL, nonce: 0n, cost: 11n, payer: SPONSOR, head: HEAD + 1n });
    const next = new CarryOver(first.kept);
    const reloaded = carriedLedger(next, { ...OPTIONS, skipAfterBlocks: 3n });
    next.commit();
    expect(await reloaded.reserved(SPONSOR, HEAD), 'carried').to.equal(23n);
    // The admission that took Alice's slot before the reload refuses after it: its release.
    await old.release(ALICE, 0n, hashOf(ALICE, 0n));
    expect(await reloaded.reserved(SPONSOR, HEAD), 'released').to.equal(18n);
    // Bob's executed (his state nonce is past it), Carol's skipped (three heads after hers).
    expect(await reloaded.pending(BOB, 1n, HEAD), 'executed').to.deep.equal([]);
    expect(await reloaded.reserved(SPONSOR, HEAD + 4n), 'skipped').to.equal(0n);
  });

  it('PrimaryLedger: workers share one ledger in the primary whatever its numbers; new numbers retune it', async () => {
    const calls: Array<[string, string]> = [];
    const hosted = new Map<string, MemoryLedger>();
    const call: PrimaryCall = async (_service, key, init, method, args) => {
      calls.push([key, method]);
      const ledger = hosted.get(key) ?? new MemoryLedger(init as LedgerOptions);
      hosted.set(key, ledger);
      return (ledger as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
    };
    expect(await new PrimaryLedger(call, OPTIONS).claim('0xdd')).to.equal(true);
    const reloaded = new PrimaryLedger(call, { ...OPTIONS, duplicateWindowMs: 30_000 });
    expect(await reloaded.claim('0xdd')).to.equal(false);
    expect(hosted.size).to.equal(1);
    expect(calls.map(([, method]) => method)).to.deep.equal(['retune', 'claim', 'retune', 'claim']);
  });
});

describe('gate ledger in a fleet whose Redis fails and comes back (createLedger)', () => {
  let server: RedisServer;
  let fleet: Fleet;
  const ready = async () => {
    if (fleet.redis!.status !== 'ready') await once(fleet.redis!, 'ready');
  };
  before(async () => {
    server = await startRedis();
    fleet = new Fleet({ store: 'redis', redisUrl: server.url }, createLogger('error'));
    await ready();
  });
  after(async () => {
    await fleet?.close();
    await server?.stop();
  });

  it('gives back a slot taken locally during the outage when its release comes after Redis is back', async () => {
    const local = new MemoryLedger(OPTIONS);
    const ledger = createLedger(fleet, OPTIONS, local);
    await server.stop();
    expect(await take(ledger, { nonce: 0n, cost: 5n, payer: SPONSOR }), 'taken during the outage').to.equal('ok');
    expect(await local.reserved(SPONSOR, HEAD), 'held locally').to.equal(5n);
    await server.restart();
    await ready();
    await ledger.release(ALICE, 0n, hashOf(ALICE, 0n));
    expect(await local.reserved(SPONSOR, HEAD), 'given back locally').to.equal(0n);
    expect(await local.pending(ALICE, 0n, HEAD), 'and the nonce').to.deep.equal([]);
  });
});

/**
 * Paymaster turns (paymaster-turns.ts) where the gate's ledger is: Redis for a fleet, the primary
 * process for workers, this process's `PaymasterTurns` while neither answers. Without them a
 * source polling one instance took a paymaster's slot while a source waiting on another never
 * got its turn.
 */
import type { Redis } from 'ioredis';
import type { PrimaryCall, SharedState } from '../../../src/plugin.js';
import { type PaymasterTurns, type SlotTurns, WAITING_HEADS } from './paymaster-turns.js';

const PREFIX = 'svc-ingress:gate:turns:';
/** A paymaster nobody asks about for this long is forgotten. */
const TTL_MS = 10 * 60_000;
/** Sources waiting for one paymaster, at most; past it the one waiting longest is forgotten. */
const MAX_WAITING = 1_000;

/** A paymaster's turns: field `holder`, and `w:<source>` -> the head it was last refused at. */
const YIELDS_SCRIPT = `
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
local head, window = tonumber(ARGV[2]), tonumber(ARGV[3])
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'w:' then
    if head - tonumber(fields[i + 1]) > window then
      redis.call('HDEL', KEYS[1], fields[i])
    elseif string.sub(fields[i], 3) ~= ARGV[1] then
      return 1
    end
  end
end
return 0
`;

const WAITED_SCRIPT = `
redis.call('HSET', KEYS[1], 'w:' .. ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[4]) + 1 then
  local fields = redis.call('HGETALL', KEYS[1])
  local oldest, at
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'w:' and (at == nil or tonumber(fields[i + 1]) < at) then
      oldest, at = fields[i], tonumber(fields[i + 1])
    end
  end
  redis.call('HDEL', KEYS[1], oldest)
end
`;

const TOOK_SCRIPT = `
redis.call('HSET', KEYS[1], 'holder', ARGV[1])
redis.call('HDEL', KEYS[1], 'w:' .. ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
`;

export class RedisTurns implements SlotTurns {
  constructor(private readonly redis: Redis) {}

  async yields(paymaster: string, source: string, head: bigint) {
    return (await this.redis.eval(YIELDS_SCRIPT, 1, PREFIX + paymaster, source, head.toString(), WAITING_HEADS.toString())) === 1;
  }
  async waited(paymaster: string, source: string, head: bigint) {
    await this.redis.eval(WAITED_SCRIPT, 1, PREFIX + paymaster, source, head.toString(), String(TTL_MS), String(MAX_WAITING));
  }
  async took(paymaster: string, source: string) {
    await this.redis.eval(TOOK_SCRIPT, 1, PREFIX + paymaster, source, String(TTL_MS));
  }
}

/** The primary's `PaymasterTurns` (the gate's `shared` entry 'gate-turns'), for every worker. */
export class PrimaryTurns implements SlotTurns {
  constructor(private readonly callPrimary: PrimaryCall) {}

  async yields(paymaster: string, source: string, head: bigint) {
    return (await this.call('yields', paymaster, source, head)) as boolean;
  }
  async waited(paymaster: string, source: string, head: bigint) {
    await this.call('waited', paymaster, source, head);
  }
  async took(paymaster: string, source: string) {
    await this.call('took', paymaster, source);
  }

  private call(method: keyof SlotTurns, ...args: unknown[]): Promise<unknown> {
    return this.callPrimary('gate-turns', 'turns', {}, method, args);
  }
}

/** The shared turns, with `local` answering while they fail; `local` alone in one process. */
export function sharedTurns(state: SharedState, local: PaymasterTurns): SlotTurns {
  const here: SlotTurns = {
    yields: async (...args) => local.yields(...args),
    waited: async (...args) => local.waited(...args),
    took: async (...args) => local.took(...args),
  };
  const shared = state.home<SlotTurns>({ redis: (client) => new RedisTurns(client), primary: (call) => new PrimaryTurns(call) });
  if (shared === undefined) return here;
  const what = 'paymaster turns';
  return {
    yields: (...args) =>
      state.either(
        what,
        () => shared.yields(...args),
        () => here.yields(...args),
      ),
    waited: (...args) =>
      state.either(
        what,
        () => shared.waited(...args),
        () => here.waited(...args),
      ),
    took: (...args) =>
      state.either(
        what,
        () => shared.took(...args),
        () => here.took(...args),
      ),
  };
}

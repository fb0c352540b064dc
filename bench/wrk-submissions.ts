/**
 * Sends a list of `eth_sendRawTransaction` bodies once each over keep-alive clients with wrk
 * (Debian: apt-get install wrk), checking every answer against the exact admitted answer.
 *
 * wrk rather than a Node client: the load generator shares the two cores with the ingress and
 * the EL, and a Node client spent ~140 µs of CPU per submission (as much as a third of what the
 * ingress spends), wrk ~15 µs.
 *
 * Each body carries its index as the JSON-RPC id, so a Lua script can match an answer to its
 * expected text. Once every body is out, a client whose answer came back has nothing left to
 * send and sends a spare request instead (`eth_chainId`, id 0, not counted); so does wrk's
 * first call of the script, which checks it without sending. The run ends at the answer to the
 * last real body, so wrk's elapsed time is the submissions'.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { watch } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds } from './measure.js';

export interface SubmissionRun {
  readonly admitted: number;
  readonly ms: number;
  /** Refusals by their error message. */
  readonly refusals: ReadonlyMap<string, number>;
  /** CPU seconds wrk spent. */
  readonly generatorCpu: number;
}

const LUA = `
local ffi = require("ffi")
ffi.cdef[[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *now);
]]
local now = ffi.new("bench_timespec")
local function ms()
  ffi.C.clock_gettime(1, now) -- CLOCK_MONOTONIC
  return tonumber(now.tv_sec) * 1000 + tonumber(now.tv_nsec) / 1e6
end

local dir = DIR
local bodies, expected = {}, {}
for line in io.lines(dir .. "/bodies") do bodies[#bodies + 1] = line end
for line in io.lines(dir .. "/expected") do expected[#expected + 1] = line end
local spare = '{"jsonrpc":"2.0","id":0,"method":"eth_chainId","params":[]}'
local primed, sent, answered, admitted, started = false, 0, 0, 0, 0
local refused = {}

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  -- wrk calls request() once, unsent, to check the script: that call gets the spare.
  if not primed then
    primed = true
    return wrk.format(nil, nil, nil, spare)
  end
  if sent == #bodies then return wrk.format(nil, nil, nil, spare) end
  if sent == 0 then started = ms() end
  sent = sent + 1
  return wrk.format(nil, nil, nil, bodies[sent])
end

function response(status, headers, body)
  local id = tonumber(body:match('"id":(%d+)'))
  if id == nil or id == 0 then return end
  answered = answered + 1
  if body == expected[id] then
    admitted = admitted + 1
  else
    local why = body:match('"message":"(.-)"') or ("HTTP " .. status .. " " .. body:sub(1, 120))
    refused[why] = (refused[why] or 0) + 1
  end
  if answered == #bodies then
    local out = io.open(dir .. "/result.part", "w")
    out:write("ms\\t" .. (ms() - started) .. "\\n")
    out:write("admitted\\t" .. admitted .. "\\n")
    for why, n in pairs(refused) do out:write(n .. "\\t" .. why .. "\\n") end
    out:close()
    os.rename(dir .. "/result.part", dir .. "/result")
    wrk.thread:stop()
  end
end
`;

/** `bodies[i]` must be a JSON-RPC request with `"id":1`; `admittedAnswers[i]` the exact answer expected with id 1. */
export async function wrkSubmissions(
  url: string,
  bodies: readonly string[],
  admittedAnswers: readonly string[],
  clients: number,
  timeoutSeconds = 600,
): Promise<SubmissionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-submit-'));
  try {
    const withId = (text: string, i: number) => {
      if (!text.includes('"id":1,')) throw new Error(`a submission body or answer without "id":1: ${text.slice(0, 80)}`);
      return text.replace('"id":1,', `"id":${i + 1},`);
    };
    writeFileSync(join(dir, 'bodies'), bodies.map(withId).join('\n') + '\n');
    writeFileSync(join(dir, 'expected'), admittedAnswers.map(withId).join('\n') + '\n');
    writeFileSync(join(dir, 'submit.lua'), `local DIR = ${JSON.stringify(dir)}\n${LUA}`);
    const { result, generatorCpu } = await runUntilResult(dir, ['-t1', `-c${clients}`, `-d${timeoutSeconds}s`, '--timeout', '30s', '-s', join(dir, 'submit.lua'), url]);
    let ms = 0;
    let admitted = 0;
    const refusals = new Map<string, number>();
    for (const line of result.trim().split('\n')) {
      const [count, why] = line.split('\t') as [string, string];
      if (count === 'ms') ms = Number(why);
      else if (count === 'admitted') admitted = Number(why);
      else refusals.set(why, Number(count));
    }
    return { admitted, ms, refusals, generatorCpu };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs wrk until the script writes its result (wrk itself would run out its whole duration),
 * then stops it. Fails if wrk ends first.
 */
async function runUntilResult(dir: string, args: string[]): Promise<{ result: string; generatorCpu: number }> {
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit');
  const stopWatching = new AbortController();
  try {
    const appeared = (async () => {
      try {
        for await (const event of watch(dir, { signal: stopWatching.signal })) if (event.filename === 'result') return 'result';
      } catch {
        // Aborted: wrk ended first.
      }
      return 'aborted';
    })();
    const first = await Promise.race([appeared, exited.then(() => 'ended')]);
    if (first !== 'result') throw new Error(`wrk ended before every submission was answered:\n${output}`);
    const generatorCpu = cpuSeconds(child.pid!);
    return { result: readFileSync(join(dir, 'result'), 'utf8'), generatorCpu };
  } finally {
    stopWatching.abort();
    child.kill('SIGINT');
    await exited;
  }
}

import { startAnvil } from './dist/devnet/anvil.js';
import { startTap } from './dist/test/helpers/tap.js';
import { startTestIngress, testConfig } from './dist/test/helpers/ingress.js';
import { READ_METHODS, PROXIED_SVC_METHODS } from './dist/src/methods.js';
import { Wallet } from 'ethers';
import fs from 'node:fs';
const a = await startAnvil();
const tap = await startTap(a.url);
const ing = await startTestIngress(testConfig(tap.url));
const post = async (u, b) => (await fetch(u,{method:'POST',headers:{'content-type':'application/json'},body:b})).text();
const call = async (m, p) => JSON.parse(await post(a.url, JSON.stringify({jsonrpc:'2.0',id:1,method:m,params:p}))).result;
// seed like the test
const src = fs.readFileSync('test/e2e/transparency.test.ts','utf8');
const C='0x7dcd17433742f4c0ca53122ab541d0ba67fc27df', E='0x00000000000000000000000000000000000000000000000000000000656d6974', I='0x95b7276947f6331672b0c63eca28c1d39f25286d5e2793d6a487837ff1475ba0';
await call('anvil_setCode',[C,`0x602a6000527f${I.slice(2)}7f${E.slice(2)}60206000a200`]);
await call('anvil_setStorageAt',[C,'0x0','0x'+'2a'.padStart(64,'0')]);
const w = new Wallet('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'); const G=10n**9n;
for (let n=0;n<40;n++){ const tip=BigInt(n+1)*G;
 const f = n%4===0?{type:2,to:C,gasLimit:100000,maxFeePerGas:100n*G,maxPriorityFeePerGas:tip}:n%4===1?{type:0,to:'0xaa00000000000000000000000000000000000000',value:1n,gasLimit:21000,gasPrice:50n*G}:n%4===2?{type:1,to:'0xc1cadaffffffffffffffffffffffffffffffffff',value:2n,gasLimit:50000,gasPrice:50n*G,accessList:[{address:C,storageKeys:['0x'+'0'.repeat(64)]}]}:{type:2,data:`0x602a6000527f${E.slice(2)}60206000a100`,gasLimit:100000,maxFeePerGas:100n*G,maxPriorityFeePerGas:tip};
 await call('eth_sendRawTransaction',[await w.signTransaction({...f,chainId:8141,nonce:n})]); }
await new Promise(r=>setTimeout(r,300));
const cases = fs.readFileSync('test/fixtures/execution-apis-requests.jsonl','utf8').split('\n').filter(Boolean).map(JSON.parse);
const allowed = new Set([...READ_METHODS, ...PROXIED_SVC_METHODS]);
const first=[]; let nonTrivial=0, sameBody=0, n=0;
for (const c of cases) { if (!allowed.has(c.request.method) || c.request.method==='eth_feeHistory') continue; const b=JSON.stringify(c.request); tap.bodies.length=0; const t=await post(a.url,b); await post(ing.url,b); n++; if (tap.bodies[0]===b) sameBody++; first.push([c,t,b]); if (!/"result":(null|\[\]|"0x"|"0x0")\}$/.test(t) && !t.includes('"error"')) nonTrivial++; }
console.log({n, nonTrivial, sameBody});
await new Promise(r=>setTimeout(r,2100));
for (const [c,t,b] of first) { const t2=await post(a.url,b); if (t!==t2) console.log('DIFF', c.source, t.length, t2.length); }
if (process.argv[2]) for (const [c,t] of first) console.log(c.source, t.slice(0,160));
const fh = cases.find(c=>c.request.method==='eth_feeHistory'); console.log(await post(a.url, JSON.stringify(fh.request))); console.log(await post(ing.url, JSON.stringify(fh.request)));
for (const c of cases.filter(c=>c.request.method==='eth_sendRawTransaction')) console.log(c.source, (await post(ing.url, JSON.stringify(c.request))).slice(0,300));
await ing.shutdown(); await tap.close(); await a.stop();

import { secp256k1 } from '@noble/curves/secp256k1.js';
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cryptoBackend, nativeBackend, portableBackend, warmRecovery } from '../../protocol/crypto-backend.js';

const outcome = (run: () => Uint8Array) => {
  try {
    return Buffer.from(run()).toString('hex');
  } catch {
    return 'throws';
  }
};

describe('crypto backend: native where it loads, pure JS everywhere else', () => {
  const native = nativeBackend();
  const portable = portableBackend();

  it('hashes every length alike: keccak-256 of 0 to 300 bytes, then 5 KB', () => {
    for (const length of [...Array.from({ length: 301 }, (_, i) => i), 5_000]) {
      const bytes = randomBytes(length);
      expect(portable.keccak(bytes).toString('hex'), `${length} bytes`).to.equal(native.keccak(bytes).toString('hex'));
    }
    expect(portable.keccak(new Uint8Array(0)).toString('hex')).to.equal('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  });

  it('recovers the same key, or refuses alike, for valid and broken signatures (zero, past the order, no curve point, recovery 0-3)', () => {
    const ORDER = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');
    const cases: Array<[Uint8Array, number, Uint8Array]> = [];
    for (let i = 0; i < 20; i++) {
      const message = randomBytes(32);
      const made = secp256k1.sign(message, randomBytes(32), { prehash: false, format: 'recovered' });
      cases.push([made.subarray(1), made[0]!, message]);
    }
    // Random words: some are no signature at all, some recover some key.
    for (let i = 0; i < 40; i++) cases.push([randomBytes(64), i % 4, randomBytes(32)]);
    const digest = randomBytes(32);
    cases.push(
      [new Uint8Array(64), 0, digest],
      [Buffer.concat([ORDER, randomBytes(32)]), 1, digest],
      [Buffer.concat([randomBytes(32), ORDER]), 0, digest],
    );
    let recovered = 0;
    for (const [signature, recovery, message] of cases) {
      const expected = outcome(() => native.recover(signature, recovery, message));
      if (expected !== 'throws') recovered++;
      expect(outcome(() => portable.recover(signature, recovery, message))).to.equal(expected);
    }
    expect(recovered, 'cases that recover a key').to.be.at.least(20);
  });

  it('recovers the key of its warm-up signature (both ways), so warming up builds what a real recovery uses', () => {
    const signature = Buffer.from(
      '9d0bad576719d32ae76bedb34c774866673cbde3f4e12951555c9408e6ce774b2876e7102f204f6bfee26c967c3926ce702cf97d4b010062e193f763190f6776',
      'hex',
    );
    const key = Buffer.from(secp256k1.getPublicKey(new Uint8Array(32).fill(2), false)).toString('hex');
    for (const backend of [native, portable]) {
      expect(Buffer.from(backend.recover(signature, 0, new Uint8Array(32).fill(1))).toString('hex')).to.equal(key);
    }
    expect(() => warmRecovery()).to.not.throw();
  });

  it('runs native here (unless this run forces the fallback), and the fallback when SVC_PORTABLE_CRYPTO=1 forces it, saying why', () => {
    const forced = process.env.SVC_PORTABLE_CRYPTO === '1';
    expect(cryptoBackend).to.deep.equal(forced ? { kind: 'portable', why: 'SVC_PORTABLE_CRYPTO=1' } : { kind: 'native' });
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import('./dist/protocol/crypto-backend.js').then((m) => console.log(JSON.stringify(m.cryptoBackend)))",
      ],
      { env: { ...process.env, SVC_PORTABLE_CRYPTO: '1' }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(JSON.parse(child.stdout)).to.deep.equal({ kind: 'portable', why: 'SVC_PORTABLE_CRYPTO=1' });
  });
});

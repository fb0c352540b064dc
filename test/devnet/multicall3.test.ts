import { expect } from 'chai';
import { keccak256, toBeHex, Transaction } from 'ethers';
import { encodeFunctionData, decodeFunctionResult, multicall3Abi } from 'viem';
import { MULTICALL3_ADDRESS, MULTICALL3_DEPLOYMENT, placeMulticall3 } from '../../devnet/multicall3.js';
import { call } from '../../support/http.js';
import { DEV_ADDRESS } from '../../support/keys.js';
import { useAnvil } from '../helpers/el.js';

describe('devnet: Multicall3 placed at its canonical address', () => {
  const anvil = useAnvil();

  it('uses the published deployment: sender 0x05f3…63f2 at nonce 0, mined on Base under 0x07471a…4ed1', () => {
    const deployment = Transaction.from(MULTICALL3_DEPLOYMENT);
    expect(deployment.from).to.equal('0x05f32B3cC3888453ff71B01135B34FF8e41263F2');
    expect(deployment.nonce).to.equal(0);
    expect(deployment.chainId).to.equal(0n);
    expect(keccak256(MULTICALL3_DEPLOYMENT)).to.equal('0x07471adfe8f4ec553c1199f495be97fc8be8e0626ae307281c22534460184ed1');
  });

  it('sets the code the deployment creates (3,808 bytes) without mining a block, and it answers aggregate3 (a balance read)', async () => {
    const url = anvil.current.url;
    const head = await call<string>(url, 'eth_blockNumber');
    await placeMulticall3(url);
    const code = await call<string>(url, 'eth_getCode', [MULTICALL3_ADDRESS, 'latest']);
    expect((code.length - 2) / 2).to.equal(3_808);
    expect(await call<string>(url, 'eth_blockNumber')).to.equal(head);
    const data = encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      args: [
        [
          {
            target: MULTICALL3_ADDRESS,
            allowFailure: false,
            callData: encodeFunctionData({ abi: multicall3Abi, functionName: 'getEthBalance', args: [DEV_ADDRESS] }),
          },
        ],
      ],
    });
    const [result] = decodeFunctionResult({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      data: await call(url, 'eth_call', [{ to: MULTICALL3_ADDRESS, data }, 'latest']),
    });
    expect(result).to.deep.equal({ success: true, returnData: toBeHex(10_000n * 10n ** 18n, 32) });
  });
});

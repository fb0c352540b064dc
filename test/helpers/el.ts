/** A real anvil for a suite: started in before(), stopped in after(). */
import { startAnvil, type Anvil, type AnvilOptions } from '../../devnet/anvil.js';

export function useAnvil(options: AnvilOptions = {}): { readonly current: Anvil } {
  const holder = {} as { current: Anvil };
  before(async () => {
    holder.current = await startAnvil(options);
  });
  after(async () => {
    await holder.current?.stop();
  });
  return holder;
}

/** anvil's first default account (a public, well-known development key). */
export const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const DEV_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

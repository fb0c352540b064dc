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

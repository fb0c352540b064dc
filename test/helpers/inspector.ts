/**
 * A full garbage collection inside a child started with `--inspect=127.0.0.1:0`, through the
 * DevTools protocol, so heap figures compare live objects rather than the collector's timing.
 */
import { WebSocket } from 'undici';

/** The DevTools WebSocket address that Node prints on stderr when started with `--inspect`. */
export function inspectorUrl(lines: readonly string[]): string {
  for (const line of lines) {
    const found = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(line);
    if (found) return found[1]!;
  }
  throw new Error('the child printed no inspector address (started without --inspect=127.0.0.1:0?)');
}

export async function collectGarbage(url: string): Promise<void> {
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`inspector at ${url} refused the connection`)), { once: true });
    });
    const done = new Promise<void>((resolve, reject) => {
      socket.addEventListener('message', (event) => {
        const reply = JSON.parse(String(event.data)) as { id?: number; error?: { message: string } };
        if (reply.id !== 1) return;
        if (reply.error) reject(new Error(reply.error.message));
        else resolve();
      });
    });
    socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    await done;
  } finally {
    socket.close();
  }
}

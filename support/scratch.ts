/**
 * Scratch directories for a test or bench process (configs, scripts, a server's files), removed
 * when the process exits: a run of `npm test` would otherwise leave hundreds behind in the
 * system's temporary directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new directory under the system's temporary one, named `prefix-XXXXXX`. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  if (made.length === 0) process.once('exit', removeAll);
  made.push(dir);
  return dir;
}

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

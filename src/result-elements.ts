/**
 * The elements of a JSON-RPC answer's `result` array as the texts the EL wrote, found in slices
 * (log-feed.ts): a block's `eth_getLogs` answer can be 14 MB or more, and one `JSON.parse` of it
 * holds the event loop for a quarter of a second. Here the text is scanned a slice at a time,
 * yielding between slices, and each element is left for the caller to `JSON.parse` alone (a few
 * hundred bytes); the element's text is kept as the EL wrote it.
 *
 * The scan only tracks strings (with their escapes) and nesting to find where elements end; it
 * does not validate: an element that is not JSON fails its own `JSON.parse`. Anything but an
 * object with a `result` array (an error answer, a result of another type) gives undefined, and
 * the caller parses the answer whole.
 */
const CHARS_PER_SLICE = 256 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export async function resultElements(text: string): Promise<string[] | undefined> {
  const scan = new Scanner(text);
  const start = scan.resultArray();
  if (start === undefined) return undefined;
  const elements: string[] = [];
  let from = start + 1;
  let depth = 0;
  let sliceEnd = from + CHARS_PER_SLICE;
  for (let i = from; i < text.length; i++) {
    if (i >= sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = i + CHARS_PER_SLICE;
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = scan.stringEnd(i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || (c === CLOSE_BRACKET && depth > 0)) {
      depth--;
    } else if (depth === 0 && (c === COMMA || c === CLOSE_BRACKET)) {
      const element = text.slice(from, i).trim();
      if (element.length > 0) elements.push(element);
      if (c === CLOSE_BRACKET) return elements;
      from = i + 1;
    }
  }
  return undefined;
}

/**
 * Where the value of the answer's top-level member `name` starts and ends (a scalar: a number, a
 * string, null, true or false), when the answer is an object with one: cache.ts splices a
 * cached answer's `id`.
 */
export function scalarMember(text: string, name: string): { readonly start: number; readonly end: number } | undefined {
  const scan = new Scanner(text);
  const start = scan.memberValue(name);
  if (start === undefined) return undefined;
  if (text.charCodeAt(start) === QUOTE) return { start, end: scan.stringEnd(start) + 1 };
  let end = start;
  while (end < text.length && !/[,}\s]/.test(text[end]!)) end++;
  return end > start ? { start, end } : undefined;
}

/** Where the value of the answer's top-level member `result` starts, when there is one. */
export function resultStart(text: string): number | undefined {
  return new Scanner(text).memberValue('result');
}

class Scanner {
  constructor(private readonly text: string) {}

  /** Where the `result` member's array opens, when the answer is an object with one. */
  resultArray(): number | undefined {
    const value = this.memberValue('result');
    return value !== undefined && this.text.charCodeAt(value) === OPEN_BRACKET ? value : undefined;
  }

  /** Where the value of the top-level member `name` starts. */
  memberValue(name: string): number | undefined {
    const text = this.text;
    let depth = 0;
    let expectKey = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        const end = this.stringEnd(i);
        if (depth === 1 && expectKey && text.slice(i + 1, end) === name) {
          const colon = this.skipSpace(end + 1);
          if (text.charCodeAt(colon) !== COLON) return undefined;
          const value = this.skipSpace(colon + 1);
          return value < text.length ? value : undefined;
        }
        expectKey = false;
        i = end;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++;
        expectKey = c === OPEN_BRACE && depth === 1;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
      } else if (c === COMMA && depth === 1) {
        expectKey = true;
      }
    }
    return undefined;
  }

  /** The index of the quote that closes the string opening at `open`. */
  stringEnd(open: number): number {
    const text = this.text;
    for (let i = open + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) return i;
    }
    return text.length;
  }

  private skipSpace(from: number): number {
    let i = from;
    while (i < this.text.length && /\s/.test(this.text[i]!)) i++;
    return i;
  }
}

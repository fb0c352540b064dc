/**
 * CORS for browser dapps: simple responses carry Access-Control-Allow-Origin for allowed
 * origins; preflights are answered here (204) and never reach the chain.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Cors {
  /** Adds the allow-origin header to a response when the request's origin is allowed. */
  decorate(req: IncomingMessage, res: ServerResponse): void;
  preflight(req: IncomingMessage, res: ServerResponse): void;
}

/** Browsers cap this anyway (Chromium: 2 hours); it saves a preflight per call. */
const PREFLIGHT_MAX_AGE_S = 7200;
const HEADER_LIST = /^[A-Za-z0-9-]+(?:\s*,\s*[A-Za-z0-9-]+)*$/;

export function createCors(allowedOrigins: readonly string[]): Cors {
  const any = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins);
  const decorate = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin === undefined) return;
    if (any) {
      res.setHeader('access-control-allow-origin', '*');
    } else {
      res.setHeader('vary', 'Origin');
      if (allowed.has(origin)) res.setHeader('access-control-allow-origin', origin);
    }
  };
  return {
    decorate,
    preflight(req, res) {
      decorate(req, res);
      if (res.hasHeader('access-control-allow-origin')) {
        const requested = req.headers['access-control-request-headers'];
        res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
        res.setHeader(
          'access-control-allow-headers',
          typeof requested === 'string' && HEADER_LIST.test(requested) ? requested : 'Content-Type, Authorization',
        );
        res.setHeader('access-control-max-age', String(PREFLIGHT_MAX_AGE_S));
      }
      res.writeHead(204, { 'content-length': '0' }).end();
    },
  };
}

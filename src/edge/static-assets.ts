import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

// Files the gateway serves to browsers itself (GraphiQL's, the console's): each URL names its content (a hash in
// the file name), so a browser may keep it for good and a new version gets a new URL. One answer for all of them:
// immutable caching, an ETag for revalidation, gzip when the client takes it.

export interface Asset {
  readonly path: string;
  readonly type: string;
  readonly body: Uint8Array<ArrayBuffer>;
  readonly etag: string;
  /** The body gzip-compressed, made on first use and kept. */
  gzipped(): Promise<Uint8Array<ArrayBuffer>>;
}

const compress = promisify(gzip);

/** An asset served at `path` (which must change whenever the body does). */
export function makeAsset(path: string, type: string, body: Uint8Array<ArrayBuffer>, digest = sha256(body)): Asset {
  let gzipped: Promise<Uint8Array<ArrayBuffer>> | undefined;
  return { path, type, body, etag: `"${digest.slice(0, 32)}"`, gzipped: () => (gzipped ??= compress(body)) };
}

export const sha256 = (body: Uint8Array) => createHash('sha256').update(body).digest('hex');

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Whether Accept-Encoding allows gzip: its own weight, else that of `*`; a weight of 0 refuses. */
function acceptsGzip(acceptEncoding: string | null): boolean {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  return (weights.get('gzip') ?? weights.get('*') ?? 0) > 0;
}

/** The answer to a GET or HEAD of an asset: 304 when the client holds this version, else the body (gzipped if it may). */
export async function assetResponse(request: Request, found: Asset): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': found.type,
    'cache-control': IMMUTABLE,
    etag: found.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
  };
  if (request.headers.get('if-none-match')?.split(',').some((tag) => tag.trim() === found.etag)) return new Response(null, { status: 304, headers });
  let body = found.body;
  if (acceptsGzip(request.headers.get('accept-encoding'))) {
    body = await found.gzipped();
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = String(body.byteLength);
  return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers });
}

/**
 * Assets loaded on first use and kept; a load that failed, or whose result `keep` rejects (not built yet), is tried
 * again on the next use instead of being remembered.
 */
export function loadedOnce<T>(load: () => Promise<T>, keep: (value: T) => boolean = () => true): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().then(
      (value) => {
        if (!keep(value)) loading = undefined;
        return value;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
}

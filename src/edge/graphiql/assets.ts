import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { makeAsset, sha256, type Asset } from '../static-assets.js';
import { codeFile } from '../../kit/project-root.js';

export type { Asset };

// The files the GraphiQL page loads, all served by the gateway itself so that the page works with no outside
// network: Yoga's self-contained GraphiQL bundle (@graphql-yoga/render-graphiql: script, styles, favicon and the
// three Monaco workers), graphql-ws's browser build, and our client script. Each URL carries a hash of its content,
// so browsers may keep it for good and a new version gets a new URL; the 9 MB are fetched once, not with every page.

/** Where the assets are served. */
export const ASSET_PREFIX = '/graphiql/';

/** The URL of each asset the page names. */
export interface AssetUrls {
  readonly script: string;
  readonly styles: string;
  readonly favicon: string;
  readonly graphqlWs: string;
  readonly client: string;
  /** Monaco's workers by the label Monaco asks for. */
  readonly workers: { readonly editorWorkerService: string; readonly json: string; readonly graphql: string };
}

export interface GraphiQLAssets {
  readonly urls: AssetUrls;
  readonly byPath: ReadonlyMap<string, Asset>;
}

const JS = 'text/javascript; charset=utf-8';

function asset(name: string, extension: string, type: string, body: Uint8Array<ArrayBuffer>): Asset {
  const digest = sha256(body);
  return makeAsset(`${ASSET_PREFIX}${name}.${digest.slice(0, 12)}.${extension}`, type, body, digest);
}

/** `data:<type>;base64,<data>` -> its bytes. */
function dataUrlBytes(url: string): Uint8Array<ArrayBuffer> {
  const match = /^data:[^;,]+;base64,(.*)$/s.exec(url);
  if (!match) throw new Error('the GraphiQL favicon is not a base64 data URL');
  return Buffer.from(match[1]!, 'base64');
}

/** Reads every asset (about 9 MB; the gateway calls this on the first GraphiQL request, not at start). */
export async function loadGraphiQLAssets(): Promise<GraphiQLAssets> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const require = createRequire(import.meta.url);
  const graphqlWsUmd = join(dirname(require.resolve('graphql-ws')), '..', 'umd', 'graphql-ws.min.js');
  const [graphqlWs, client] = await Promise.all([readFile(graphqlWsUmd), readFile(codeFile('edge/graphiql/client.browser.js'))]);
  const script = asset('graphiql', 'js', JS, Buffer.from(bundle.js));
  const styles = asset('graphiql', 'css', 'text/css; charset=utf-8', Buffer.from(bundle.css));
  const favicon = asset('favicon', 'ico', 'image/x-icon', dataUrlBytes(bundle.favicon));
  const ws = asset('graphql-ws', 'js', JS, graphqlWs);
  const clientScript = asset('client', 'js', JS, client);
  const editorWorkerService = asset('editor.worker', 'js', JS, Buffer.from(bundle.editorWorkerService));
  const json = asset('json.worker', 'js', JS, Buffer.from(bundle.jsonWorker));
  const graphql = asset('graphql.worker', 'js', JS, Buffer.from(bundle.graphqlWorker));
  const all = [script, styles, favicon, ws, clientScript, editorWorkerService, json, graphql];
  return {
    urls: {
      script: script.path,
      styles: styles.path,
      favicon: favicon.path,
      graphqlWs: ws.path,
      client: clientScript.path,
      workers: { editorWorkerService: editorWorkerService.path, json: json.path, graphql: graphql.path },
    },
    byPath: new Map(all.map((a) => [a.path, a])),
  };
}

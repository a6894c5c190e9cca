import { LRUCache } from 'lru-cache';

// The JSON answer Yoga would give a request, worked out from its Accept header without asking Yoga: the node:http
// edge answers only what Yoga would answer with JSON (an event stream or multipart goes on to Yoga's edge).

const JSON_TYPES = ['application/graphql-response+json', 'application/json'];

/**
 * The media type Yoga's result processors answer a single result with, when that is one of the JSON types (the
 * regular processor comes last in Yoga's list and the last match wins); undefined when Yoga would pick another or
 * refuse (406). The Accept header is read as Yoga reads it: utf-8 charsets only, later entries first, wildcards.
 */
export function jsonAnswerType(accept: string | null): string | undefined {
  // Clients send few distinct Accept headers, each on every request: the verdicts of the last few hundred are kept
  // ('' for none: the cache holds no undefined).
  const key = accept ?? '';
  let chosen = answerTypes.get(key);
  if (chosen === undefined) answerTypes.set(key, (chosen = answerTypeOf(accept) ?? ''));
  return chosen || undefined;
}

const answerTypes = new LRUCache<string, string>({ max: 256 });

function answerTypeOf(accept: string | null): string | undefined {
  let chosen: string | undefined;
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',').reverse();
  for (const entry of asked) {
    const [mediaType, ...params] = entry.split(';');
    if (!mediaType) continue;
    const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [pre, suf] = mediaType.split('/');
    for (const offered of JSON_TYPES) {
      const [offeredPre, offeredSuf] = offered.split('/');
      if ((pre === '*' || pre === offeredPre) && (suf === '*' || suf === offeredSuf)) chosen = offered;
    }
  }
  return chosen;
}

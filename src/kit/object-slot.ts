// State that belongs to a short-lived object (a request, an operation's context, a row read for one request, one
// subscription event) is kept on that object, not in a WeakMap keyed by it. Every entry of a WeakMap is an ephemeron
// that V8's young-generation collections must walk, and an entry whose value leads back to its key (a request's
// caller look-up, its operation, the request it was remade from) keeps the key and all it holds alive through them:
// each such request was promoted to the old generation and freed only by a full collection (docs/performance.md,
// "Per-request state without WeakMaps"). Long-lived keys (a schema, a document, a client) are what a WeakMap is for.

/** One kind of state on objects of type K. */
export interface ObjectSlot<K extends object, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
}

type Holder = Record<symbol, unknown>;

// Every slot of an object lives in one holder object, under one property that is not enumerable: a spread,
// Object.assign, Object.keys and JSON do not see it (a row can still be copied or serialized as it was read), and
// defining a property that way is slow enough to be done once per object, not once per slot.
const HOLDER = Symbol('object slots');

function holderOf(key: object): Holder | undefined {
  return Object.hasOwn(key, HOLDER) ? (key as Record<symbol, Holder>)[HOLDER] : undefined;
}

/** A slot on objects of type K. An object that cannot take a property (frozen, sealed) keeps its state in a WeakMap. */
export function objectSlot<K extends object, V>(name: string): ObjectSlot<K, V> {
  const symbol = Symbol(name);
  const closed = new WeakMap<K, V>();
  return {
    get(key) {
      const holder = holderOf(key);
      return holder ? (holder[symbol] as V | undefined) : closed.get(key);
    },
    set(key, value) {
      let holder = holderOf(key);
      if (!holder) {
        if (!Object.isExtensible(key)) return void closed.set(key, value);
        holder = {};
        Object.defineProperty(key, HOLDER, { value: holder });
      }
      holder[symbol] = value;
    },
  };
}

// Arguments the subscriptions that follow one thing's state share.

/** `current: true`: a view built from the subscription alone misses no change (reading beside it can miss one). */
export const CURRENT_ARG = {
  description:
    'The first event is the state when the subscription starts, read once it is listening, so that no change made meanwhile is missed (default false: changes only).',
} as const;

/** Builds console/dist/ unless (`ifStale`) it was built from the same inputs; false when a step failed. */
export function buildConsole(options?: { ifStale?: boolean }): boolean;

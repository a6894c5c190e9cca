/** A start-up that cannot go on, said in one line for the operator (src/main.ts prints the message alone). */
export class StartupError extends Error {}

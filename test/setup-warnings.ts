import { dropWasmImportWarning } from '../src/cli/wasm-warning.js';

// Test workers start gateways in-process, not through src/main.ts: drop the same one warning there, so the run's
// output shows only warnings that mean something.
dropWasmImportWarning();

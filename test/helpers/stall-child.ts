import { startStallWatchdog } from '../../src/db/stall-watchdog.js';

// A process whose main thread blocks for good, as PGlite spinning in WebAssembly does, under the stall watchdog of
// the embedded database (argv: the directory whose disk it reads). Prints "blocking" just before it blocks.

startStallWatchdog({ dir: process.argv[2]!, stallMs: 1000, lowBytes: 17 * 1024 * 1024 });
setTimeout(() => {
  process.stdout.write('blocking\n', () => {
    for (;;) {
      /* never yields */
    }
  });
}, 200);

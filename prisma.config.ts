import { defineConfig } from 'prisma/config';

// The CLI is used only for `generate`; migrations run through the WebAssembly schema engine (src/db/migrations.ts).
export default defineConfig({
  schema: 'prisma/schema',
  migrations: { path: 'prisma/migrations' },
});

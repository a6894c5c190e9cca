import { defineConfig, type Plugin } from 'vite';
import { localAppConfig, localPorts } from './ports.js';

// `vite build` writes the app to dist/ with a config.json for this machine beside it (ports.ts: the gateway and
// dev-provider.ts on loopback), to be replaced per deployment; `vite preview` serves it at the address the provider
// sends the browser back to. `vite` (development) answers /config.json the same.
const configJson = (): string => `${JSON.stringify(localAppConfig(), null, 2)}\n`;

const localConfigJson: Plugin = {
  name: 'local-config-json',
  generateBundle() {
    this.emitFile({ type: 'asset', fileName: 'config.json', source: configJson() });
  },
  configureServer(server) {
    server.middlewares.use('/config.json', (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(configJson());
    });
  },
};

export default defineConfig({
  root: import.meta.dirname,
  build: { outDir: 'dist', emptyOutDir: true },
  preview: { host: '127.0.0.1', port: localPorts().app, strictPort: true },
  plugins: [localConfigJson],
});

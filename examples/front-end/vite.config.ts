import { defineConfig } from 'vite';

// `vite build` writes the app to dist/ (public/config.json copied beside it, to be replaced per deployment);
// `vite preview` serves it at the address the provider sends the browser back to.
export default defineConfig({
  root: import.meta.dirname,
  build: { outDir: 'dist', emptyOutDir: true },
  preview: { host: '127.0.0.1', port: 4173, strictPort: true },
});

import { defineConfig } from 'vite';

// The console is served by the gateway under /console/ (src/edge/plugins/use-console.ts); every asset is a file of
// dist/ whose name carries a hash of its content, so the gateway may let browsers keep it for good.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  // JSX through Vite's own transformer (React's automatic runtime); no plugin needed for a production build.
  oxc: { jsx: { runtime: 'automatic' } },
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline scripts or styles: the page's Content-Security-Policy allows only the gateway's own files.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});

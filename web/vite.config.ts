import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built ahead of time into dist/web (npm run build); warren serve serves it on its own port.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
});

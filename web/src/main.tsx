import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { Router } from './lib/router.tsx';
import { initialTheme } from './lib/theme.ts';
import './styles.css';

document.documentElement.dataset.theme = initialTheme();

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <Router>
      <App />
    </Router>,
  );
}

import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { Router } from './lib/router.tsx';
import './styles.css';

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <Router>
      <App />
    </Router>,
  );
}
